package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/locomo"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// LoadLoCoMo ingests every conversation through the HTTP API, one user per
// conversation (so each has its own index, as the protocol asks): session N
// becomes session "session-N", speaker A is the user and B the assistant,
// and each session's date is its turns' event time. Images are kept as
// attachments with their caption as the description.
//
// With endSessions, each session is closed by a session.ended event, as an
// agent would, which is what hands its turns to extraction.
func LoadLoCoMo(ctx context.Context, e *Engram, ds *locomo.Dataset, endSessions bool) error {
	var top uint64
	for _, conv := range ds.Conversations {
		var raws []json.RawMessage
		for _, s := range conv.Sessions {
			for _, t := range s.Turns {
				role := "user"
				if t.Speaker == conv.SpeakerB {
					role = "assistant"
				}
				d := events.TurnRecorded{SessionID: fmt.Sprintf("session-%d", s.N), TurnIndex: t.Index, Role: role,
					Content: t.Text, Speaker: t.Speaker}
				if t.BlipCaption != "" {
					d.Attachments = []events.Attachment{{Name: "image.jpg", Mime: "image/jpeg", Description: t.BlipCaption}}
				}
				raw, err := json.Marshal(map[string]any{"specversion": "1.0", "id": conv.ID + "/" + t.DiaID,
					"source": "locomo", "type": events.TypeTurnRecorded, "namespace": "locomo", "user": conv.ID,
					"time": s.Time.Add(timeOffset(t.Index)).Format("2006-01-02T15:04:05Z07:00"), "subject": d.SessionID, "data": d})
				if err != nil {
					return err
				}
				raws = append(raws, raw)
			}
			if endSessions {
				d := events.SessionEnded{SessionID: fmt.Sprintf("session-%d", s.N), MessageCount: len(s.Turns), Reason: "done"}
				raw, err := json.Marshal(map[string]any{"specversion": "1.0", "id": fmt.Sprintf("%s/end-%d", conv.ID, s.N),
					"source": "locomo", "type": events.TypeSessionEnded, "namespace": "locomo", "user": conv.ID,
					"time": s.Time.Add(timeOffset(len(s.Turns))).Format("2006-01-02T15:04:05Z07:00"), "subject": d.SessionID, "data": d})
				if err != nil {
					return err
				}
				raws = append(raws, raw)
			}
		}
		for i := 0; i < len(raws); i += 500 {
			body, _ := json.Marshal(raws[i:min(i+500, len(raws))])
			seq, err := e.Post(ctx, "application/cloudevents-batch+json", body)
			if err != nil {
				return fmt.Errorf("load %s: %w", conv.ID, err)
			}
			top = max(top, seq)
		}
	}
	return e.WaitProjected(ctx, top)
}

// LoCoMoContext answers a question with /v1/context, as an agent asks
// before its next turn (no LLM, no embeddings), and reads the raw-turn
// evidence block in order.
func LoCoMoContext(e *Engram) locomo.Retriever {
	return func(ctx context.Context, conv *locomo.Conversation, q locomo.QA) ([]string, error) {
		body, _ := json.Marshal(map[string]any{"namespace": "locomo", "user": conv.ID, "query": q.Question,
			"force": true, "turn_limit": 50, "budget_tokens": 200000})
		req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/v1/context", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer quiet.Close(resp.Body)
		var out struct {
			Blocks struct {
				Turns []struct {
					SessionID string `json:"session_id"`
					TurnIndex *int   `json:"turn_index"`
				} `json:"turns"`
			} `json:"blocks"`
		}
		if resp.StatusCode != 200 {
			raw, _ := io.ReadAll(resp.Body)
			return nil, fmt.Errorf("context: %d %s", resp.StatusCode, raw)
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, err
		}
		var ids []string
		for _, t := range out.Blocks.Turns {
			n := 0
			if t.TurnIndex == nil {
				continue
			}
			if _, err := fmt.Sscanf(strings.TrimPrefix(t.SessionID, "session-"), "%d", &n); err != nil {
				continue
			}
			if turn, ok := turnAt(conv, n, *t.TurnIndex); ok {
				ids = append(ids, turn.DiaID)
			}
		}
		return ids, nil
	}
}

// LoCoMoSearch answers a question with /v1/search (turns only, top 50).
func LoCoMoSearch(e *Engram) locomo.Retriever {
	return func(ctx context.Context, conv *locomo.Conversation, q locomo.QA) ([]string, error) {
		res, err := e.Search(ctx, "locomo", conv.ID, q.Question, 50)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(res))
		for _, r := range res {
			n := 0
			if _, err := fmt.Sscanf(strings.TrimPrefix(r.SessionID, "session-"), "%d", &n); err != nil {
				continue
			}
			if t, ok := turnAt(conv, n, r.TurnIndex); ok {
				ids = append(ids, t.DiaID)
			}
		}
		return ids, nil
	}
}

func turnAt(conv *locomo.Conversation, session, index int) (locomo.Turn, bool) {
	for _, s := range conv.Sessions {
		if s.N == session && index >= 0 && index < len(s.Turns) {
			return s.Turns[index], true
		}
	}
	return locomo.Turn{}, false
}

// timeOffset spaces a session's turns a second apart, in order.
func timeOffset(i int) time.Duration { return time.Duration(i) * time.Second }

// waitExtracted waits until every LoCoMo turn is extracted and the
// memories written are in the read model, and returns how many there are.
func waitExtracted(ctx context.Context, e *Engram, ds *locomo.Dataset) (int, error) {
	if err := waitUnextracted(ctx, e); err != nil {
		return 0, err
	}
	if err := e.App.WaitCaughtUp(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range ds.Conversations {
		ms, err := e.App.Store().Memories(ctx, memory.MemoryQuery{Scope: memory.Scope{Namespace: "locomo", User: c.ID}, Limit: 1 << 20})
		if err != nil {
			return 0, err
		}
		n += len(ms)
	}
	return n, nil
}

// waitUnextracted waits until no turn is left to extract, for up to ten
// minutes.
func waitUnextracted(ctx context.Context, e *Engram) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		left, err := e.App.Store().Unextracted(ctx, time.Now().Add(24*365*time.Hour), 1)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("turns still unextracted after 10 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
