package events_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
)

func BenchmarkDecodeStructured(b *testing.B) {
	for _, c := range []struct {
		name    string
		content string
	}{
		{"small", "hello"},
		{"1MiB", strings.Repeat("长文本 long text ", 1<<20/20)},
	} {
		body := []byte(with(m{"data": m{"session_id": "s-42", "turn_index": 0, "role": "user", "content": c.content}}))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := events.DecodeStructured(body, 2<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeExtractionRequested(b *testing.B) {
	body := []byte(request(turnsUpTo(events.MaxExtractionTurns)...))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := events.DecodeData(events.TypeExtractionRequested, body); err != nil {
			b.Fatal(err)
		}
	}
}
