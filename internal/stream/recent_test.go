package stream

import (
	"testing"

	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats.go"
)

// A consumer takes an event decoded from Recent only for the very message
// this process stored; any other message at that sequence (a recreated
// stream, another publisher's event, binary mode) is decoded and
// validated from its bytes, so an invalid one is still refused.
func TestRecentOnlyTheVeryMessage(t *testing.T) {
	t.Parallel()
	subject := Subject("default", "ann", events.TypeTurnRecorded)
	body := []byte(`{"specversion":"1.0","id":"t1","source":"test/agent","type":"turn.recorded","user":"ann",` +
		`"namespace":"default","time":"2026-01-01T00:00:00Z","data":{"session_id":"s1","turn_index":0,"role":"user","content":"hi"}}`)
	e, data, err := Decode(subject, nil, body, events.DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecent(4)
	r.Add([]Stored{{Seq: 5, Msg: &nats.Msg{Subject: subject, Data: body}, Event: e, Data: data},
		{Seq: 6, Msg: &nats.Msg{Subject: subject, Data: body}}}) // no data: not remembered
	if got, d, ok := r.lookup(5, subject, nil, body); !ok || got.ID() != "t1" || d != data {
		t.Fatalf("the very message: ok=%v id=%q", ok, got.ID())
	}
	invalid := []byte(`{"specversion":"1.0","id":"t1","source":"test/agent","type":"turn.recorded","user":"ann",` +
		`"data":{"session_id":"s1","turn_index":-1,"role":"user","content":"hi"}}`)
	for name, c := range map[string]struct {
		seq     uint64
		subject string
		hdr     nats.Header
		body    []byte
	}{
		"other bytes":     {5, subject, nil, invalid},
		"other subject":   {5, Subject("default", "bob", events.TypeTurnRecorded), nil, body},
		"other sequence":  {9, subject, nil, body},
		"not remembered":  {6, subject, nil, body},
		"binary mode":     {5, subject, nats.Header{"Ce-Specversion": {"1.0"}}, body},
		"binary, lowered": {5, subject, nats.Header{"ce-id": {"x"}}, body},
	} {
		if _, _, ok := r.lookup(c.seq, c.subject, c.hdr, c.body); ok {
			t.Errorf("%s: taken from Recent, want decoded", name)
		}
	}
	if _, _, err := Decode(subject, nil, invalid, events.DefaultMaxEventBytes); err == nil {
		t.Fatal("the invalid event decodes")
	}
	// The ring forgets what the next events take the place of.
	r.Add([]Stored{{Seq: 9, Msg: &nats.Msg{Subject: subject, Data: body}, Event: e, Data: data}})
	if _, _, ok := r.lookup(5, subject, nil, body); ok {
		t.Fatal("seq 5 still remembered after seq 9 took its place")
	}
	var none *Recent
	if _, _, ok := none.lookup(5, subject, nil, body); ok {
		t.Fatal("a nil Recent remembers")
	}
}
