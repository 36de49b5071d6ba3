package events_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/engramhq/engram/events"
)

// FuzzDecodeStructured: decoding never panics, every refusal is a
// *FieldError, and an accepted event is the same event after a round trip
// through sdk-go's JSON encoding (what ingest stores and workers read).
func FuzzDecodeStructured(f *testing.F) {
	for _, s := range eventSamples {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, data, err := events.DecodeStructured(b, 64<<10)
		if err != nil {
			var fe *events.FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Problem == "" {
				t.Fatalf("err=%#v, want a *FieldError naming a field", err)
			}
			return
		}
		again, err := e.MarshalJSON() // not json.Marshal, which re-compacts data
		if err != nil {
			t.Fatalf("encode the accepted event: %v", err)
		}
		e2, data2, err := events.DecodeStructured(again, 0)
		if err != nil {
			t.Fatalf("decode the re-encoded event: %v\nin:  %q\nout: %q", err, b, again)
		}
		if msg := sameEvent(e, e2); msg != "" {
			t.Fatalf("round trip changed the event: %s\nin:  %q\nout: %q", msg, b, again)
		}
		if !reflect.DeepEqual(data, data2) {
			t.Fatalf("round trip changed the data: %+v != %+v", data, data2)
		}
	})
}
