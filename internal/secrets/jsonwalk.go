package secrets

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// unchanged reports whether MaskJSON would leave data as it is, without
// decoding it into Go values, which was most of the cost of masking an
// event with nothing to mask. It reads the document token by token
// (jsontext) and asks maskString of every string, under the key
// encoding/json would give it (an array's elements take the key of the
// array). It says false whenever it is not sure — text that is not one
// valid JSON value followed by white space, invalid UTF-8 or half a
// surrogate pair (which encoding/json would repair), a repeated key —
// and MaskJSON then decodes the document as before.
// walker is what unchanged reads with, pooled: a decoder's buffers cost
// more than the walk of a short document.
type walker struct {
	r    bytes.Reader
	dec  *jsontext.Decoder
	keys []string
}

var walkers = sync.Pool{New: func() any {
	w := new(walker)
	w.dec = jsontext.NewDecoder(&w.r)
	return w
}}

func (m *Masker) unchanged(data []byte) bool {
	w := walkers.Get().(*walker)
	defer walkers.Put(w)
	w.r.Reset(data)
	w.dec.Reset(&w.r)
	dec, keys := w.dec, append(w.keys[:0], "") // keys[d]: the key of what is read at depth d
	defer func() { w.keys = keys[:0] }()
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		depth := dec.StackDepth()
		switch tok.Kind() {
		case '{', '[':
			keys = append(keys[:depth], keys[depth-1]) // an array's elements take its key
		case '"':
			if kind, n := dec.StackIndex(depth); kind == '{' && n%2 == 1 {
				keys[depth] = tok.String() // a member's name
				continue
			}
			if _, changed := m.maskString(keys[depth], tok.String()); changed {
				return false
			}
		}
		if depth == 0 {
			_, err := dec.ReadToken()
			return errors.Is(err, io.EOF)
		}
	}
}
