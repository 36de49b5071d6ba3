package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// reader walks a JSON document token by token so that every problem can be
// reported with the path of the value it is in. encoding/json's struct
// decoding cannot: it names no path for an unknown field, keeps the last of
// two duplicate keys without a word, and rejects 1.0 as an int where JSON
// Schema calls it an integer.
//
// A reader works in one of two modes. newReader's walks encoding/json's
// tokenizer and names every problem. newScanner's reads the bytes itself
// (jsonscan.go), several times faster, but only well-formed text that it
// is sure encoding/json reads the same way: on anything else, and on any
// problem, it stops with errRescan and names nothing, and the caller
// reads the document again in the first mode (see decodeTwice). So a
// document is accepted, with the same values, or refused, with the same
// error, as by the first mode alone.
type reader struct {
	dec  *json.Decoder // nil: the scanner
	root string        // the field named for a problem at the top level

	b   []byte // the scanner's document
	off int    // the scanner's position in b
}

func newReader(b []byte, root string) *reader {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return &reader{dec: dec, root: root}
}

// decodeTwice reads b with the scanner and, when that stops, with
// encoding/json's tokenizer after checkText, so that every refusal is
// worded as before. read must build its result afresh on each call.
func decodeTwice[T any](b []byte, root string, read func(r *reader) (T, error)) (T, error) {
	if v, err := readOnce(newScanner(b, root), read); err == nil {
		return v, nil
	}
	var zero T
	if err := checkText(b, root); err != nil {
		return zero, err
	}
	v, err := readOnce(newReader(b, root), read)
	if err != nil {
		return zero, err
	}
	return v, nil
}

// readOnce reads one value with r and checks that nothing follows it.
func readOnce[T any](r *reader, read func(r *reader) (T, error)) (T, error) {
	v, err := read(r)
	if err == nil {
		err = r.end()
	}
	return v, err
}

func (r *reader) field(path string) string {
	if path == "" {
		return r.root
	}
	return path
}

func (r *reader) token(path string) (json.Token, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.syntax(path, err)
	}
	return tok, nil
}

func (r *reader) syntax(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fieldErr(r.field(path), "invalid JSON: unexpected end of input")
	case errors.As(err, &se):
		return fieldErr(r.field(path), fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error()))
	}
	return fieldErr(r.field(path), "invalid JSON: "+err.Error())
}

// object reads an object, calling value for each key; value must consume
// the key's value. A repeated key is an error: parsers disagree on which
// copy wins, and the contract must mean one thing.
func (r *reader) object(path string, value func(key, path string) error) error {
	if r.dec == nil {
		return r.scanObject(value)
	}
	tok, err := r.token(path)
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return mustBe(r.field(path), "an object", tok)
	}
	seen := make(map[string]bool)
	for r.dec.More() {
		tok, err := r.token(path)
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder only yields string keys inside an object
		p := join(path, key)
		if seen[key] {
			return fieldErr(p, "appears twice")
		}
		seen[key] = true
		if err := value(key, p); err != nil {
			return err
		}
	}
	_, err = r.token(path) // '}'
	return err
}

func (r *reader) array(path string, elem func(i int, path string) error) error {
	if r.dec == nil {
		return r.scanArray(elem)
	}
	tok, err := r.token(path)
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return mustBe(r.field(path), "an array", tok)
	}
	for i := 0; r.dec.More(); i++ {
		if err := elem(i, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	_, err = r.token(path) // ']'
	return err
}

func (r *reader) str(path string) (string, error) {
	if r.dec == nil {
		return r.scanString()
	}
	tok, err := r.token(path)
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", mustBe(r.field(path), "a string", tok)
	}
	return s, nil
}

func (r *reader) boolean(path string) (bool, error) {
	if r.dec == nil {
		return r.scanBool()
	}
	tok, err := r.token(path)
	if err != nil {
		return false, err
	}
	b, ok := tok.(bool)
	if !ok {
		return false, mustBe(r.field(path), "a boolean", tok)
	}
	return b, nil
}

// integer reads a number that is a whole number in [lo, hi].
func (r *reader) integer(path string, lo, hi int64) (int64, error) {
	if r.dec == nil {
		return r.scanInteger(lo, hi)
	}
	tok, err := r.token(path)
	if err != nil {
		return 0, err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return 0, mustBe(r.field(path), "an integer", tok)
	}
	n, isInt, fits := intValue(string(num))
	if !isInt {
		return 0, fieldErr(r.field(path), "must be an integer, not "+quote(string(num)))
	}
	if !fits || n < lo || n > hi {
		return 0, fieldErr(r.field(path), fmt.Sprintf("must be an integer from %d to %d, not %s", lo, hi, quote(string(num))))
	}
	return n, nil
}

// fraction reads a number from 0 to 1. The bounds are checked on the
// literal, exactly, as JSON Schema does: 1.0000000000000000001 is over 1
// even though it rounds to 1 as a float64.
func (r *reader) fraction(path string) (float64, error) {
	if r.dec == nil {
		return r.scanFraction()
	}
	tok, err := r.token(path)
	if err != nil {
		return 0, err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return 0, mustBe(r.field(path), "a number", tok)
	}
	if !inUnitInterval(string(num)) {
		return 0, fieldErr(r.field(path), "must be a number from 0 to 1, not "+quote(string(num)))
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil { // only a range error, which inUnitInterval rules out
		return 0, fieldErr(r.field(path), "must be a number from 0 to 1, not "+quote(string(num)))
	}
	return f, nil
}

// timestamp reads an RFC 3339 time, as the envelope's time attribute.
func (r *reader) timestamp(path string) (time.Time, error) {
	s, err := r.str(path)
	if err != nil {
		return time.Time{}, err
	}
	return parseTime(r.field(path), s)
}

// raw reads any value and returns its JSON text unchanged.
func (r *reader) raw(path string) (json.RawMessage, error) {
	if r.dec == nil {
		return r.scanRaw()
	}
	var m json.RawMessage
	if err := r.dec.Decode(&m); err != nil {
		return nil, r.syntax(path, err)
	}
	return m, nil
}

// end checks that nothing but white space follows the value just read.
func (r *reader) end() error {
	if r.dec == nil {
		return r.scanEnd()
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return fieldErr(r.root, "has data after the JSON value")
	}
	return nil
}

func mustBe(field, want string, got json.Token) error {
	return fieldErr(field, fmt.Sprintf("must be %s, not %s", want, kind(got)))
}

func kind(tok json.Token) string {
	switch tok := tok.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case json.Delim:
		switch tok {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
	}
	return fmt.Sprintf("%v", tok)
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

// intValue reads a JSON number literal exactly: isInt says whether it is a
// whole number (1.0 and 1e2 are, as in JSON Schema) and fits whether that
// number is within int64. It works on the digits rather than a float or a
// big.Rat so that 1e999999999 costs nothing.
func intValue(lit string) (n int64, isInt, fits bool) {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp := lit, 0
	expHuge := false
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
		e, err := strconv.Atoi(lit[i+1:])
		// Past ±2^40 no mantissa that fits in an event can bring the
		// number back to a small integer, and the sums below cannot overflow.
		if err != nil || e > 1<<40 || e < -1<<40 {
			expHuge = true
			e = 1
			if strings.HasPrefix(lit[i+1:], "-") {
				e = -1
			}
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return 0, true, true
	}
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	if exp < 0 || (expHuge && exp <= 0) {
		return 0, false, false
	}
	if expHuge || len(digits)+exp > 19 {
		return 0, true, false
	}
	if neg {
		digits = "-" + digits
	}
	n, err := strconv.ParseInt(digits+strings.Repeat("0", exp), 10, 64)
	if err != nil {
		return 0, true, false
	}
	return n, true, true
}

// inUnitInterval reports whether a JSON number literal is from 0 to 1,
// exactly, working on the digits as intValue does.
func inUnitInterval(lit string) bool {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp := lit, 0
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
		e, err := strconv.Atoi(lit[i+1:])
		// Past ±2^40 the sign of the exponent alone decides, and the sums
		// below cannot overflow.
		switch {
		case err != nil && strings.HasPrefix(lit[i+1:], "-"), e < -1<<40:
			e = -1 << 40
		case err != nil, e > 1<<40:
			e = 1 << 40
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return true // zero, or minus zero
	}
	if neg {
		return false
	}
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	// The number is trimmed × 10^exp; its leading digit is worth
	// 10^(exp+len(trimmed)-1).
	switch lead := exp + len(trimmed) - 1; {
	case lead < 0:
		return true
	case lead == 0:
		return trimmed == "1"
	}
	return false
}

// checkText finds what encoding/json would silently repair: bytes that are
// not UTF-8, and \u escapes of half a UTF-16 surrogate pair (both become
// U+FFFD). It assumes b is JSON; on anything else it may miss a problem,
// which the parser then reports.
func checkText(b []byte, field string) error {
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, size := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return fieldErr(field, fmt.Sprintf("is not valid UTF-8 (byte %d)", off))
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch {
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r := hex4(b, i+2)
			if !utf16.IsSurrogate(r) {
				i += 5
				continue
			}
			if r < 0xdc00 && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if low := hex4(b, i+8); low >= 0xdc00 && low <= 0xdfff {
					i += 11
					continue
				}
			}
			return fieldErr(field, fmt.Sprintf("has a \\u escape at byte %d that is half a UTF-16 surrogate pair", i))
		case c == '\\':
			i++
		}
	}
	return nil
}

// hex4 decodes the four hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
