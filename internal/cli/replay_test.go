package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// engram replay of the extractor while engram runs is refused and
// changes nothing; with engram stopped it goes ahead, and the extractor,
// seeing every request again at its next start, asks the model about none
// of them: their extractions are in the stream already.
func TestReplayOfLiveExtractorThenNoModelCallTwice(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	srv := llmtest.New(t)
	srv.Reply(func(llmtest.ChatRequest) string {
		return `{"facts":[{"subject":"user","predicate":"likes","content":"The user likes hiking","kind":"preference","category":"config","importance":0.5,"confidence":0.9}]}`
	})
	cfg := config.Default()
	cfg.DataDir, cfg.HTTP.Addr, cfg.NATS.Listen, cfg.ShutdownTimeout = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", 10*time.Second
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	start := func() *app.App {
		t.Helper()
		a := app.New(cfg, app.RoleAll, zaptest.NewLogger(t))
		if err := a.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		return a
	}
	stop := func(a *app.App) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	// settled waits until the extractor has nothing waiting or in progress.
	settled := func(a *app.App, what string) {
		t.Helper()
		js, closeJS := operatorJS(t, cfg, a.NATSURL())
		defer closeJS()
		deadline := time.Now().Add(30 * time.Second)
		for calm := 0; calm < 20; {
			c, err := js.Consumer(t.Context(), stream.MemoryStream, "extractor")
			var info *jetstream.ConsumerInfo
			if err == nil {
				info, err = c.Info(t.Context())
			}
			if err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Stream > 0 {
				calm++
			} else {
				calm = 0
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the extractor never settled (%+v, %v)", what, info, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	a := start()
	for s := range 3 {
		var evs []string
		for i, c := range []string{"I went hiking on Saturday.", "Nice! Where?", "Up the ridge behind the lake."} {
			evs = append(evs, fmt.Sprintf(`{"specversion":"1.0","id":"s%d-t%d","source":"test","type":"turn.recorded","user":"ann",`+
				`"data":{"session_id":"s%d","turn_index":%d,"role":%q,"content":%q}}`, s, i, s, i, []string{"user", "assistant"}[i%2], c))
		}
		evs = append(evs, fmt.Sprintf(`{"specversion":"1.0","id":"s%d-end","source":"test","type":"session.ended","user":"ann",`+
			`"data":{"session_id":"s%d","message_count":3,"reason":"done"}}`, s, s))
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents-batch+json",
			strings.NewReader("["+strings.Join(evs, ",")+"]"))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
		if resp.StatusCode != 202 && resp.StatusCode != 200 {
			t.Fatalf("post: %d", resp.StatusCode)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for srv.Calls() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the model was asked %d times, want 3", srv.Calls())
		}
		time.Sleep(10 * time.Millisecond)
	}
	settled(a, "first run")
	calls := srv.Calls()

	out, errOut, code := run(t, "replay", "--nats-url", a.NATSURL(), "--data-dir", cfg.DataDir, "--consumer", "extractor", "--from", "1")
	if code != 1 || !strings.Contains(errOut, "its workers are running") {
		t.Fatalf("replay of a live extractor: exit %d: %s %s", code, out, errOut)
	}
	js, closeJS := operatorJS(t, cfg, a.NATSURL())
	c, err := js.Consumer(t.Context(), stream.MemoryStream, "extractor")
	closeJS()
	if err != nil || c.CachedInfo().Config.DeliverPolicy != jetstream.DeliverAllPolicy || c.CachedInfo().Delivered.Stream == 0 {
		t.Fatalf("the extractor's consumer after a refused replay: %+v, %v", c, err)
	}
	stop(a)

	if out, errOut, code := run(t, "replay", "--data-dir", cfg.DataDir, "--consumer", "extractor", "--from", "1"); code != 0 {
		t.Fatalf("replay of a stopped extractor: exit %d: %s %s", code, out, errOut)
	}
	a = start()
	defer stop(a)
	settled(a, "after the replay")
	if got := srv.Calls(); got != calls {
		t.Fatalf("the model was asked %d times more after the replay, want none", got-calls)
	}
}
