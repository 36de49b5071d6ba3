package events

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
)

// TypeMemoryEmbedded is published by engram's embedder: the vectors of
// memory texts, so that a rebuild of the read model restores vector
// recall from the stream without calling the embedding model.
const TypeMemoryEmbedded = "memory.embedded"

var embeddingTypes = []registration{
	{TypeMemoryEmbedded, func() Data { return new(MemoryEmbedded) }},
}

// textHashPat is copied into schema/memory.embedded.json.
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
	Model   string     `json:"model"`   // not empty, at most MaxEmbeddingModelBytes
	Dims    int        `json:"dims"`    // 1 to MaxEmbeddingDims
	Vectors []Embedded `json:"vectors"` // 1 to MaxEmbeddedVectors
}

func (x *MemoryEmbedded) Validate() error {
	seen := make(map[string]int, len(x.Vectors))
	return firstErr(
		checkName("model", x.Model, MaxEmbeddingModelBytes, true),
		checkInt("dims", x.Dims, 1, MaxEmbeddingDims),
		checkCount("vectors", len(x.Vectors), 1, MaxEmbeddedVectors, "vectors"),
		each("vectors", len(x.Vectors), func(i int) error {
			v := &x.Vectors[i]
			if err := v.Validate(); err != nil {
				return err
			}
			if j, ok := seen[v.Hash]; ok {
				return fieldErr("hash", fmt.Sprintf("%s is also vectors[%d]; a text has one vector", quote(v.Hash), j))
			}
			seen[v.Hash] = i
			if len(v.Vector) != x.Dims {
				return fieldErr("vector", fmt.Sprintf("has %d components, dims is %d", len(v.Vector), x.Dims))
			}
			return nil
		}),
	)
}

// Embedded is one text's vector. Vector holds exactly Dims finite
// components, not all zero (a zero vector has no direction to compare).
// On the wire it is a JSON array of numbers, each within float32 range;
// a producer writing it from a []float32 with encoding/json gets back
// exactly the float32s it wrote.
type Embedded struct {
	Hash   string    `json:"hash"` // TextHash of the text it stands for
	Vector []float32 `json:"vector"`
}

func (v *Embedded) Validate() error {
	if !textHashPat.MatchString(v.Hash) {
		return fieldErr("hash", "must be a TextHash, 32 lower-case hex digits, not "+quote(v.Hash))
	}
	if err := checkCount("vector", len(v.Vector), 1, MaxEmbeddingDims, "components"); err != nil {
		return err
	}
	for _, c := range v.Vector {
		if c != 0 {
			return nil
		}
	}
	return fieldErr("vector", "is all zeros; a zero vector has no direction")
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
