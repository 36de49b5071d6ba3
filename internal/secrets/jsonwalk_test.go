package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/secrets/corpus"
)

// walkDocs puts every corpus text, secret or look-alike, under keys that
// mask by content, by name and not at all, in objects, arrays and alone.
func walkDocs(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, c := range append(corpus.Secrets(), corpus.NotSecrets()...) {
		for _, v := range []any{
			map[string]any{"session_id": "s", "role": "user", "content": c.Text},
			map[string]any{"password": c.Text},
			map[string]any{"id": c.Text, "tool_call_id": c.Text},
			map[string]any{"clientSecret": c.Text, "max_tokens": c.Text},
			map[string]any{"tool_calls": []any{map[string]any{"name": "run", "input": map[string]any{"api_key": []any{c.Text, 1.5, true, nil}}}}},
			[]any{c.Text},
			c.Text,
		} {
			b, err := json.Marshal(v) // escapes <, > and & as \u003c …
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, b)
		}
	}
	return docs
}

// The walk answers "unchanged" exactly when decoding the document would,
// on the corpus in every shape.
func TestWalkAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	var m Masker
	for _, b := range walkDocs(t) {
		_, changed, err := m.maskDecoded(b)
		if got, want := m.unchanged(b), !changed && err == nil; got != want {
			t.Fatalf("unchanged=%v, decoding says changed=%v err=%v, for %s", got, changed, err, b)
		}
	}
}

// On anything else the walk may decline, but never says "unchanged" of a
// document that decoding would mask or refuse.
func TestWalkNeverMissesAMask(t *testing.T) {
	t.Parallel()
	for _, s := range walkHostile {
		checkWalk(t, []byte(s))
	}
}

var walkHostile = []string{
	``, ` `, `{`, `[`, `"`, `{}`, `[]`, `""`, `1`, `-0.5e+3`, `01`, `1.`, `.5`, `-`, `tru`, `nul`, `{} x`, `{}{}`, "{}\x00",
	`{"password":"hunter22"}`, `{"password":"hunter22","password":"x"}`, `{"password":"x","password":"hunter22"}`,
	`{"pass\u0077ord":"hunter22"}`, `{"content":"sk-abcdefghijklmnopqrstuvwx1234"}`,
	`{"content":"sk-abcdefghij\u006blmnopqrstuvwx1234"}`, `{"content":"sk-abcdefghij\nklmnopqrstuvwx1234"}`,
	`{"content":"\ud83d\ude00"}`, `{"content":"\ud83d"}`, `{"content":"a\u0000b"}`, "{\"content\":\"\xff\"}",
	"{\"content\":\"a\tb\"}", `{"content":"\x"}`, `{"content":"a\"}`, `{"a":[1,2,]}`, `{"a":1,}`, `{"a" 1}`, `{1:1}`,
	`[[[[[[[[[[[[[[[[[[[["ghp_abcdefghijklmnopqrstuvwxyz0123456789"]]]]]]]]]]]]]]]]]]]]`,
	`{"token":["x","ghp_abcdefghijklmnopqrstuvwxyz0123456789"]}`, `{"a":{"b":{"secret":"s3cr3t-value-here"}}}`,
	strings.Repeat("[", 600) + `"x"` + strings.Repeat("]", 600),
}

func checkWalk(t *testing.T, b []byte) {
	t.Helper()
	var m Masker
	if !m.unchanged(b) {
		return
	}
	out, changed, err := m.maskDecoded(b)
	if changed || err != nil || string(out) != string(b) {
		t.Fatalf("the walk says %q is left as it is; decoding says changed=%v err=%v: %q", b, changed, err, out)
	}
}

func FuzzMaskJSONWalk(f *testing.F) {
	for _, b := range walkDocs(f)[:200] {
		f.Add(b)
	}
	for _, s := range walkHostile {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkWalk(t, b) })
}

// BenchmarkMaskJSON masks a turn's data with nothing to mask, the common
// case at ingest. "decoded" is the path every document took
// before the walk.
func BenchmarkMaskJSON(b *testing.B) {
	data := []byte(`{"session_id":"s42","turn_index":7,"role":"user","content":"please deploy the service to production with the new config, then check the logs and tell me if the error rate went down"}`)
	var m Masker
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			if _, changed, err := m.MaskJSON(data); changed || err != nil {
				b.Fatal(changed, err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		for b.Loop() {
			if _, changed, err := m.maskDecoded(data); changed || err != nil {
				b.Fatal(changed, err)
			}
		}
	})
}
