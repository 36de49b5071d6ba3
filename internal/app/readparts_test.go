package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// readWorker starts a retriever or an ingest apart on url, sharing
// partitions partitions with its peers, with fast leases, the clock of
// answers fixed and no access published while the test compares answers.
func readWorker(t *testing.T, url, name string, roles Roles, partitions int) *App {
	t.Helper()
	cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
	cfg.NATS.URL, cfg.Instance, cfg.Partitions = url, name, partitions
	a := New(cfg, roles, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Named(name))
	a.leaseTTL = time.Second
	a.accessEvery = time.Hour
	now := time.Date(2026, 1, 9, 12, 0, 0, 0, time.UTC)
	a.retrievalNow = func() time.Time { return now }
	if err := a.Open(t.Context()); err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	return a
}

// readUsers fills users users through front: turns, and memories added
// through the write API (forwarded to each user's partition), each
// waited for.
func readUsers(t *testing.T, front *App, users int) {
	t.Helper()
	var evs []any
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		for i, text := range []string{"我住在杭州，每天骑车上班", "We deploy the billing service on Fridays", "我喜欢喝咖啡 but not after 3pm"} {
			evs = append(evs, turnEvent(fmt.Sprintf("%s-t%d", user, i), user, "s1", i, "user", fmt.Sprintf("%s (%d)", text, u)))
		}
	}
	mustAccept(t, postBatch(t, front, evs...))
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		for i, m := range []string{`"kind":"fact","category":"event","subject":"user","predicate":"lives_in","content":"The user lives in Hangzhou (%d)"`,
			`"kind":"preference","category":"config","subject":"user","predicate":"drinks","content":"The user drinks coffee before 3pm (%d)"`} {
			body := fmt.Sprintf(`{"user":%q,`+m+`,"importance":0.%d}`, user, u, 5+i)
			r := do(t, "POST", "http://"+front.HTTPAddr()+"/v1/memories?wait=true", "application/json", []byte(body),
				map[string]string{"Idempotency-Key": fmt.Sprintf("%s-m%d", user, i)})
			if r.Status != 202 {
				t.Fatalf("add a memory for %s through %s: %d %s", user, front.Config.Instance, r.Status, r.Raw)
			}
		}
	}
}

// rowNumbers are what an answer says that depends on how the read model
// that answers numbers its rows: a turn's id is its row number, which a
// copy of one partition counts among its own users' turns only
// (docs/scale.md, "What differs from the single binary"), and its token
// count includes its provenance, which names the id. The turn itself is
// named by its session and index, which stay.
var rowNumbers = regexp.MustCompile(`\bt_[0-9]+\b|"tokens":[0-9]+`)

// answers are a user's context block and search results through api,
// row numbers left out.
func answers(t *testing.T, api *App, user string) (ctxBlock, search string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"user": user, "query": "where do I live and what do I drink?", "budget_tokens": 2000})
	r := do(t, "POST", "http://"+api.HTTPAddr()+"/v1/context", "application/json", body, nil)
	if r.Status != 200 {
		t.Fatalf("context of %s through %s: %d %s", user, api.Config.Instance, r.Status, r.Raw)
	}
	v := url.Values{"user": {user}, "q": {"杭州 coffee"}}
	s := do(t, "GET", "http://"+api.HTTPAddr()+"/v1/search?"+v.Encode(), "", nil, nil)
	if s.Status != 200 {
		t.Fatalf("search of %s through %s: %d %s", user, api.Config.Instance, s.Status, s.Raw)
	}
	return rowNumbers.ReplaceAllString(r.Raw, "#"), rowNumbers.ReplaceAllString(s.Raw, "#")
}

// allServing waits until the retrievers hold every partition between
// them, each copy serving.
func allServing(t *testing.T, partitions int, rs ...*App) {
	t.Helper()
	waitFor(t, "every partition held and served", func() bool {
		held := 0
		for _, r := range rs {
			if r.Readiness(t.Context()) != nil {
				return false
			}
			r.reads.mu.Lock()
			for _, part := range r.reads.parts {
				if part.held.Load() {
					held++
				}
			}
			r.reads.mu.Unlock()
		}
		return held == partitions
	})
}

// Two retrievers share four partitions: each keeps only its partitions'
// users, and every user's context and search answer through either of
// them, and through an ingest, as a retriever with the whole read model
// answers.
func TestReadPartitionsAnswerAsWhole(t *testing.T) {
	const partitions, users = 4, 12
	url := externalNATS(t)
	ingest := readWorker(t, url, "ingest", RoleIngest, partitions)
	whole := readWorker(t, url, "whole", RoleRetriever, 1)
	r1 := readWorker(t, url, "r1", RoleRetriever, partitions)
	r2 := readWorker(t, url, "r2", RoleRetriever, partitions)
	allServing(t, partitions, r1, r2)
	readUsers(t, ingest, users)
	waitSettled(t, whole)

	for _, r := range []*App{r1, r2} {
		r.reads.mu.Lock()
		var held []int
		for p, part := range r.reads.parts {
			held = append(held, p)
			rows, err := part.store.Users(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range rows {
				if got := stream.PartitionOf(sc.Namespace, sc.User, partitions); got != p {
					t.Errorf("%s: copy of partition %d holds %s, of partition %d", r.Config.Instance, p, sc.User, got)
				}
			}
		}
		r.reads.mu.Unlock()
		if len(held) != partitions/2 {
			t.Errorf("%s holds partitions %v, want %d of them", r.Config.Instance, held, partitions/2)
		}
		if r.Store() != nil {
			t.Errorf("%s keeps a whole read model", r.Config.Instance)
		}
	}

	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		wantCtx, wantSearch := answers(t, whole, user)
		if !bytes.Contains([]byte(wantCtx), []byte("Hangzhou")) {
			t.Fatalf("the whole read model's context of %s lacks its memory: %s", user, wantCtx)
		}
		for _, front := range []*App{ingest, r1, r2} {
			gotCtx, gotSearch := answers(t, front, user)
			if gotCtx != wantCtx {
				t.Errorf("context of %s through %s:\n%s\nwant (whole read model):\n%s", user, front.Config.Instance, gotCtx, wantCtx)
			}
			if gotSearch != wantSearch {
				t.Errorf("search of %s through %s:\n%s\nwant (whole read model):\n%s", user, front.Config.Instance, gotSearch, wantSearch)
			}
		}
	}

	for p := range partitions {
		r := do(t, "GET", fmt.Sprintf("http://%s/readyz?partition=%d", ingest.HTTPAddr(), p), "", nil, nil)
		if by, _ := r.Body["served_by"].(string); r.Status != 200 || by != "r1" && by != "r2" {
			t.Errorf("readyz of partition %d: %d %s", p, r.Status, r.Raw)
		}
	}
	if r := do(t, "GET", fmt.Sprintf("http://%s/readyz?partition=%d", ingest.HTTPAddr(), partitions), "", nil, nil); r.Status != 400 {
		t.Errorf("readyz of partition %d of %d: %d %s, want 400", partitions, partitions, r.Status, r.Raw)
	}
}
