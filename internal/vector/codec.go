package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Blob layout, version 1: one version byte, the dimension count as a
// little-endian uint16, then each component as a little-endian IEEE 754
// float32. 3 + 4×dims bytes: 3,075 for 768 dimensions.
const (
	blobVersion = 1
	headerLen   = 3
	// MaxDims is the most dimensions a blob can hold. Embedding models stop
	// at a few thousand; a vector longer than this is an error, not a blob.
	MaxDims = math.MaxUint16
)

var (
	// ErrCorrupt is wrapped by Decode when a blob is not a version 1 vector.
	ErrCorrupt = errors.New("corrupt vector blob")
	// ErrInvalid is wrapped when a vector is empty, longer than MaxDims, all
	// zero or holds NaN or ±Inf: no similarity can be computed from it.
	ErrInvalid = errors.New("invalid vector")
	// ErrDims is wrapped when a vector's length differs from its index's.
	ErrDims = errors.New("wrong number of dimensions")
	// ErrFull is wrapped when an Index already holds MaxLen vectors.
	ErrFull = errors.New("vector index full")
)

// Encode turns v into a blob for storage. It fails, wrapping ErrInvalid,
// when v is empty, longer than MaxDims or holds NaN or ±Inf, so that every
// blob it returns decodes: a bad embedding is refused when it arrives, not
// discovered when the index is loaded. A zero vector encodes (it is a valid
// value, though Index refuses it).
func Encode(v []float32) ([]byte, error) {
	if err := checkFinite(v); err != nil {
		return nil, fmt.Errorf("encode vector: %w", err)
	}
	b := make([]byte, headerLen+4*len(v))
	b[0] = blobVersion
	binary.LittleEndian.PutUint16(b[1:], uint16(len(v)))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[headerLen+4*i:], math.Float32bits(f))
	}
	return b, nil
}

// Decode reads a blob written by Encode. A blob of another version, with a
// length that disagrees with its header, with no dimensions, or holding NaN
// or ±Inf is refused with an error wrapping ErrCorrupt: blobs come from disk,
// and one bad row must cost one vector, not a panic or a poisoned ranking.
func Decode(b []byte) ([]float32, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("decode vector: %d bytes, shorter than the header: %w", len(b), ErrCorrupt)
	}
	if b[0] != blobVersion {
		return nil, fmt.Errorf("decode vector: version %d: %w", b[0], ErrCorrupt)
	}
	dims := int(binary.LittleEndian.Uint16(b[1:]))
	if dims == 0 {
		return nil, fmt.Errorf("decode vector: zero dimensions: %w", ErrCorrupt)
	}
	if want := headerLen + 4*dims; len(b) != want {
		return nil, fmt.Errorf("decode vector: %d bytes for %d dimensions, want %d: %w", len(b), dims, want, ErrCorrupt)
	}
	v := make([]float32, dims)
	for i := range v {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[headerLen+4*i:]))
		if isNaNOrInf(f) {
			return nil, fmt.Errorf("decode vector: component %d is %v: %w", i, f, ErrCorrupt)
		}
		v[i] = f
	}
	return v, nil
}

// checkFinite refuses what no blob or index may hold.
func checkFinite(v []float32) error {
	if len(v) == 0 {
		return fmt.Errorf("no dimensions: %w", ErrInvalid)
	}
	if len(v) > MaxDims {
		return fmt.Errorf("%d dimensions, more than %d: %w", len(v), MaxDims, ErrInvalid)
	}
	for i, f := range v {
		if isNaNOrInf(f) {
			return fmt.Errorf("component %d is %v: %w", i, f, ErrInvalid)
		}
	}
	return nil
}

func isNaNOrInf(f float32) bool {
	// NaN and ±Inf are the float32s whose exponent bits are all ones.
	return math.Float32bits(f)&0x7f800000 == 0x7f800000
}
