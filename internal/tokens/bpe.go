package tokens

import (
	"fmt"
	"sync"

	"github.com/engramhq/engram/internal/gencache"
	"github.com/tiktoken-go/tokenizer/codec"
)

// bpe counts exactly as OpenAI's tiktoken does for one encoding. The rank
// table is compiled into the binary by github.com/tiktoken-go/tokenizer as
// a Go map literal inside a function, so it costs nothing until the first
// Count and nothing is ever read from disk or the network. Only the codec
// package is imported, not the tokenizer package, so that the linker drops
// the encodings engram does not use (r50k, p50k).
type bpe struct {
	name  string
	new   func() *codec.Codec
	once  sync.Once
	codec *codec.Codec
	// fallback counts if the codec ever reports an error; it cannot with
	// the default error mode and no match timeout, but Count has no error
	// to return.
	fallback Estimate
	// counted remembers recent counts: retrieval counts the same memories
	// and turns in answer after answer, and BPE took a tenth of a
	// /v1/context answer's time.
	counted *gencache.Cache[string, int]
}

// The counts of up to 2×cacheEntries recent texts of at most
// cacheTextBytes are kept (counted).
const (
	cacheEntries   = 8192
	cacheTextBytes = 4096
)

func newBPE(name string, newCodec func() *codec.Codec, fallback Estimate) *bpe {
	return &bpe{name: name, new: newCodec, fallback: fallback, counted: gencache.New[string, int](cacheEntries, nil)}
}

// One counter per encoding for the whole process: building the rank map
// takes tens of milliseconds and several megabytes of heap, and each
// codec.New* call compiles its split pattern again.
var (
	o200k  = newBPE("o200k_base", codec.NewO200kBase, estimates["o200k_base"])
	cl100k = newBPE("cl100k_base", codec.NewCl100kBase, estimates["cl100k_base"])
)

// Exact returns the counter for a tiktoken encoding: "o200k_base" or
// "cl100k_base". The encoding's ranks load on the counter's first Count.
func Exact(encoding string) (Counter, error) {
	switch encoding {
	case o200k.name:
		return o200k, nil
	case cl100k.name:
		return cl100k, nil
	}
	return nil, fmt.Errorf("exact token counter for encoding %q: not embedded (have o200k_base, cl100k_base)", encoding)
}

func (b *bpe) Name() string { return b.name }

// Count returns the number of tokens tiktoken's encode_ordinary gives for
// s: special-token text such as "<|endoftext|>" counts as ordinary text.
// Two deviations come from the module's generated split pattern (see
// doc.go): a blank line holding spaces or tabs may count one token more,
// and a whitespace run with line breaks longer than maxBreakRun bytes is
// counted in parts.
func (b *bpe) Count(s string) int {
	if s == "" {
		return 0
	}
	cache := len(s) <= cacheTextBytes
	if cache {
		if n, ok := b.counted.Get(s); ok {
			return n
		}
	}
	b.once.Do(func() { b.codec = b.new() })
	total := 0
	for rest := s; rest != ""; {
		part := rest[:breakRunCut(rest)]
		rest = rest[len(part):]
		n, err := b.codec.Count(part)
		if err != nil {
			n = b.fallback.Count(part)
		}
		total += n
	}
	if cache {
		b.counted.Put(s, total)
	}
	return total
}

// maxBreakRun bounds the whitespace the codec sees in one run when the run
// holds line breaks. Its generated pattern matches such a run once per
// line break, rescanning the rest of the run each time, so a long one
// ("\n \n \n ...", 32 KB: 1 s) costs time quadratic in its length.
const maxBreakRun = 128

// breakRunCut returns where to end the part of s given to the codec: after
// the maxBreakRun-th byte of a run of ASCII whitespace that holds a line
// break, or len(s).
func breakRunCut(s string) int {
	run, breaks := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r':
			breaks = true
			fallthrough
		case ' ', '\t', '\v', '\f':
			run++
			if run >= maxBreakRun && breaks {
				return i + 1
			}
		default:
			run, breaks = 0, false
		}
	}
	return len(s)
}
