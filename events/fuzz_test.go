package events_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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

// The seed corpus says by name what it holds: valid_* seeds must decode
// and invalid_* seeds must not, or the fuzzer starts from the wrong place.
func TestFuzzSeeds(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/fuzz/FuzzDecodeStructured/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			header, arg, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
			lit, ok := strings.CutPrefix(arg, "[]byte(")
			if header != "go test fuzz v1" || !ok {
				t.Fatalf("not a one-argument seed file: %q", b)
			}
			body, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = events.DecodeStructured([]byte(body), 64<<10)
			switch base := filepath.Base(name); {
			case strings.HasPrefix(base, "valid_") && err != nil:
				t.Fatalf("valid seed refused: %v", err)
			case strings.HasPrefix(base, "invalid_") && err == nil:
				t.Fatal("invalid seed accepted")
			}
		})
	}
}
