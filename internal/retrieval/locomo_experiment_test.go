package retrieval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/textseg"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/locomo"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
)

// loadLoCoMo puts every LoCoMo conversation into a read model, one user
// per conversation, as engram's ingest would store them.
func loadLoCoMo(tb testing.TB, speakers bool) (*locomo.Dataset, *sqlite.Store) {
	tb.Helper()
	path := os.Getenv("LOCOMO")
	if path == "" {
		path = "../../testdata/locomo/locomo10.json" // see docs/benchmarks.md
		if _, err := os.Stat(path); err != nil {
			path = "../../../shared/data/locomo/locomo10.json"
		}
	}
	ds, err := locomo.Load(path)
	if err != nil {
		tb.Skipf("LoCoMo data not available: %v", err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "locomo.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Error(err)
		}
	})
	seq := uint64(0)
	for _, conv := range ds.Conversations {
		var batch []memory.Applied
		for _, s := range conv.Sessions {
			for _, t := range s.Turns {
				role := "user"
				if t.Speaker == conv.SpeakerB {
					role = "assistant"
				}
				d := &events.TurnRecorded{SessionID: fmt.Sprintf("session-%d", s.N), TurnIndex: t.Index, Role: role, Content: t.Text}
				if speakers {
					d.Speaker = t.Speaker
				}
				if t.BlipCaption != "" {
					d.Attachments = []events.Attachment{{Name: "image.jpg", Description: t.BlipCaption}}
				}
				seq++
				batch = append(batch, memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "locomo", ID: conv.ID + "/" + t.DiaID,
					Type: events.TypeTurnRecorded, Scope: memory.Scope{Namespace: "locomo", User: conv.ID},
					Time: s.Time.Add(time.Duration(t.Index) * time.Second)}, Data: d})
			}
		}
		for _, err := range st.Apply(context.Background(), batch) {
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	return ds, st
}

func diaIDs(conv *locomo.Conversation, turns []ScoredTurn) []string {
	var ids []string
	for _, t := range turns {
		n := 0
		_, _ = fmt.Sscanf(t.SessionID, "session-%d", &n) // a session id of another shape matches no session
		for _, s := range conv.Sessions {
			if s.N == n && t.TurnIndex < len(s.Turns) {
				ids = append(ids, s.Turns[t.TurnIndex].DiaID)
			}
		}
	}
	return ids
}

// TestLoCoMoExperiment prints recall for ranking variants on the tuning
// split (conversations 0–4; 5–9 are held out and only reported by make
// bench-locomo). It is a tool for tuning, run with
// ENGRAM_LOCOMO_EXPERIMENT=1, and ENGRAM_LOCOMO_VARIANTS a JSON list of
// TurnOptions to try beside the default.
func TestLoCoMoExperiment(t *testing.T) {
	t.Parallel()
	if os.Getenv("ENGRAM_LOCOMO_EXPERIMENT") == "" {
		t.Skip("set ENGRAM_LOCOMO_EXPERIMENT=1")
	}
	ds, st := loadLoCoMo(t, true)
	ds.Conversations = ds.Conversations[:5]
	variants := []TurnOptions{DefaultTurnOptions()}
	if v := os.Getenv("ENGRAM_LOCOMO_VARIANTS"); v != "" {
		if err := json.Unmarshal([]byte(v), &variants); err != nil {
			t.Fatal(err)
		}
	}
	for _, opt := range variants {
		rep, err := locomo.Evaluate(t.Context(), ds, func(ctx context.Context, conv *locomo.Conversation, q locomo.QA) ([]string, error) {
			// As /v1/context ranks them: a question naming a time prefers
			// what was said then.
			scope := memory.Scope{Namespace: "locomo", User: conv.ID}
			tw, err := askedWindow(ctx, st, scope, q.Question, time.Now(), SeedWeights().Time)
			if err != nil {
				return nil, err
			}
			turns, err := rankTurns(ctx, st, scope, textseg.Understand(q.Question), textseg.Query{}, tw, opt)
			return diaIDs(conv, turns), err
		}, locomo.DefaultKs)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Overall.Recall
		t.Logf("%+v R@5 %.3f R@10 %.3f R@25 %.3f R@50 %.3f", opt, r[5], r[10], r[25], r[50])
		for _, c := range rep.Categories {
			t.Logf("    %-14s n=%3d R@5 %.3f R@10 %.3f", locomo.CategoryName(c.Category), c.Questions, c.Recall[5], c.Recall[10])
		}
	}
}
