package extraction

import (
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// startRules runs a batcher whose triggers are the rule file given.
func startRules(t *testing.T, file string) (*Batcher, *recorder) {
	set, err := rules.LoadFS(fstest.MapFS{"x.yaml": {Data: []byte(file)}}, events.Types())
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	b := NewBatcher(DefaultConfig(), r.emit, zap.NewNop())
	b.Rules = func() *rules.Set { return set }
	runBatcher(t, b, nil)
	return b, r
}

// applied is an event of the test user.
func applied(typ string, data any) memory.Applied {
	return memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: typ}, Data: data}
}

// The quiet gap and token cap are the rules': a when: gives one user a
// shorter gap, another none at all, and the cap is the rule's number.
func TestRulesSetQuietGapAndTokenCap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, r := startRules(t, `
rules:
  - name: quiet_for_u
    on: turn.recorded
    when: {field: user, op: eq, value: u}
    do: [{extract_now: {reason: quiet, quiet_gap: 1m}}]
  - name: cap
    on: turn.recorded
    do: [{extract_now: {reason: token_cap, token_cap: 200}}]
`)
		other := memory.Scope{Namespace: "default", User: "v"}
		handle(t, b, turn("s1", 0, "hello"))
		vt := turn("s1", 0, "hello")
		vt.Scope = other
		handle(t, b, vt)
		time.Sleep(61 * time.Second)
		synctest.Wait()
		got := r.requests()
		if len(got) != 1 || got[0].Reason != ReasonQuiet {
			t.Fatalf("after 61s: %+v, want u's quiet request only", got)
		}
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if n := len(r.requests()); n != 1 {
			t.Fatalf("%d requests: v has no quiet rule and no sweep, want none for v", n)
		}
		vt = turn("s1", 1, strings.Repeat("长", 200))
		vt.Scope = other
		handle(t, b, vt)
		if got := r.requests(); len(got) != 2 || got[1].Reason != ReasonTokenCap || len(got[1].Turns) != 2 {
			t.Fatalf("at the rule's token cap: %+v", got)
		}
	})
}

// Without a rule on context.compressing or session.ended nothing is
// requested on them; a request made elsewhere takes the turns it covers.
func TestNoRuleNoTrigger(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, r := startRules(t, `
rules:
  - name: end
    on: session.ended
    do: [{extract_now: {min_messages: 3}}]
`)
		handle(t, b, turn("s1", 0, "a"), turn("s1", 1, "b"))
		handle(t, b, applied(events.TypeContextCompressing,
			&events.ContextCompressing{SessionID: "s1", Turns: []events.TurnRecorded{{TurnIndex: 2, Role: "user", Content: "c"}}}))
		handle(t, b, applied(events.TypeSessionEnded, &events.SessionEnded{SessionID: "s1", MessageCount: 2}))
		if n := len(r.requests()); n != 0 {
			t.Fatalf("%d requests, want none: no compression rule, and 2 messages is below min_messages", n)
		}
		// A scheduled extract_now asked for turn 0; the session's end (3
		// messages now) asks for the rest only.
		handle(t, b, applied(events.TypeExtractionRequested,
			&events.ExtractionRequested{SessionID: "s1", Turns: []events.ExtractionTurn{{TurnIndex: 0}}}))
		handle(t, b, applied(events.TypeSessionEnded, &events.SessionEnded{SessionID: "s1", MessageCount: 3}))
		got := r.requests()
		if len(got) != 1 || got[0].Reason != ReasonEnded || len(indices(got[0].Turns)) != 2 || indices(got[0].Turns)[0] != 1 {
			t.Fatalf("requests = %+v, want one session_ended request of turns 1 and 2", got)
		}
	})
}

// A session no rule will extract is not held forever: after a day idle
// the nightly reset forgets it (the read model still has its turns).
func TestIdleSessionsWithoutTriggerAreForgotten(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, _ := startRules(t, `
rules:
  - name: end
    on: session.ended
    do: [extract_now]
`)
		handle(t, b, turn("s1", 0, "a"))
		held := func() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.sessions) }
		time.Sleep(23 * time.Hour)
		synctest.Wait()
		if held() != 1 {
			t.Fatal("session forgotten within a day")
		}
		time.Sleep(26 * time.Hour)
		synctest.Wait()
		if n := held(); n != 0 {
			t.Fatalf("%d sessions held after two idle days, want 0", n)
		}
	})
}
