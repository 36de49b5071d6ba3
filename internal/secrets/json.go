package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaskJSON masks every string value of a JSON document, and the whole
// value of a field whose name says it holds a secret ("password",
// "api_key", "clientSecret") when the value could be one: in structured
// data the key and its value are apart, so Mask alone would not see
// `"password": "hunter22"`. Identifiers (fields named id or ending in _id)
// are left alone: they are keys, not content. changed is false, and out is
// data itself, when nothing was masked; otherwise out is the document
// re-encoded (object keys sorted, HTML characters not escaped).
func (m *Masker) MaskJSON(data []byte) (out []byte, changed bool, err error) {
	if m.unchanged(data) {
		return data, false, nil
	}
	return m.maskDecoded(data)
}

// maskDecoded is MaskJSON on the document decoded into Go values.
func (m *Masker) maskDecoded(data []byte) (out []byte, changed bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data, false, fmt.Errorf("mask json: %w", err)
	}
	v, changed = m.maskValue("", v)
	if !changed {
		return data, false, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return data, false, fmt.Errorf("mask json: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true, nil
}

func (m *Masker) maskValue(key string, v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return m.maskString(key, x)
	case map[string]any:
		changed := false
		for k, e := range x {
			if e2, c := m.maskValue(k, e); c {
				x[k], changed = e2, true
			}
		}
		return x, changed
	case []any:
		changed := false
		for i, e := range x {
			if e2, c := m.maskValue(key, e); c {
				x[i], changed = e2, true
			}
		}
		return x, changed
	}
	return v, false
}

// maskString masks a string value of the field key.
func (m *Masker) maskString(key, x string) (string, bool) {
	if isIDKey(key) {
		return x, false
	}
	if out, found := m.Mask(x); len(found) > 0 {
		return out, true
	}
	if kind := keyKind(key); kind != "" && plausible(4)(x) && !isRefLike(x) && !strings.ContainsAny(x, " \t\n") {
		return hashRef(kind, x), true
	}
	return x, false
}

func isIDKey(key string) bool {
	k := strings.ToLower(key)
	return k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "ID")
}

// keyKind is the kind a field's name gives its value: password for
// password-named fields, generic_secret for token-, secret- and key-named
// ones; "" for any other field, and for names that hold a setting
// (max_tokens, token_type, password_min_length).
func keyKind(key string) string {
	if key == "" || !secretKey(key) {
		return ""
	}
	words := keyWords(key)
	last := ""
	if len(words) > 0 {
		last = words[len(words)-1]
	}
	switch last {
	case "password", "passwd", "passphrase", "pwd", "pass":
		return "password"
	case "secret", "token", "apikey", "credential", "credentials":
		return "generic_secret"
	case "key":
		if len(words) > 1 && (words[len(words)-2] == "api" || words[len(words)-2] == "secret" ||
			words[len(words)-2] == "private" || words[len(words)-2] == "access" || words[len(words)-2] == "auth") {
			return "generic_secret"
		}
	}
	return ""
}
