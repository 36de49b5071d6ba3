package vector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-20, 0.1}
	cases := map[string][]float32{
		"one":     {0.5},
		"special": special,
		"768":     randomVec(newRand(1), 768),
		"max":     randomVec(newRand(2), MaxDims),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := Encode(v)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got, want := len(b), 3+4*len(v); got != want {
				t.Fatalf("len(blob)=%d, want %d", got, want)
			}
			if got, want := b[0], byte(1); got != want {
				t.Fatalf("version byte=%d, want %d", got, want)
			}
			if got, want := int(binary.LittleEndian.Uint16(b[1:])), len(v); got != want {
				t.Fatalf("header dims=%d, want %d", got, want)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(got) != len(v) {
				t.Fatalf("decoded %d dims, want %d", len(got), len(v))
			}
			for i := range v {
				// Compare bits: -0 must stay -0.
				if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
					t.Fatalf("component %d=%v, want %v", i, got[i], v[i])
				}
			}
		})
	}
}

func TestEncodeLittleEndian(t *testing.T) {
	b, err := Encode([]float32{1, -2})
	if err != nil {
		t.Fatal(err)
	}
	// 1.0 is 0x3f800000 and -2.0 is 0xc0000000.
	want := []byte{1, 2, 0, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0}
	if !bytes.Equal(b, want) {
		t.Fatalf("Encode=% x, want % x", b, want)
	}
}

func TestEncodeRefuses(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for name, v := range map[string][]float32{
		"nil":       nil,
		"empty":     {},
		"too long":  make([]float32, MaxDims+1),
		"NaN":       {1, nan},
		"+Inf":      {inf, 1},
		"-Inf":      {1, 2, -inf},
		"NaN in 1k": append(make([]float32, 1000), nan),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := Encode(v)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Encode=% x, %v; want an error wrapping ErrInvalid", b, err)
			}
		})
	}
}

func TestDecodeRefusesCorrupt(t *testing.T) {
	good, err := Encode([]float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(b []byte) []byte) []byte {
		return edit(bytes.Clone(good))
	}
	float := func(i int, f float32) []byte {
		return with(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[3+4*i:], math.Float32bits(f))
			return b
		})
	}
	for name, b := range map[string][]byte{
		"nil":              nil,
		"one byte":         {1},
		"header only":      {1, 0, 0},
		"header says 3":    {1, 3, 0},
		"version 0":        with(func(b []byte) []byte { b[0] = 0; return b }),
		"version 2":        with(func(b []byte) []byte { b[0] = 2; return b }),
		"truncated":        good[:len(good)-1],
		"trailing byte":    append(bytes.Clone(good), 0),
		"extra component":  append(bytes.Clone(good), 0, 0, 0, 0),
		"dims too large":   with(func(b []byte) []byte { b[1] = 4; return b }),
		"dims too small":   with(func(b []byte) []byte { b[1] = 2; return b }),
		"dims high byte":   with(func(b []byte) []byte { b[2] = 1; return b }),
		"NaN":              float(1, float32(math.NaN())),
		"quiet NaN bits":   float(0, math.Float32frombits(0x7fc00001)),
		"negative NaN":     float(2, math.Float32frombits(0xffc00000)),
		"+Inf":             float(0, float32(math.Inf(1))),
		"-Inf":             float(2, float32(math.Inf(-1))),
		"zero dims, bytes": {1, 0, 0, 0, 0, 0x80, 0x3f},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := Decode(b)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(% x)=%v, %v; want an error wrapping ErrCorrupt", b, v, err)
			}
			if v != nil {
				t.Fatalf("Decode(% x) returned %v with its error", b, v)
			}
		})
	}
}

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// is a finite vector that encodes back to the very same bytes, so a stored
// blob means one thing only.
func FuzzDecode(f *testing.F) {
	for _, v := range [][]float32{{1}, {0.25, -0.5, 3}, randomVec(newRand(3), 16)} {
		b, err := Encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode(% x): %v does not wrap ErrCorrupt", b, err)
			}
			return
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("Decode(% x) accepted component %d=%v", b, i, x)
			}
		}
		again, err := Encode(v)
		if err != nil {
			t.Fatalf("Encode(Decode(% x)): %v", b, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("Encode(Decode(% x))=% x", b, again)
		}
	})
}
