package events

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
)

// TypeMemoryEmbedded is published by engram's embedder: the vectors of
// memory texts, so that a rebuild of the read model restores vector
// recall from the stream without calling the embedding model.
const TypeMemoryEmbedded = "memory.embedded"

var embeddingTypes = []registration{
	{TypeMemoryEmbedded, func() Data { return new(MemoryEmbedded) }},
}

var textHashPat = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Limits of memory.embedded's data.
const (
	MaxEmbeddingModelBytes = 200  // the model's name
	MaxEmbeddingDims       = 4096 // the dimensions of an embedding
	MaxEmbeddedVectors     = 256  // the vectors of one event
)

// MemoryEmbedded is the data of a memory.embedded event: vectors of one
// model, each filed under the TextHash of the text it embeds. It names no
// memory: the read model finds a memory's vector by hashing the memory's
// content, so a vector serves every memory with that text, and a memory
// whose content changes simply stops finding the old one. Hashes are
// unique within an event. An event must fit the event size limit
// (DefaultMaxEventBytes): at 768 dimensions about 90 vectors fit in
// 1 MiB, so a producer splits a larger set into several events.
type MemoryEmbedded struct {
	Model   string     `json:"model" check:"id,max=MaxEmbeddingModelBytes"`
	Dims    int        `json:"dims" check:"min=1,max=MaxEmbeddingDims"`
	Vectors []Embedded `json:"vectors" check:"nonempty,items=MaxEmbeddedVectors"`
}

func (x *MemoryEmbedded) Validate() error {
	return firstErr(checkFields(x), each("vectors", len(x.Vectors), func(i int) error {
		if n := len(x.Vectors[i].Vector); n != x.Dims {
			return fieldErr("vector", fmt.Sprintf("has %d components, dims is %d", n, x.Dims))
		}
		return nil
	}), unique("vectors", "hash", len(x.Vectors), func(i int) string { return x.Vectors[i].Hash }, "a text has one vector"))
}

// Embedded is one text's vector. Vector holds exactly Dims finite
// components, not all zero (a zero vector has no direction to compare).
// On the wire it is a JSON array of numbers, each within float32 range;
// a producer writing it from a []float32 with encoding/json gets back
// exactly the float32s it wrote.
type Embedded struct {
	Hash   string    `json:"hash" check:"hash"` // TextHash of the text it stands for
	Vector []float32 `json:"vector" check:"nonempty,items=MaxEmbeddingDims" doc:"Finite float32 components, not all zero."`
}

func (v *Embedded) Validate() error {
	if err := checkFields(v); err != nil {
		return err
	}
	return when(!slices.ContainsFunc(v.Vector, func(c float32) bool { return c != 0 }), "vector", "is all zeros; a zero vector has no direction")
}

// TextHash is the content address of a text's vector: the first 16 bytes
// of the SHA-256 of its UTF-8 bytes, as 32 lower-case hex digits. The
// embedder files vectors under it and the read model hashes a memory's
// content the same way to find its vector, so the text is hashed exactly
// as stored, without trimming or normalising.
func TextHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}
