package httpapi

import (
	"testing"

	"github.com/engramhq/engram/events"
)

// A memory written as plain text gets the shape the rules would read
// from the user saying it; what the caller gives is kept.
func TestInferShape(t *testing.T) {
	for _, tc := range []struct {
		in   events.MemoryAdded
		want [4]string // kind, category, subject, predicate
	}{
		{events.MemoryAdded{Content: "I'm vegetarian"}, [4]string{"fact", "config", "user", "note"}},
		{events.MemoryAdded{Content: "I live in Porto"}, [4]string{"identity", "identity", "user", "location"}},
		{events.MemoryAdded{Content: "我住在杭州"}, [4]string{"identity", "identity", "user", "location"}},
		{events.MemoryAdded{Content: "I prefer answers in Chinese"}, [4]string{"preference", "config", "user", "prefers"}},
		{events.MemoryAdded{Content: "Prefers dark mode", Kind: "preference"}, [4]string{"preference", "config", "user", "preference"}},
		{events.MemoryAdded{Content: "flies to Osaka on Friday", Kind: "fact", Category: "event"}, [4]string{"fact", "event", "user", "fact"}},
		{events.MemoryAdded{Content: "I live in Porto", Kind: "fact"}, [4]string{"fact", "conversation", "user", "fact"}},
		{events.MemoryAdded{Content: "x", Kind: "rule", Category: "decision", Subject: "deploys", Predicate: "need"},
			[4]string{"rule", "decision", "deploys", "need"}},
	} {
		m := tc.in
		inferShape(&m)
		if got := [4]string{m.Kind, m.Category, m.Subject, m.Predicate}; got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.in, got, tc.want)
		}
	}
}
