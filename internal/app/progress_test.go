package app

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/migrate"
	"go.uber.org/zap/zaptest"
)

// Progress written to a file or a pipe (not a terminal) comes as plain
// lines, ending with the total.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	var out bytes.Buffer
	rep, err := Migrate(t.Context(), cfg, MigrateOptions{System: SystemMyclaw, Dir: "../migrate/testdata/myclaw",
		Options: migrate.Options{User: "yang"}, Progress: &out}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.ContainsAny(text, "\r\x1b") {
		t.Fatalf("progress has terminal control characters: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	last := lines[len(lines)-1]
	want := "migrate myclaw: " + itoa(rep.Events) + "/" + itoa(rep.Events) + " events"
	if !strings.HasPrefix(last, want) {
		t.Fatalf("last progress line %q, want it to start %q; all: %q", last, want, text)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
