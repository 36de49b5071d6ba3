package episode

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExtractiveGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenSessions {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name+".json", marshal(t, Extractive(tc.in())))
		})
	}
}

// TestScratchpadGolden folds three episodes into a scratchpad, in each
// language, and pins each rendering.
func TestScratchpadGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		sessions []func() Input
	}{
		{"en", []func() Input{enAbandoned, enFixDeploy, enFailed}},
		{"zh", []func() Input{zhAbandoned, zhCompression, zhFixDeploy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pad memory.Scratchpad
			for i, session := range tc.sessions {
				in := laterBy(session(), i)
				pad = UpdateScratchpad(pad, Extractive(in), t0.Add(time.Duration(i)*24*time.Hour))
				golden(t, "scratchpad_"+tc.name+"_"+string(rune('1'+i))+".md", []byte(pad.Content))
			}
			pad.Content = ""
			golden(t, "scratchpad_"+tc.name+".json", marshal(t, pad))
		})
	}
}

// laterBy moves a session days later.
func laterBy(in Input, days int) Input {
	for i := range in.Turns {
		in.Turns[i].Time = in.Turns[i].Time.AddDate(0, 0, days)
	}
	return in
}
