package app

import (
	"encoding/json"
	"testing"

	"github.com/engramhq/engram/internal/stream"
)

// A dead letter redriven goes back to the worker that gave up on it, not
// to every worker of the subject: one redriven dead letter that fails
// again makes one new dead letter, not one per worker.
func TestRedriveReachesOnlyTheConsumerThatFailed(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	bad, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": "bad-1", "source": "test", "type": "turn.recorded",
		"data": map[string]any{"session_id": "s", "turn_index": -1, "role": "user", "content": "x"}})
	if _, err := jsOf(a).Publish(t.Context(), stream.Subject("default", "ann", "turn.recorded"), bad); err != nil {
		t.Fatal(err)
	}
	// A good event after it, so the read model's position passes the bad one.
	mustAccept(t, postEvent(t, a, turnEvent("good-1", "ann", "s", 0, "user", "hello")))
	waitSettled(t, a)
	before, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var batcher uint64
	for _, d := range before {
		if d.Consumer == "batcher" {
			batcher = d.Seq
		}
	}
	if len(before) < 2 || batcher == 0 {
		t.Fatalf("dead letters %+v: want the batcher's and another's", before)
	}
	if _, err := stream.Redrive(t.Context(), jsOf(a), batcher); err != nil {
		t.Fatal(err)
	}
	mustAccept(t, postEvent(t, a, turnEvent("good-2", "ann", "s", 1, "user", "hello again")))
	waitSettled(t, a)
	after, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		var who []string
		for _, d := range after {
			who = append(who, d.Consumer)
		}
		t.Fatalf("%d dead letters before the redrive, %d after (%v): the redrive reached other workers", len(before), len(after), who)
	}
	if last := after[len(after)-1]; last.Consumer != "batcher" {
		t.Fatalf("the new dead letter is %s's, want the batcher's", last.Consumer)
	}
}
