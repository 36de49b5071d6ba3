package events_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/engramhq/engram/events"
)

func ExampleNew() {
	e, err := events.New("urn:agent:helpdesk", events.TypeTurnRecorded, "acme", "alice", events.TurnRecorded{
		SessionID: "s-42",
		TurnIndex: 0,
		Role:      events.RoleUser,
		Content:   "Remember that I prefer tea.",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	e.SetExtension(events.ExtAgent, "helpdesk")

	// The event as it goes on the wire (structured mode), minus the id and
	// time, which differ on every run.
	b, _ := json.Marshal(e)
	var wire map[string]any
	_ = json.Unmarshal(b, &wire)
	delete(wire, "id")
	delete(wire, "time")
	out, _ := json.MarshalIndent(wire, "", "  ")
	fmt.Println(string(out))

	// A bad event names the field.
	_, err = events.New("urn:agent:helpdesk", events.TypeTurnRecorded, "acme", "alice", events.TurnRecorded{
		SessionID: "s-42",
		Role:      "bot",
		Content:   "hi",
	})
	fmt.Println(err)
	// Output:
	// {
	//   "agent": "helpdesk",
	//   "data": {
	//     "content": "Remember that I prefer tea.",
	//     "role": "user",
	//     "session_id": "s-42",
	//     "turn_index": 0
	//   },
	//   "datacontenttype": "application/json",
	//   "namespace": "acme",
	//   "source": "urn:agent:helpdesk",
	//   "specversion": "1.0",
	//   "subject": "s-42",
	//   "type": "turn.recorded",
	//   "user": "alice"
	// }
	// new turn.recorded event: data.role: must be user, assistant, system or tool, not "bot"
}

func ExampleNewDerived() {
	// The extractor's result for a request: its id and time come from the
	// request, so a retried publish or a replay makes the same event and
	// the stream keeps one.
	requestID := "r-7"
	requested := time.Date(2025, 6, 1, 9, 33, 0, 0, time.UTC)
	e, err := events.NewDerived("urn:engram:extractor", events.TypeMemoryExtracted, "extracted-"+requestID,
		"acme", "alice", requested, events.MemoryExtracted{
			RequestID: requestID,
			SessionID: "s-42",
			Extractor: events.ExtractorRules,
			Turns:     []int{0, 1},
			Candidates: []events.Candidate{{
				Kind: events.KindPreference, Category: events.CategoryConfig,
				Subject: "user", Predicate: "prefers", Content: "prefers tea",
				Importance: 0.6, Confidence: 0.7,
			}},
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.MarshalIndent(e, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "specversion": "1.0",
	//   "id": "extracted-r-7",
	//   "source": "urn:engram:extractor",
	//   "type": "memory.extracted",
	//   "subject": "s-42",
	//   "datacontenttype": "application/json",
	//   "time": "2025-06-01T09:33:00Z",
	//   "data": {
	//     "request_id": "r-7",
	//     "session_id": "s-42",
	//     "extractor": "rules",
	//     "usage": {
	//       "prompt_tokens": 0,
	//       "completion_tokens": 0
	//     },
	//     "calls": 0,
	//     "turns": [
	//       0,
	//       1
	//     ],
	//     "candidates": [
	//       {
	//         "kind": "preference",
	//         "category": "config",
	//         "subject": "user",
	//         "predicate": "prefers",
	//         "content": "prefers tea",
	//         "importance": 0.6,
	//         "confidence": 0.7
	//       }
	//     ]
	//   },
	//   "namespace": "acme",
	//   "user": "alice"
	// }
}
