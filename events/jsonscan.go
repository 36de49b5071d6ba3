package events

import (
	"errors"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner: reader's fast mode. It reads RFC 8259 JSON straight from
// the bytes, with no tokens boxed in interfaces and no paths built, and
// checks what checkText checks (UTF-8, \u escapes of half a surrogate
// pair) in the strings it reads, so a document it accepts is one that
// checkText and encoding/json accept too, read to the same values. It
// never explains a refusal: every problem, whether of syntax or of the
// contract, is errRescan, and decodeTwice reads the document again with
// encoding/json to name it. Paths handed to the decoders' callbacks are
// "" for the same reason: they only ever name a problem.

// errRescan stops the scanner; it never leaves this package.
var errRescan = errors.New("events: read again with encoding/json")

// scanMaxDepth bounds the nesting the scanner skips through in a raw
// value; deeper documents are left to encoding/json, whose own limit
// (10,000) then decides.
const scanMaxDepth = 1000

// scanMaxKeys bounds the keys of one object the scanner reads: every
// object the decoders read has a fixed set of known keys, so more than
// this is a document for encoding/json to refuse.
const scanMaxKeys = 64

func newScanner(b []byte, root string) *reader { return &reader{b: b, root: root} }

// special marks the bytes a string's fast loop stops at: the quote, the
// backslash, control characters and every byte of a multi-byte character.
var special = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

func (r *reader) skipSpace() {
	for r.off < len(r.b) {
		switch r.b[r.off] {
		case ' ', '\t', '\n', '\r':
			r.off++
		default:
			return
		}
	}
}

// next skips white space and returns the byte there, or 0 at the end
// (a NUL byte is never valid between tokens either).
func (r *reader) next() byte {
	r.skipSpace()
	if r.off < len(r.b) {
		return r.b[r.off]
	}
	return 0
}

func (r *reader) scanObject(value func(key, path string) error) error {
	if empty, err := r.enter('{', '}'); empty || err != nil {
		return err
	}
	var buf [16]string
	keys := buf[:0]
	for more := true; more; {
		if r.next() != '"' {
			return errRescan
		}
		key, err := r.scanKey()
		if err != nil || len(keys) == scanMaxKeys || slices.Contains(keys, key) {
			return errRescan
		}
		keys = append(keys, key)
		if r.next() != ':' {
			return errRescan
		}
		r.off++
		if err := value(key, ""); err != nil {
			return errRescan
		}
		if more, err = r.more('}'); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) scanArray(elem func(i int, path string) error) error {
	if empty, err := r.enter('[', ']'); empty || err != nil {
		return err
	}
	for i, more := 0, true; more; i++ {
		if err := elem(i, ""); err != nil {
			return errRescan
		}
		var err error
		if more, err = r.more(']'); err != nil {
			return err
		}
	}
	return nil
}

// enter reads the bracket that opens an object or an array and reports
// whether it is empty, its closing bracket read too.
func (r *reader) enter(opening, closing byte) (empty bool, err error) {
	if r.next() != opening {
		return false, errRescan
	}
	r.off++
	if r.next() == closing {
		r.off++
		return true, nil
	}
	return false, nil
}

// more reads what follows a member or an element: a comma (true) or the
// closing bracket (false).
func (r *reader) more(closing byte) (bool, error) {
	switch r.next() {
	case ',':
		r.off++
		return true, nil
	case closing:
		r.off++
		return false, nil
	}
	return false, errRescan
}

// scanKey reads an object's key; the keys engram's objects know are
// returned without a copy.
func (r *reader) scanKey() (string, error) { return r.readString(true) }

func (r *reader) scanString() (string, error) {
	if r.next() != '"' {
		return "", errRescan
	}
	return r.readString(false)
}

// readString reads the string at r.off, a key when key is set.
func (r *reader) readString(key bool) (string, error) {
	raw, escaped, err := r.skipString()
	switch {
	case err != nil:
		return "", err
	case escaped:
		return unescape(raw), nil
	}
	if key {
		if k, ok := knownKey(raw); ok {
			return k, nil
		}
	}
	return string(raw), nil
}

// skipString reads past the string at r.off and returns its text between
// the quotes, and whether that holds an escape. It checks what
// encoding/json and checkText check: no control characters, valid
// escapes, valid UTF-8, and no escape of half a surrogate pair, which
// encoding/json would read as U+FFFD.
func (r *reader) skipString() (raw []byte, escaped bool, err error) {
	b := r.b
	start := r.off + 1
	ascii := true
	for i := start; i < len(b); {
		c := b[i]
		if !special[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			// An escape is ASCII, so no multi-byte character straddles one.
			if !ascii && !utf8.Valid(b[start:i]) {
				return nil, false, errRescan
			}
			r.off = i + 1
			return b[start:i], escaped, nil
		case c < 0x20:
			return nil, false, errRescan
		case c != '\\':
			ascii = false
			i++
			continue
		}
		escaped = true
		if i+1 >= len(b) {
			return nil, false, errRescan
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			c := hex4(b, i+2)
			switch {
			case c < 0:
				return nil, false, errRescan
			case utf16.IsSurrogate(c):
				if c >= 0xdc00 || i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return nil, false, errRescan
				}
				if low := hex4(b, i+8); low < 0xdc00 || low > 0xdfff {
					return nil, false, errRescan
				}
				i += 12
			default:
				i += 6
			}
		default:
			return nil, false, errRescan
		}
	}
	return nil, false, errRescan
}

// unescape decodes a string's text as encoding/json does; skipString has
// checked it.
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch e := raw[i+1]; e {
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
			c := hex4(raw, i+2)
			if utf16.IsSurrogate(c) {
				c = utf16.DecodeRune(c, hex4(raw, i+8))
				i += 6
			}
			out = utf8.AppendRune(out, c)
			i += 6
			continue
		default: // '"', '\\', '/'
			out = append(out, e)
		}
		i += 2
	}
	return string(out)
}

// scanNumber reads a number literal as RFC 8259 spells it. What follows
// it is the caller's to check, as after any value.
func (r *reader) scanNumber() (string, error) {
	end := numberEnd(r.b, r.off)
	if end < 0 {
		return "", errRescan
	}
	lit := string(r.b[r.off:end])
	r.off = end
	return lit, nil
}

// numberEnd returns where the number literal at b[i:] ends, or -1.
func numberEnd(b []byte, i int) int {
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

func (r *reader) scanInteger(lo, hi int64) (int64, error) {
	if c := r.next(); c != '-' && (c < '0' || c > '9') {
		return 0, errRescan
	}
	lit, err := r.scanNumber()
	if err != nil {
		return 0, err
	}
	n, isInt, fits := intValue(lit)
	if !isInt || !fits || n < lo || n > hi {
		return 0, errRescan
	}
	return n, nil
}

func (r *reader) scanFraction() (float64, error) {
	if c := r.next(); c != '-' && (c < '0' || c > '9') {
		return 0, errRescan
	}
	lit, err := r.scanNumber()
	if err != nil || !inUnitInterval(lit) {
		return 0, errRescan
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, errRescan
	}
	return f, nil
}

func (r *reader) scanBool() (bool, error) {
	switch r.next() {
	case 't':
		if r.scanLiteral("true") {
			return true, nil
		}
	case 'f':
		if r.scanLiteral("false") {
			return false, nil
		}
	}
	return false, errRescan
}

func (r *reader) scanLiteral(lit string) bool {
	if len(r.b)-r.off < len(lit) || string(r.b[r.off:r.off+len(lit)]) != lit {
		return false
	}
	r.off += len(lit)
	return true
}

// scanRaw reads any value and returns a copy of its text, as
// json.RawMessage's decoding does.
func (r *reader) scanRaw() ([]byte, error) {
	r.skipSpace()
	start := r.off
	if err := r.skipValue(); err != nil {
		return nil, err
	}
	return append([]byte(nil), r.b[start:r.off]...), nil
}

// skipValue reads past one value, checking it as it goes, without
// recursion: open holds the brackets of the arrays and objects it is in.
func (r *reader) skipValue() error {
	var buf [32]byte
	open := buf[:0]
	for {
		// A value.
		switch c := r.next(); {
		case c == '{' || c == '[':
			r.off++
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			if r.next() == closing {
				r.off++
				break
			}
			if len(open) == scanMaxDepth {
				return errRescan
			}
			open = append(open, c)
			if c == '{' {
				if err := r.skipKey(); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, _, err := r.skipString(); err != nil {
				return err
			}
		case c == 't':
			if !r.scanLiteral("true") {
				return errRescan
			}
		case c == 'f':
			if !r.scanLiteral("false") {
				return errRescan
			}
		case c == 'n':
			if !r.scanLiteral("null") {
				return errRescan
			}
		case c == '-' || '0' <= c && c <= '9':
			end := numberEnd(r.b, r.off)
			if end < 0 {
				return errRescan
			}
			r.off = end
		default:
			return errRescan
		}
		// After a value: close what it ends, or go on to the next one.
		for {
			if len(open) == 0 {
				return nil
			}
			c := r.next()
			in := open[len(open)-1]
			if c == ',' {
				r.off++
				if in == '{' {
					if err := r.skipKey(); err != nil {
						return err
					}
				}
				break
			}
			if in == '{' && c == '}' || in == '[' && c == ']' {
				r.off++
				open = open[:len(open)-1]
				continue
			}
			return errRescan
		}
	}
}

// skipKey reads past a key and its colon.
func (r *reader) skipKey() error {
	if r.next() != '"' {
		return errRescan
	}
	if _, _, err := r.skipString(); err != nil {
		return err
	}
	if r.next() != ':' {
		return errRescan
	}
	r.off++
	return nil
}

// scanEnd checks that nothing but white space follows the value.
func (r *reader) scanEnd() error {
	r.skipSpace()
	if r.off != len(r.b) {
		return errRescan
	}
	return nil
}

// knownKey returns the string constant for the keys of the events agents
// send most, so that reading them allocates nothing.
func knownKey(b []byte) (string, bool) {
	switch string(b) {
	case "specversion":
		return "specversion", true
	case "id":
		return "id", true
	case "source":
		return "source", true
	case "type":
		return "type", true
	case "subject":
		return "subject", true
	case "time":
		return "time", true
	case "datacontenttype":
		return "datacontenttype", true
	case "dataschema":
		return "dataschema", true
	case "namespace":
		return "namespace", true
	case "user":
		return "user", true
	case "agent":
		return "agent", true
	case "traceparent":
		return "traceparent", true
	case "tracestate":
		return "tracestate", true
	case "data":
		return "data", true
	case "session_id":
		return "session_id", true
	case "turn_index":
		return "turn_index", true
	case "role":
		return "role", true
	case "content":
		return "content", true
	case "tool_calls":
		return "tool_calls", true
	case "tool_results":
		return "tool_results", true
	case "attachments":
		return "attachments", true
	case "channel":
		return "channel", true
	case "project":
		return "project", true
	case "speaker":
		return "speaker", true
	case "name":
		return "name", true
	case "input":
		return "input", true
	case "tool_call_id":
		return "tool_call_id", true
	case "is_error":
		return "is_error", true
	case "turns":
		return "turns", true
	case "summary":
		return "summary", true
	case "message_count":
		return "message_count", true
	case "reason":
		return "reason", true
	}
	return "", false
}
