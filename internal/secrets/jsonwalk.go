package secrets

import (
	"unicode/utf8"
)

// unchanged reports whether MaskJSON would leave data as it is, without
// decoding it into Go values, which was most of the cost of masking an
// event with nothing to mask. It walks the document and asks maskString
// of every string, under the key encoding/json would give it (an array's
// elements take the key of the array). It says false whenever it is not
// sure — text that is not plain, valid JSON followed by nothing but white
// space, an escaped key, a \u escape of a surrogate, deep nesting — and
// MaskJSON then decodes the document as before. A repeated key is walked
// twice where decoding keeps the last: the walk sees more, never less.
func (m *Masker) unchanged(data []byte) bool {
	w := walker{m: m, b: data}
	if !w.value("", 0) {
		return false
	}
	w.space()
	return w.i == len(w.b)
}

type walker struct {
	m *Masker
	b []byte
	i int
}

// walkMaxDepth bounds the nesting walked; deeper documents are decoded.
const walkMaxDepth = 500

// value walks one value of the field key and reports whether it is well
// formed and nothing in it would be masked.
func (w *walker) value(key string, depth int) bool {
	if depth > walkMaxDepth {
		return false
	}
	w.space()
	if w.i >= len(w.b) {
		return false
	}
	switch c := w.b[w.i]; {
	case c == '{':
		return w.members(depth)
	case c == '[':
		return w.elements(key, depth)
	case c == '"':
		s, ok := w.str(true)
		if !ok {
			return false
		}
		_, changed := w.m.maskString(key, s)
		return !changed
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return w.number()
	}
	return false
}

func (w *walker) members(depth int) bool {
	w.i++ // {
	if w.space(); w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		return true
	}
	for {
		if w.space(); w.i >= len(w.b) || w.b[w.i] != '"' {
			return false
		}
		key, ok := w.str(false)
		if !ok {
			return false
		}
		if w.space(); w.i >= len(w.b) || w.b[w.i] != ':' {
			return false
		}
		w.i++
		if !w.value(key, depth+1) {
			return false
		}
		if more, ok := w.sep('}'); !more {
			return ok
		}
	}
}

func (w *walker) elements(key string, depth int) bool {
	w.i++ // [
	if w.space(); w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		return true
	}
	for {
		if !w.value(key, depth+1) {
			return false
		}
		if more, ok := w.sep(']'); !more {
			return ok
		}
	}
}

// sep reads what follows a member or an element: a comma (more) or the
// closing bracket (ok).
func (w *walker) sep(closing byte) (more, ok bool) {
	if w.space(); w.i < len(w.b) {
		switch w.b[w.i] {
		case ',':
			w.i++
			return true, true
		case closing:
			w.i++
			return false, true
		}
	}
	return false, false
}

func (w *walker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

func (w *walker) literal(lit string) bool {
	if len(w.b)-w.i < len(lit) || string(w.b[w.i:w.i+len(lit)]) != lit {
		return false
	}
	w.i += len(lit)
	return true
}

// number reads a number as RFC 8259 spells it.
func (w *walker) number() bool {
	digits := func() bool {
		start := w.i
		for w.i < len(w.b) && '0' <= w.b[w.i] && w.b[w.i] <= '9' {
			w.i++
		}
		return w.i > start
	}
	if w.b[w.i] == '-' {
		w.i++
	}
	switch {
	case w.i < len(w.b) && w.b[w.i] == '0':
		w.i++
	case !digits():
		return false
	}
	if w.i < len(w.b) && w.b[w.i] == '.' {
		w.i++
		if !digits() {
			return false
		}
	}
	if w.i < len(w.b) && (w.b[w.i] == 'e' || w.b[w.i] == 'E') {
		w.i++
		if w.i < len(w.b) && (w.b[w.i] == '+' || w.b[w.i] == '-') {
			w.i++
		}
		return digits()
	}
	return true
}

// str reads the string at w.i as encoding/json decodes it. Escapes are
// decoded only where escapes is set; a \u escape of a surrogate, invalid
// UTF-8 (which encoding/json would turn into U+FFFD) and control
// characters are not read at all.
func (w *walker) str(escapes bool) (string, bool) {
	start := w.i + 1
	var out []byte // the decoded text, once an escape is met
	for i := start; i < len(w.b); {
		c := w.b[i]
		switch {
		case c == '"':
			w.i = i + 1
			if out == nil {
				return string(w.b[start:i]), utf8.Valid(w.b[start:i])
			}
			return string(out), utf8.Valid(out)
		case c < 0x20:
			return "", false
		case c != '\\':
			if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		if !escapes || i+1 >= len(w.b) {
			return "", false
		}
		if out == nil {
			// Sized by what is read so far, not the rest of the document:
			// a long document of many escaped strings would otherwise
			// allocate its remainder for each.
			out = append(make([]byte, 0, 2*(i-start)+16), w.b[start:i]...)
		}
		switch e := w.b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(w.b, i+2)
			if !ok || 0xd800 <= r && r <= 0xdfff {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
