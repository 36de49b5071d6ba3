package events

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A reader is one document's options and what it learns of it. Readers
// are pooled: each holds the library's cache of which of its functions
// applies to which Go type, which is costly to rebuild.
type reader struct {
	opts jsonv2.Options
	// present holds the members read, by the address of the field each
	// went into; a struct's own are those after the mark taken when it
	// began.
	present []any
	self    any // the struct that value has handed to the library
}

var readers = sync.Pool{New: func() any { return newReader() }}

func newReader() *reader {
	r := &reader{}
	r.opts = jsonv2.JoinOptions(
		jsonv2.RejectUnknownMembers(true),
		jsontext.AllowDuplicateNames(false), // the defaults, which the contract rests on
		jsontext.AllowInvalidUTF8(false),
		jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
			jsonv2.UnmarshalFromFunc(r.value), // first: it sees every value
			jsonv2.UnmarshalFromFunc(readInteger[int]),
			jsonv2.UnmarshalFromFunc(readInteger[int64]),
			jsonv2.UnmarshalFromFunc(readInteger[uint64]),
			jsonv2.UnmarshalFromFunc(readFloat64),
			jsonv2.UnmarshalFromFunc(readVector),
			jsonv2.UnmarshalFromFunc(readFloat32),
			jsonv2.UnmarshalFromFunc(readTime),
		)),
	)
	return r
}

// read decodes b into v, which must be a pointer. Every error is a
// *FieldError: one with the text names whole ("data", "event"); one with
// a value names its path under prefix ("data.turns[2].role", or "id"
// for an attribute).
func read(b []byte, whole, prefix string, v any) error {
	r := readers.Get().(*reader)
	defer func() {
		clear(r.present)
		r.present, r.self = r.present[:0], nil
		readers.Put(r)
	}()
	if err := jsonv2.Unmarshal(b, v, r.opts); err != nil {
		return translate(whole, prefix, err)
	}
	return nil
}

// value refuses null and records a member's presence, then lets the
// library (or the functions after it) read the value. It reads a struct
// of this package itself, by the library, so as to check its required
// members as soon as it is read, before a growing list moves it.
func (r *reader) value(dec *jsontext.Decoder, v any) error {
	if v == r.self {
		r.self = nil
		return errors.ErrUnsupported // the call below
	}
	if dec.PeekKind() == 'n' {
		if _, raw := v.(*json.RawMessage); !raw {
			return problem("must be " + jsonKindOf(reflect.TypeOf(v).Elem()) + ", not null")
		}
	}
	if kind, _ := dec.StackIndex(dec.StackDepth()); kind == '{' {
		r.present = append(r.present, v)
	}
	fs := fieldsOf(reflect.TypeOf(v).Elem())
	if fs == nil {
		return errors.ErrUnsupported // read on
	}
	mark := len(r.present)
	r.self = v
	if err := jsonv2.UnmarshalDecode(dec, v); err != nil {
		return err
	}
	err := missing(reflect.ValueOf(v).Elem(), fs, r.present[mark:])
	r.present = r.present[:mark]
	return err
}

// missing finds a required member that the struct v lacks: one that
// kept its zero value and was not in the document.
func missing(v reflect.Value, fs []field, present []any) error {
	for _, f := range fs {
		if fv := v.Field(f.index); f.required && fv.IsZero() && !slices.Contains(present, fv.Addr().Interface()) {
			return fieldErr(f.name, "required")
		}
	}
	return nil
}

// problem is what a reading function found wrong with a value; translate
// names the value's path.
type problem string

func (p problem) Error() string { return string(p) }

// readInteger reads a whole number, however written, exactly.
func readInteger[T int | int64 | uint64](dec *jsontext.Decoder, v *T) error {
	lit, err := readNumber(dec, "an integer")
	if err != nil {
		return err
	}
	n, isInt, fits := intValue(lit)
	if !isInt {
		return problem("must be an integer, not " + quote(lit))
	}
	if !fits || int64(T(n)) != n || (T(n) < 0) != (n < 0) {
		return problem("is out of range: " + quote(lit))
	}
	*v = T(n)
	return nil
}

// readFloat64 reads a number, and refuses one that the float64 puts in
// [0, 1] but that is outside it as written: a fraction is compared
// exactly, as JSON Schema compares it.
func readFloat64(dec *jsontext.Decoder, v *float64) error {
	lit, err := readNumber(dec, "a number")
	if err != nil {
		return err
	}
	// Rounding can carry a number onto 0 or 1, but not past them.
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || (f == 0 || f == 1) && !inUnitInterval(lit) {
		return problem("must be a number from 0 to 1, not " + quote(lit))
	}
	*v = f
	return nil
}

// readFloat32 reads a number within float32's range, rounded as strconv
// rounds it, which is how encoding/json writes and reads a float32.
func readFloat32(dec *jsontext.Decoder, v *float32) error {
	lit, err := readNumber(dec, "a number")
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(lit, 32)
	if err != nil || math.IsInf(f, 0) {
		return problem("is outside the range of a float32: " + quote(lit))
	}
	*v = float32(f)
	return nil
}

// readVector reads a vector's components. Vectors are most of a
// rebuild's bytes, and a plain array of numbers, split on its commas, is
// read several times faster than value by value; anything else is read
// value by value, to name the element that is wrong.
func readVector(dec *jsontext.Decoder, v *[]float32) error {
	if dec.PeekKind() != '[' {
		return errors.ErrUnsupported
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	inner := bytes.TrimSpace(raw[1 : len(raw)-1])
	if bytes.ContainsAny(inner, `"[]{}ntf`) {
		// Not only numbers: the library reads it and names the element.
		var slow []float32
		if err := jsonv2.Unmarshal(raw, &slow, vectorOptions); err != nil {
			return translate("", "", err)
		}
		*v = slow
		return nil
	}
	out := make([]float32, 0, bytes.Count(inner, []byte{','})+1)
	for len(inner) > 0 {
		lit, rest, _ := bytes.Cut(inner, []byte{','})
		inner = rest
		s := string(bytes.TrimSpace(lit))
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || math.IsInf(f, 0) {
			return within(at("", len(out)), problem("is outside the range of a float32: "+quote(s)))
		}
		out = append(out, float32(f))
	}
	*v = out
	return nil
}

var vectorOptions = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(readFloat32))

func readTime(dec *jsontext.Decoder, v *time.Time) error {
	if kind := dec.PeekKind(); kind != '"' {
		return skipWith(dec, problem("must be a string, not "+kindName(kind)))
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	t, err := parseTime(tok.String())
	if err != nil {
		return err
	}
	*v = t
	return nil
}

// readNumber returns the literal of the number next in dec.
func readNumber(dec *jsontext.Decoder, want string) (string, error) {
	if kind := dec.PeekKind(); kind != '0' {
		return "", skipWith(dec, problem("must be "+want+", not "+kindName(kind)))
	}
	tok, err := dec.ReadToken()
	return tok.String(), err
}

// skipWith skips the value next in dec, so that the library can name its
// path, and returns p.
func skipWith(dec *jsontext.Decoder, p problem) error {
	if err := dec.SkipValue(); err != nil {
		return err
	}
	return p
}

// translate turns the library's error into a *FieldError naming the
// field: the path into the document for a problem with a value, root
// for one with the text.
func translate(whole, prefix string, err error) error {
	var se *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		unknown := errors.Is(se.Err, jsonv2.ErrUnknownName)
		f := cmp.Or(pathOf(prefix, se.JSONPointer, unknown), whole)
		var p problem
		var fe *FieldError
		switch {
		case errors.As(se.Err, &fe):
			return within(f, fe)
		case errors.As(se.Err, &p):
			return fieldErr(f, string(p))
		case unknown:
			return fieldErr(f, "unknown field")
		case se.GoType != nil && se.JSONKind != 0:
			return fieldErr(f, "must be "+jsonKindOf(se.GoType)+", not "+kindName(se.JSONKind))
		case se.Err != nil:
			return fieldErr(f, se.Err.Error())
		}
		return fieldErr(f, "cannot be read")
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return fieldErr(cmp.Or(pathOf(prefix, syn.JSONPointer, true), whole), "appears twice")
	case errors.As(err, &syn):
		return fieldErr(whole, fmt.Sprintf("invalid JSON at byte %d: %v", syn.ByteOffset, syn.Err))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fieldErr(whole, "invalid JSON: unexpected end of input")
	}
	return fieldErr(whole, "invalid JSON: "+err.Error())
}

// pathOf writes a JSON pointer as a path: data.turns[2].role. A token of
// digits is an array index, for no member of the contract is named so;
// but the last token of an unknown or repeated member is its name.
func pathOf(root string, ptr jsontext.Pointer, lastIsName bool) string {
	path, toks := root, slices.Collect(ptr.Tokens())
	for i, tok := range toks {
		if _, err := strconv.ParseUint(tok, 10, 64); err == nil && !(lastIsName && i == len(toks)-1) {
			path += "[" + tok + "]"
			continue
		}
		path = join(path, tok)
	}
	return path
}

// join names a key inside path: a plain key as .key, any other as ["key"],
// so a hostile key cannot make the path ambiguous.
func join(path, key string) string {
	plain := key != ""
	for _, c := range key {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// within puts the field of err, a *FieldError relative to a value, under
// the value's path.
func within(path string, err error) error {
	var p problem
	if errors.As(err, &p) {
		return fieldErr(path, string(p))
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	switch {
	case fe.Field == "":
		fe.Field = path
	case path != "" && fe.Field[0] != '[':
		fe.Field = path + "." + fe.Field
	default:
		fe.Field = path + fe.Field
	}
	return fe
}

// at is the path of a list's element.
func at(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]" }

func jsonKindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time](), t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return "an array"
	}
	return "an object"
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "invalid JSON"
}

// intValue reads a JSON number literal exactly: isInt says whether it is a
// whole number (1.0 and 1e2 are, as in JSON Schema) and fits whether that
// number is within int64.
func intValue(lit string) (n int64, isInt, fits bool) {
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return n, true, true // the common case: plain digits
	}
	r, zero, expSign := exact(lit)
	switch {
	case zero:
		return 0, true, true
	case r == nil:
		return 0, expSign > 0, false
	case !r.IsInt():
		return 0, false, false
	case !r.Num().IsInt64():
		return 0, true, false
	}
	return r.Num().Int64(), true, true
}

// inUnitInterval reports whether a JSON number literal is from 0 to 1,
// exactly.
func inUnitInterval(lit string) bool {
	r, zero, expSign := exact(lit)
	switch {
	case zero:
		return true // zero, or minus zero
	case r == nil:
		return expSign < 0 && !strings.HasPrefix(lit, "-")
	}
	return r.Sign() >= 0 && r.Cmp(big.NewRat(1, 1)) <= 0
}

// exact reads a JSON number literal as a rational. An exponent past
// ±1000, beyond every range of the contract and costly to expand, is
// not: r is nil, and expSign says whether the number is huge or tiny.
func exact(lit string) (r *big.Rat, zero bool, expSign int) {
	if mant, e, ok := strings.Cut(strings.ToLower(lit), "e"); ok {
		if n, err := strconv.Atoi(e); err != nil || n > 1000 || n < -1000 {
			expSign = 1
			if strings.HasPrefix(e, "-") {
				expSign = -1
			}
			return nil, strings.Trim(mant, "-0.") == "", expSign
		}
	}
	r, ok := new(big.Rat).SetString(lit)
	return r, !ok || r.Sign() == 0, 0
}
