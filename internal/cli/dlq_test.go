package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap/zaptest"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// deadLetterOne runs engram on dir until its projector has dead-lettered
// one malformed event (id "bad-1"), then stops it. Only the projector
// runs, so that it is the one dead letter.
func deadLetterOne(t *testing.T, dir string) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = "127.0.0.1:0"
	cfg.ShutdownTimeout = 10 * time.Second
	a := app.New(cfg, app.RoleRetriever, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	bad, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": "bad-1", "source": "test", "type": "turn.recorded",
		"data": map[string]any{"session_id": "s", "turn_index": -1, "role": "user", "content": "x"}})
	js, closeJS := operatorJS(t, cfg, a.NATSURL())
	defer closeJS()
	if _, err := js.Publish(t.Context(), stream.Subject("default", "ann", "turn.recorded"), bad); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		dls, err := stream.ListDeadLetters(t.Context(), js, stream.DLQFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(dls) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d dead letters, want 1", len(dls))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With engram stopped, dlq opens the data dir itself: it lists, shows and
// redrives what the projector dead-lettered.
func TestDLQServerStopped(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "") // the embedded server, whatever the caller's environment says
	t.Setenv("COLUMNS", "100")
	dir := t.TempDir()
	deadLetterOne(t, dir)

	t.Run("ls", func(t *testing.T) {
		out, errOut, code := run(t, "dlq", "ls", "--data-dir", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "SEQ") {
			t.Fatalf("want a header and one row, got:\n%s", out)
		}
		fields := strings.Fields(lines[1])
		if len(fields) < 7 || fields[0] != "1" || !strings.HasPrefix(fields[3], "projector-") ||
			fields[4] != "turn.recorded" || fields[5] != "bad-1" {
			t.Fatalf("row = %q", lines[1])
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > 100 {
				t.Errorf("line of %d columns is wider than COLUMNS=100: %q", n, l)
			}
		}
	})

	t.Run("ls --json with filters", func(t *testing.T) {
		out, errOut, code := run(t, "dlq", "ls", "--json", "--subject", "mem.default.ann.>", "--data-dir", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var row dlqRow
		if err := json.Unmarshal([]byte(out), &row); err != nil {
			t.Fatalf("%v: %q", err, out)
		}
		if row.Seq != 1 || row.EventID != "bad-1" || row.OriginalSeq != 1 || row.Subject != "mem.default.ann.turn.recorded" || row.Reason == "" {
			t.Fatalf("row = %+v", row)
		}
		out, _, code = run(t, "dlq", "ls", "--json", "--consumer", "nobody", "--data-dir", dir)
		if code != 0 || out != "" {
			t.Fatalf("--consumer nobody: exit %d, output %q", code, out)
		}
	})

	t.Run("show", func(t *testing.T) {
		out, errOut, code := run(t, "dlq", "show", "1", "--data-dir", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{stream.HeaderDLQReason + ": ", stream.HeaderDLQConsumer + ": projector-", "\n  \"id\": \"bad-1\",\n", "\"turn_index\": -1"} {
			if !strings.Contains(out, want) {
				t.Errorf("show lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a locked data dir whose engram does not answer", func(t *testing.T) {
		unlock, err := app.LockDataDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		// Port 1: nothing listens there (the default 4222 may be anyone's).
		_, errOut, code := run(t, "dlq", "ls", "--data-dir", dir, "--nats-listen", "127.0.0.1:1")
		if code != 1 || !strings.Contains(errOut, "locked") {
			t.Fatalf("exit %d, stderr %q; want 1 and a lock error", code, errOut)
		}
	})

	t.Run("redrive", func(t *testing.T) {
		out, errOut, code := run(t, "dlq", "redrive", "1", "--data-dir", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.HasPrefix(out, "1 → ") {
			t.Fatalf("redrive printed %q", out)
		}
		if out, _, _ := run(t, "dlq", "ls", "--data-dir", dir); strings.TrimSpace(out) != "no dead letters" {
			t.Fatalf("ls after redrive: %q", out)
		}
		_, errOut, code = run(t, "dlq", "redrive", "1", "--data-dir", dir)
		if code != 1 || !strings.Contains(errOut, "no such dead letter") {
			t.Fatalf("second redrive: exit %d, stderr %q", code, errOut)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"dlq"}, {"dlq", "nope"}, {"dlq", "show"}, {"dlq", "show", "x"},
			{"dlq", "redrive"}, {"dlq", "redrive", "1", "--all"}, {"dlq", "redrive", "--consumer", "c", "1"},
		} {
			if _, _, code := run(t, append(args, "--data-dir", dir)...); code != 2 {
				t.Errorf("%q: exit %d, want 2", args, code)
			}
		}
	})
}

// operatorJS is the operator's JetStream on the NATS of a running engram
// at url (as `engram dlq` and kin open it), until closeFn.
func operatorJS(t *testing.T, cfg config.Config, url string) (js stream.JetStream, closeFn func()) {
	t.Helper()
	cfg.NATS.URL = url
	js, closeFn, err := app.OpenOperator(t.Context(), cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return js, closeFn
}
