package extraction

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// A failed tool call whose result arrives in a later turn becomes an error
// memory named for the program the call ran (seed 003's ERROR kind).
func TestRulesNameAFailedToolFromItsCall(t *testing.T) {
	t.Parallel()
	x := &Extractor{}
	got := x.rules([]events.ExtractionTurn{
		{TurnIndex: 1, Role: "assistant", Content: "Installing.",
			ToolCalls: []events.ToolCall{{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"npm install"}`)}}},
		{TurnIndex: 2, Role: "tool",
			ToolResults: []events.ToolResult{{ToolCallID: "c1", IsError: true, Content: "npm ERR! code ERESOLVE"}}},
	})
	var found bool
	for _, c := range got {
		if c.Kind == memory.KindError && c.Subject == "npm" && strings.Contains(c.Content, "npm install") && strings.Contains(c.Content, "ERESOLVE") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no error memory for the failed npm install; got %+v", got)
	}
}

// A turn's reading is named by the turn, and the read model knows a
// reading's memories by its id's prefix.
func TestReadingEventID(t *testing.T) {
	scope := memory.Scope{Namespace: "default", User: "ana"}
	turn := events.ExtractionTurn{TurnIndex: 3, Role: "user", Content: "I live in Porto"}
	id := ReadingEventID(scope, "s1", turn)
	if !strings.HasPrefix(id, extractreq.ReadingEventPrefix) {
		t.Fatalf("reading id %q lacks the prefix %q", id, extractreq.ReadingEventPrefix)
	}
	if again := ReadingEventID(scope, "s1", turn); again != id {
		t.Fatalf("the same turn named twice: %q, %q", id, again)
	}
	other := turn
	other.Content = "I live in Lisbon"
	for _, differs := range []string{ReadingEventID(scope, "s1", other), ReadingEventID(scope, "s2", turn),
		ReadingEventID(memory.Scope{Namespace: "default", User: "bo"}, "s1", turn)} {
		if differs == id {
			t.Fatalf("another turn has the reading id %q", id)
		}
	}
}

// fakeLLM answers every request with the same candidates.
type fakeLLM struct{ cands []memory.Candidate }

func (f fakeLLM) Extract(context.Context, []llmextract.Turn, []llmextract.Known, llmextract.Options) (*llmextract.Result, error) {
	return &llmextract.Result{Candidates: f.cands, Calls: 1}, nil
}

// What the extractor publishes says when each candidate was said: the
// time of the turn the rules read it in, or the one the model named; a
// candidate the model dated to no turn was said by the request's last.
func TestExtractedCandidatesSayWhenTheyWereSaid(t *testing.T) {
	t.Parallel()
	day := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	req := &events.ExtractionRequested{RequestID: "r1", SessionID: "s1", Reason: events.ReasonSessionEnded, Turns: []events.ExtractionTurn{
		{TurnIndex: 0, Role: "user", Content: "I live in Lisbon.", Time: day},
		{TurnIndex: 1, Role: "user", Content: "我搬到北京了。", Time: day.Add(24 * time.Hour)},
		{TurnIndex: 2, Role: "assistant", Content: "好的。", Time: day.Add(25 * time.Hour)},
	}}
	delivery := memory.Delivery{Applied: memory.Applied{Envelope: memory.Envelope{Type: events.TypeExtractionRequested,
		Scope: memory.Scope{Namespace: "default", User: "u"}, Time: day.Add(48 * time.Hour)}, Data: req}, Attempt: 1}
	for _, c := range []struct {
		name string
		llm  LLM
		want map[string]time.Time
	}{
		{"rules", nil, map[string]time.Time{"User lives in Lisbon": day, "用户搬到了北京": day.Add(24 * time.Hour)}},
		{"llm", fakeLLM{[]memory.Candidate{
			{Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Subject: "user", Predicate: "location",
				Content: "Lives in Lisbon", Importance: 0.5, Confidence: 0.9, SaidAt: day},
			{Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Subject: "user", Predicate: "location",
				Content: "搬到了北京", Importance: 0.5, Confidence: 0.9}}},
			map[string]time.Time{"Lives in Lisbon": day, "搬到了北京": day.Add(25 * time.Hour)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []events.Candidate
			x := &Extractor{LLM: c.llm, Log: zap.NewNop(), Emit: func(_ context.Context, out ...memory.Outgoing) error {
				for _, o := range out {
					if d, ok := o.Data.(*events.MemoryExtracted); ok {
						got = append(got, d.Candidates...)
					}
				}
				return nil
			}}
			if err := x.Handle(t.Context(), delivery); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("candidates %+v, want %d", got, len(c.want))
			}
			for _, cand := range got {
				if want, ok := c.want[cand.Content]; !ok || !cand.SaidAt.Equal(want) {
					t.Errorf("%q said at %v, want %v", cand.Content, cand.SaidAt, want)
				}
			}
		})
	}
}

// knownMemories is a read model holding mems.
type knownMemories []memory.Memory

func (k knownMemories) Memories(context.Context, memory.MemoryQuery) ([]memory.Memory, error) {
	return k, nil
}

// A fact said before what its slot holds now is not announced as
// important: it enters the history, it is no news.
func TestOutdatedFactIsNotAnnounced(t *testing.T) {
	t.Parallel()
	day := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	req := &events.ExtractionRequested{RequestID: "r1", SessionID: "s1", Reason: events.ReasonSessionEnded, Turns: []events.ExtractionTurn{
		{TurnIndex: 0, Role: "user", Content: "I live in Lisbon. My name is Ana.", Time: day}}}
	delivery := memory.Delivery{Applied: memory.Applied{Envelope: memory.Envelope{Type: events.TypeExtractionRequested,
		Scope: memory.Scope{Namespace: "default", User: "u"}, Time: day.Add(48 * time.Hour)}, Data: req}, Attempt: 1}
	var announced []string
	x := &Extractor{Log: zap.NewNop(), Known: knownMemories{{Subject: "user", Predicate: "location", Content: "User moved to Porto",
		Status: memory.StatusActive, SaidAt: day.Add(24 * time.Hour)}},
		Emit: func(_ context.Context, out ...memory.Outgoing) error {
			for _, o := range out {
				if d, ok := o.Data.(*events.MemoryImportant); ok {
					announced = append(announced, d.Content)
				}
			}
			return nil
		}}
	if err := x.Handle(t.Context(), delivery); err != nil {
		t.Fatal(err)
	}
	if len(announced) != 1 || !strings.Contains(announced[0], "Ana") {
		t.Fatalf("announced %q, want the name alone", announced)
	}
}
