package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
)

// workersApart starts workers as separate processes would, against one
// external NATS, bus.
func workersApart(t *testing.T) (start func(roles Roles, dir string) *App, bus *testBus) {
	t.Helper()
	bus = externalNATS(t)
	return func(roles Roles, dir string) *App {
		t.Helper()
		cfg := WorkerDefaults(testConfig(t, dir), "127.0.0.1:0")
		if roles&(RoleIngest|RoleRetriever) == 0 {
			cfg.HTTP.Addr = ""
		}
		bus.use(&cfg)
		return startApp(t, cfg, roles)
	}, bus
}

// The consolidator run apart does what it does in the single binary:
// session episodes, the scratchpad, the scheduled jobs and the core
// profile, from a read model of its own.
func TestConsolidatorApartDoesEverything(t *testing.T) {
	t.Parallel()
	start, bus := workersApart(t)
	ingest := start(RoleIngest, t.TempDir())
	retriever := start(RoleRetriever, t.TempDir())
	start(RoleExtractor, t.TempDir())
	start(RoleConsolidator, t.TempDir())
	base := "http://" + retriever.HTTPAddr()

	evs := append(conversation("a", "ana", "s1"), endEvent("a-end", "ana", "s1", 4))
	mustAccept(t, postBatch(t, ingest, evs...))
	wait.Until(t, "ana's session episode", func() bool {
		eps := episodesOf(t, base, "default", "ana")
		return len(eps) == 1 && eps[0].Source == events.SourceSessionEnd && strings.Contains(eps[0].Summary, "billing")
	})
	wait.Until(t, "ana's scratchpad", func() bool {
		pad := scratchpadOf(t, base, "ana")
		return pad.Source == events.SourceEpisode && strings.Contains(pad.Content, "Atlas")
	})

	postMemory(t, retriever, `{"user":"kim","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"The user's name is Kim","importance":0.95}`)
	body, _ := json.Marshal(JobRequest{Job: "weekly"})
	// Running a job is the operator's (engram rules run).
	msg, err := bus.op.Conn().Request(JobSubject, body, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply JobReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || len(reply.Ran) != 3 {
		t.Fatalf("weekly: %s (%v)", msg.Data, err)
	}
	wait.Until(t, "kim's core profile", func() bool {
		var prof struct{ Core []memory.Memory }
		getJSON(t, base, "/v1/profile?user=kim", &prof)
		return len(prof.Core) == 1 && prof.Core[0].Content == "The user's name is Kim"
	})
}

// An extractor run apart and restarted while a session's turns wait
// extracts them: the new process finds them in its read model.
func TestExtractorApartRecoversAfterRestart(t *testing.T) {
	t.Parallel()
	start, _ := workersApart(t)
	ingest := start(RoleIngest, t.TempDir())
	retriever := start(RoleRetriever, t.TempDir())
	dir := t.TempDir()
	x := start(RoleExtractor, dir)
	r := postEvent(t, ingest, turnEvent("zh-0", "lilei", "s1", 0, "user", "我叫李雷，我喜欢喝美式咖啡"))
	mustAccept(t, r)
	// The batcher has the turn (its consumer moved past it) and waits
	// for the quiet gap; the process stops before it comes.
	wait.Until(t, "the extractor's read model and batcher to take the turn", func() bool {
		if x.Store() != nil {
			if got, err := x.Store().LastSeq(t.Context()); err != nil || got < lastSeqOf(r) {
				return false
			}
		}
		s, err := jsOf(x).Consumer(t.Context(), "MEMORY", "batcher")
		if err != nil {
			return false
		}
		info, err := s.Info(t.Context())
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})
	stopApp(t, x)

	start(RoleExtractor, dir)
	mustAccept(t, postEvent(t, ingest, endEvent("zh-end", "lilei", "s1", 1)))
	wait.Until(t, "lilei's memories", func() bool {
		r := do(t, "GET", "http://"+retriever.HTTPAddr()+"/v1/memories?user=lilei", "", nil, nil)
		return strings.Contains(r.Raw, "美式咖啡")
	})
}

// A worker taking a partition waits for its read model to pass the
// stream's head; a malformed event there (dead-lettered, so the read
// model's position never reaches it) is passed once the projector has
// acknowledged it, not after the two-minute limit.
func TestCatchUpPassesADeadLetteredHead(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	sent := postEvent(t, a, turnEvent("ok-1", "ann", "s1", 0, "user", "hello"))
	mustAccept(t, sent)
	// Settled, so the turn's reading is in before the malformed event.
	waitSettled(t, a)
	bad := `{"specversion":"1.0","type":"turn.recorded","source":"test/agent","id":"bad-1","subject":"ann",` +
		`"time":"2026-01-02T03:04:05Z","namespace":"default","data":{"session_id":"s1","turn_index":-1,"role":"user"}}`
	ack, err := jsOf(a).Publish(t.Context(), stream.Subject("default", "ann", events.TypeTurnRecorded), []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := a.waitPassed(ctx, ack.Sequence); err != nil {
		t.Fatalf("the read model never passed the dead-lettered event at the head (seq %d): %v", ack.Sequence, err)
	}
	if got, _ := a.Store().LastSeq(t.Context()); got >= ack.Sequence {
		t.Fatalf("the read model's position %d reached the malformed event %d", got, ack.Sequence)
	}
}
