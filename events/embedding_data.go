package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// textHashPat is copied into schema/memory.embedded.json.
var textHashPat = regexp.MustCompile(`^[0-9a-f]{32}$`)

func decodeMemoryEmbedded(r *reader, path string) (MemoryEmbedded, error) {
	var x MemoryEmbedded
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "model":
			x.Model, err = r.str(p)
		case "dims":
			var n int64
			n, err = r.integer(p, 1, MaxEmbeddingDims)
			x.Dims = int(n)
		case "vectors":
			x.Vectors, err = decodeEmbeddedList(r, p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	err = firstErr(
		checkName(join(path, "model"), x.Model, MaxEmbeddingModelBytes, true),
		missing(path, has, "dims", "vectors"),
	)
	if err != nil {
		return x, err
	}
	if len(x.Vectors) == 0 {
		return x, fieldErr(join(path, "vectors"), "must hold at least one vector")
	}
	for i, v := range x.Vectors {
		if len(v.Vector) != x.Dims {
			return x, fieldErr(fmt.Sprintf("%s.vectors[%d].vector", path, i),
				fmt.Sprintf("has %d components, dims is %d", len(v.Vector), x.Dims))
		}
	}
	return x, nil
}

func decodeEmbeddedList(r *reader, path string) ([]Embedded, error) {
	var out []Embedded
	seen := make(map[string]int)
	err := r.array(path, func(i int, p string) error {
		if i == MaxEmbeddedVectors {
			return tooMany(path, MaxEmbeddedVectors, "vectors")
		}
		v, err := decodeEmbedded(r, p)
		if err != nil {
			return err
		}
		if j, ok := seen[v.Hash]; ok {
			return fieldErr(join(p, "hash"), fmt.Sprintf("%s is also vectors[%d]; a text has one vector", quote(v.Hash), j))
		}
		seen[v.Hash] = i
		out = append(out, v)
		return nil
	})
	return out, err
}

func decodeEmbedded(r *reader, path string) (Embedded, error) {
	var v Embedded
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "hash":
			v.Hash, err = r.str(p)
		case "vector":
			var raw json.RawMessage
			if raw, err = r.raw(p); err == nil {
				v.Vector, err = parseVector(raw, p)
			}
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return v, err
	}
	if err := missing(path, has, "hash", "vector"); err != nil {
		return v, err
	}
	if !textHashPat.MatchString(v.Hash) {
		return v, fieldErr(join(path, "hash"), "must be a TextHash, 32 lower-case hex digits, not "+quote(v.Hash))
	}
	if len(v.Vector) == 0 {
		return v, fieldErr(join(path, "vector"), "must hold at least one component")
	}
	for _, c := range v.Vector {
		if c != 0 {
			return v, nil
		}
	}
	return v, fieldErr(join(path, "vector"), "is all zeros; a zero vector has no direction")
}

var errNotNumbers = errors.New("not an array of numbers")

// parseVector reads a JSON array of numbers, each within float32 range,
// as float32s rounded as strconv does, which is how encoding/json writes
// and reads them. Vectors are most of a rebuild's bytes, so a plain array
// is split on its commas, three times faster than walking it token by
// token; anything else is walked to name the element that is wrong.
func parseVector(raw json.RawMessage, path string) ([]float32, error) {
	v, err := parseNumbers(raw, path)
	if !errors.Is(err, errNotNumbers) {
		return v, err
	}
	r := newReader(raw, path)
	err = r.array(path, func(_ int, p string) error {
		tok, err := r.token(p)
		if err != nil {
			return err
		}
		if _, ok := tok.(json.Number); !ok {
			return mustBe(p, "a number", tok)
		}
		return nil
	})
	if err == nil {
		err = fieldErr(path, "must be an array of numbers")
	}
	return nil, err
}

// parseNumbers parses raw, a valid JSON value, if it is an array holding
// only numbers; otherwise it returns errNotNumbers. Inside such an array
// no byte can be a quote, a bracket, a brace or the first letter of
// null, true or false, and every comma separates two numbers.
func parseNumbers(raw json.RawMessage, path string) ([]float32, error) {
	if raw[0] != '[' {
		return nil, mustBe(path, "an array", rawToken(raw))
	}
	inner := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(inner) == 0 {
		return []float32{}, nil
	}
	if bytes.ContainsAny(inner, `"[]{}ntf`) {
		return nil, errNotNumbers
	}
	if n := bytes.Count(inner, []byte{','}) + 1; n > MaxEmbeddingDims {
		return nil, tooMany(path, MaxEmbeddingDims, "components")
	}
	out := make([]float32, 0, bytes.Count(inner, []byte{','})+1)
	for i := 0; len(inner) > 0; i++ {
		lit, rest, _ := bytes.Cut(inner, []byte{','})
		inner = rest
		s := string(bytes.TrimSpace(lit))
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || math.IsInf(f, 0) {
			return nil, fieldErr(fmt.Sprintf("%s[%d]", path, i), "is outside the range of a float32: "+quote(s))
		}
		out = append(out, float32(f))
	}
	return out, nil
}

// rawToken is what mustBe says of a raw value that is not an array.
func rawToken(raw json.RawMessage) json.Token {
	switch raw[0] {
	case '{':
		return json.Delim('{')
	case '"':
		return ""
	case 't', 'f':
		return true
	case 'n':
		return nil
	}
	return json.Number(raw)
}
