package events_test

import (
	"encoding/json"
	"fmt"

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
