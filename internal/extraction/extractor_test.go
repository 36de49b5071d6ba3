package extraction

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// countingLLM counts the calls it answers.
type countingLLM struct{ calls *int }

func (c countingLLM) Extract(context.Context, []llmextract.Turn, []llmextract.Known, llmextract.Options) (*llmextract.Result, error) {
	*c.calls++
	return &llmextract.Result{Calls: 1}, nil
}

// A request whose conclusion the read model already holds (delivered
// again by a replay) is acknowledged without asking the model; one sent
// back from the dead letters is asked again unless the model's own
// extraction is there.
func TestConcludedRequestIsNotAskedAgain(t *testing.T) {
	req := &events.ExtractionRequested{RequestID: "r1", SessionID: "s1", Reason: events.ReasonSessionEnded,
		Turns: []events.ExtractionTurn{{TurnIndex: 0, Role: "user", Content: "I went hiking.", Time: time.Unix(1, 0).UTC()}}}
	scope := memory.Scope{Namespace: "default", User: "u"}
	for _, c := range []struct {
		name     string
		applied  []string
		redriven bool
		asked    bool
	}{
		{"new", nil, false, true},
		{"extracted", []string{"extracted-r1"}, false, false},
		{"failed and covered", []string{"failed-r1", "extracted-r1-fallback"}, false, false},
		{"only its fast rule pass", []string{"extracted-r1-rules"}, false, true},
		{"redriven after failing", []string{"failed-r1", "extracted-r1-fallback"}, true, true},
		{"redriven, extracted since", []string{"failed-r1", "extracted-r1"}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			x := &Extractor{LLM: countingLLM{&calls}, Log: zap.NewNop(),
				Emit: func(context.Context, ...memory.Outgoing) error { return nil },
				Extracted: func(_ context.Context, s memory.Scope, source string, ids ...string) (bool, error) {
					if s != scope || source != Source {
						t.Errorf("asked about %v %s", s, source)
					}
					return slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(c.applied, id) }), nil
				}}
			d := memory.Delivery{Applied: memory.Applied{Envelope: memory.Envelope{Type: events.TypeExtractionRequested,
				Scope: scope, Time: time.Unix(2, 0).UTC()}, Data: req}, Attempt: 1, Redriven: c.redriven}
			if err := x.Handle(t.Context(), d); err != nil {
				t.Fatal(err)
			}
			if got := calls == 1; got != c.asked {
				t.Errorf("model asked %d times, want asked %v", calls, c.asked)
			}
		})
	}
}
