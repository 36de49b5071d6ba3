package embedding

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/zap/zaptest"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
)

var (
	alice = memory.Scope{Namespace: "acme", User: "alice"}
	bob   = memory.Scope{Namespace: "acme", User: "bob"}
	t0    = time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
)

// published is one event the recorder took, as a consumer decoded it.
type published struct {
	id    string
	scope memory.Scope
	time  time.Time
	data  *events.MemoryEmbedded
}

// recorder is an Emitter that builds each event as the app's emitter
// does, and decodes it as a consumer would, within the size limit.
type recorder struct {
	maxBytes int

	mu   sync.Mutex
	fail error
	evs  []published
}

func (r *recorder) emit(_ context.Context, outs ...memory.Outgoing) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	var got []published
	for _, o := range outs {
		e, err := events.NewDerived(Source, o.Type, o.ID, o.Scope.Namespace, o.Scope.User, o.Time, o.Data)
		if err != nil {
			return err
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		ev, data, err := events.DecodeStructured(b, r.maxBytes)
		if err != nil {
			return fmt.Errorf("a consumer would refuse %s: %w", o.ID, err)
		}
		if ev.Subject() != "" {
			return fmt.Errorf("%s has subject %q", o.ID, ev.Subject())
		}
		got = append(got, published{id: ev.ID(), scope: memory.Scope{Namespace: events.Namespace(ev), User: events.User(ev)},
			time: ev.Time(), data: data.(*events.MemoryEmbedded)})
	}
	r.evs = append(r.evs, got...)
	return nil
}

func (r *recorder) events() []published {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

func (r *recorder) setFail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

const dims = 64

// setup starts llmtest with dims-long vectors and an Embedder on it.
func setup(t *testing.T, cfg Config) (*llmtest.Server, *recorder, *Embedder) {
	t.Helper()
	srv := llmtest.New(t)
	srv.SetDims(dims)
	client, err := llm.New(srv.Config(), srv.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model == "" {
		cfg.Model = llmtest.DefaultModel
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{maxBytes: cfg.withDefaults().MaxEventBytes}
	return srv, rec, New(cfg, client, rec.emit, zaptest.NewLogger(t))
}

func applied(scope memory.Scope, typ string, at time.Time, data any) memory.Applied {
	return memory.Applied{Envelope: memory.Envelope{Type: typ, Scope: scope, Time: at, ID: fmt.Sprint("e-", at.UnixNano())}, Data: data}
}

func added(scope memory.Scope, at time.Time, content string) memory.Applied {
	return applied(scope, events.TypeMemoryAdded, at, &events.MemoryAdded{Kind: events.KindFact, Category: events.CategoryEvent,
		Subject: "user", Predicate: "p", Content: content, Importance: 0.5, Confidence: 1})
}

func extracted(scope memory.Scope, at time.Time, contents ...string) memory.Applied {
	x := &events.MemoryExtracted{RequestID: "r", SessionID: "s", Extractor: events.ExtractorLLM, Turns: []int{0}}
	for _, c := range contents {
		x.Candidates = append(x.Candidates, events.Candidate{Kind: events.KindFact, Category: events.CategoryEvent,
			Subject: "user", Predicate: "p", Content: c, Importance: 0.5, Confidence: 0.9})
	}
	return applied(scope, events.TypeMemoryExtracted, at, x)
}

func updated(scope memory.Scope, at time.Time, content *string) memory.Applied {
	imp := 0.7
	return applied(scope, events.TypeMemoryUpdated, at, &events.MemoryUpdated{MemoryID: "m1", Content: content, Importance: &imp})
}

func merged(scope memory.Scope, at time.Time, content string) memory.Applied {
	d := &events.MemoriesMerged{Into: "m1", Merged: []string{"m2"}, Importance: 0.8, ClusterID: "c"}
	if content != "" {
		d.Content = &content
	}
	return applied(scope, events.TypeMemoriesMerged, at, d)
}

func deleted(scope memory.Scope, at time.Time) memory.Applied {
	return applied(scope, events.TypeMemoryDeleted, at, &events.MemoryDeleted{MemoryID: "m1"})
}

func ptr(s string) *string { return &s }

// vectorsOf returns an event's vectors by hash.
func vectorsOf(p published) map[string][]float32 {
	out := map[string][]float32{}
	for _, v := range p.data.Vectors {
		out[v.Hash] = v.Vector
	}
	return out
}

// want returns what llmtest embeds each text as, by hash.
func want(texts ...string) map[string][]float32 {
	out := map[string][]float32{}
	for _, s := range texts {
		out[events.TextHash(s)] = llmtest.Embedding(s, dims)
	}
	return out
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("errs[%d]=%v", i, err)
		}
	}
}

// mixed is a batch of two scopes, with every kind of text source, a
// repeat within alice and events that bring no text.
func mixed() []memory.Applied {
	return []memory.Applied{
		extracted(alice, t0, "prefers green tea", "名字是小明", ""),
		added(bob, t0.Add(time.Second), "uses vim"),
		deleted(alice, t0.Add(2*time.Second)),
		added(alice, t0.Add(3*time.Second), "prefers green tea"),
		updated(bob, t0.Add(4*time.Second), ptr("uses neovim")),
		updated(bob, t0.Add(5*time.Second), nil),
		merged(alice, t0.Add(6*time.Second), "works at engram"),
		merged(bob, t0.Add(7*time.Second), ""),
	}
}

func TestHandleScopes(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	noErrors(t, e.Handle(t.Context(), mixed()))
	evs := rec.events()
	if got, want := len(evs), 2; got != want {
		t.Fatalf("%d events, want %d: %+v", got, want, evs)
	}
	for _, c := range []struct {
		scope  memory.Scope
		texts  []string
		latest time.Time
	}{
		{alice, []string{"prefers green tea", "名字是小明", "works at engram"}, t0.Add(6 * time.Second)},
		{bob, []string{"uses vim", "uses neovim"}, t0.Add(4 * time.Second)},
	} {
		i := slices.IndexFunc(evs, func(p published) bool { return p.scope == c.scope })
		if i < 0 {
			t.Fatalf("no event for %v", c.scope)
		}
		p := evs[i]
		if got, want := vectorsOf(p), want(c.texts...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: vectors=%v\nwant %v", c.scope.User, got, want)
		}
		if p.data.Model != llmtest.DefaultModel || p.data.Dims != dims {
			t.Errorf("%s: model %q, dims %d; want %q, %d", c.scope.User, p.data.Model, p.data.Dims, llmtest.DefaultModel, dims)
		}
		if !p.time.Equal(c.latest) {
			t.Errorf("%s: time=%v, want %v", c.scope.User, p.time, c.latest)
		}
		if !slices.IsSortedFunc(p.data.Vectors, func(a, b events.Embedded) int { return strings.Compare(a.Hash, b.Hash) }) {
			t.Errorf("%s: vectors not sorted by hash", c.scope.User)
		}
	}
	// Both scopes fit one request, and each text is sent once.
	if got, want := srv.EmbedCalls(), 1; got != want {
		t.Fatalf("EmbedCalls=%d, want %d", got, want)
	}
	if got, want := len(srv.EmbedRequests()[0].Input), 5; got != want {
		t.Fatalf("%d inputs, want %d", got, want)
	}
}

func TestIgnoredTypes(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	batch := []memory.Applied{deleted(alice, t0), updated(alice, t0, nil), merged(alice, t0, ""), added(alice, t0, ""),
		applied(alice, events.TypeMemoryImportant, t0, &events.MemoryImportant{MemoryID: "m1", Content: "x"})}
	noErrors(t, e.Handle(t.Context(), batch))
	if got := srv.EmbedCalls() + len(rec.events()); got != 0 {
		t.Fatalf("%d calls and events for a batch with no text", got)
	}
}

func TestNotEmbeddedTwice(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	noErrors(t, e.Handle(t.Context(), mixed()))
	first := rec.events()

	// A redelivered batch calls nothing and publishes nothing.
	noErrors(t, e.Handle(t.Context(), mixed()))
	if got, want := srv.EmbedCalls(), 1; got != want {
		t.Fatalf("EmbedCalls=%d after a redelivery, want %d", got, want)
	}
	if got, want := len(rec.events()), len(first); got != want {
		t.Fatalf("%d events after a redelivery, want %d", got, want)
	}

	// A repeated fact costs nothing; only the new text is sent.
	noErrors(t, e.Handle(t.Context(), []memory.Applied{extracted(alice, t0.Add(time.Hour), "prefers green tea", "has a cat")}))
	reqs := srv.EmbedRequests()
	if got, want := reqs[len(reqs)-1].Input, []string{"has a cat"}; !slices.Equal(got, want) {
		t.Fatalf("inputs=%q, want %q", got, want)
	}
	last := rec.events()[len(rec.events())-1]
	if got, want := vectorsOf(last), want("has a cat"); !reflect.DeepEqual(got, want) {
		t.Fatalf("vectors=%v, want %v", got, want)
	}

	// The same text of another user is that user's to embed.
	noErrors(t, e.Handle(t.Context(), []memory.Applied{added(bob, t0, "prefers green tea")}))
	if got, want := srv.EmbedCalls(), 3; got != want {
		t.Fatalf("EmbedCalls=%d, want %d", got, want)
	}
}

// After a restart, the same batch in another order makes the same events,
// which the stream drops as duplicates.
func TestDeterministicIDs(t *testing.T) {
	_, rec1, e1 := setup(t, Config{})
	noErrors(t, e1.Handle(t.Context(), mixed()))
	_, rec2, e2 := setup(t, Config{})
	batch := mixed()
	slices.Reverse(batch)
	noErrors(t, e2.Handle(t.Context(), batch))
	ids := func(ps []published) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.id)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(rec2.events()), ids(rec1.events()); !slices.Equal(got, want) {
		t.Fatalf("ids=%v, want %v", got, want)
	}
	if l := ids(rec1.events()); len(l) != 2 || l[0] == l[1] {
		t.Fatalf("ids=%v, want one for each scope", l)
	}
	// Another model's vectors are other events.
	_, rec3, e3 := setup(t, Config{Model: "other-model"})
	noErrors(t, e3.Handle(t.Context(), mixed()))
	for _, id := range ids(rec3.events()) {
		if slices.Contains(ids(rec1.events()), id) {
			t.Fatalf("id %s is the same for two models", id)
		}
	}
}

// errorsFor checks that exactly the events at the given indexes failed,
// and returns the first error.
func errorsFor(t *testing.T, errs []error, failed ...int) error {
	t.Helper()
	for i, err := range errs {
		if got, want := err != nil, slices.Contains(failed, i); got != want {
			t.Fatalf("errs[%d]=%v, want failed=%v", i, err, want)
		}
	}
	return errs[failed[0]]
}

func TestServerError(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	srv.EnqueueEmbed(llmtest.Status(http.StatusInternalServerError, ""))
	errs := e.Handle(t.Context(), mixed())
	// Every event that brought a text fails; the others are done.
	err := errorsFor(t, errs, 0, 1, 3, 4, 6)
	if !llm.IsTemporary(err) || memory.ErrorCode(err) == memory.EINVALID {
		t.Fatalf("err=%v, want a temporary error the consumer retries", err)
	}
	if !strings.Contains(err.Error(), "acme/alice") {
		t.Fatalf("err=%v, want it to name the scope", err)
	}
	if got := len(rec.events()); got != 0 {
		t.Fatalf("%d events published", got)
	}
	// The redelivery succeeds: nothing was remembered as done.
	noErrors(t, e.Handle(t.Context(), mixed()))
	if got, want := len(rec.events()), 2; got != want {
		t.Fatalf("%d events after the retry, want %d", got, want)
	}
}

func TestRateLimit(t *testing.T) {
	srv, _, e := setup(t, Config{})
	srv.EnqueueEmbed(llmtest.RateLimit(3 * time.Second))
	err := errorsFor(t, e.Handle(t.Context(), []memory.Applied{added(alice, t0, "x")}), 0)
	if after, ok := memory.RetryAfterOf(err); !ok || after != 3*time.Second {
		t.Fatalf("RetryAfterOf(%v)=%v, %v; want 3s", err, after, ok)
	}
}

// A request refused for good that held two scopes is sent again one scope
// at a time, so only the scope the endpoint refuses fails.
func TestRefusedRequestIsolated(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	srv.EnqueueEmbed(llmtest.Status(http.StatusBadRequest, "This model's maximum context length is 8192 tokens"),
		llmtest.Status(http.StatusBadRequest, "This model's maximum context length is 8192 tokens"))
	batch := []memory.Applied{added(alice, t0, "a very long text"), added(bob, t0, "uses vim"), added(alice, t0, "another")}
	err := errorsFor(t, e.Handle(t.Context(), batch), 0, 2)
	if got, want := memory.ErrorCode(err), memory.EINVALID; got != want {
		t.Fatalf("ErrorCode(%v)=%s, want %s", err, got, want)
	}
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.BadRequest {
		t.Fatalf("err=%v, want the *llm.Error in its chain", err)
	}
	if got, want := srv.EmbedCalls(), 3; got != want {
		t.Fatalf("EmbedCalls=%d, want %d (both scopes, then each alone)", got, want)
	}
	evs := rec.events()
	if len(evs) != 1 || evs[0].scope != bob {
		t.Fatalf("published %+v, want bob's vectors only", evs)
	}
	if got, want := vectorsOf(evs[0]), want("uses vim"); !reflect.DeepEqual(got, want) {
		t.Fatalf("vectors=%v, want %v", got, want)
	}
}

// vectorsStep answers an embeddings request with llmtest's vectors,
// except that bad replaces the vector of input i when it says so; a
// replacement that is a string goes on the wire as is (base64).
func vectorsStep(bad func(i int, v []float32) any) llmtest.Step {
	return func(w http.ResponseWriter, c *llmtest.Call) {
		var data []map[string]any
		for i, s := range c.Embed.Input {
			var v any = llmtest.Embedding(s, dims)
			if b := bad(i, v.([]float32)); b != nil {
				v = b
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": c.Embed.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}
}

func base64Vector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestBadVector(t *testing.T) {
	for _, c := range []struct {
		name string
		bad  func(v []float32) any
		want string
	}{
		{"zeros", func(v []float32) any { return make([]float32, len(v)) }, "the vector for input 2 of 3 is all zeros"},
		{"NaN", func(v []float32) any {
			v[5] = float32(math.NaN())
			return base64Vector(v)
		}, "the vector for input 2 of 3 has NaN at component 5"},
		{"infinity", func(v []float32) any {
			v[0] = float32(math.Inf(-1))
			return base64Vector(v)
		}, "the vector for input 2 of 3 has -Inf at component 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, rec, e := setup(t, Config{})
			srv.EnqueueEmbed(vectorsStep(func(i int, v []float32) any {
				if i == 2 {
					return c.bad(v)
				}
				return nil
			}))
			// Texts are sent scope by scope, so input 2 is bob's "vim";
			// alice's vectors, in the same response, are fine.
			batch := []memory.Applied{added(alice, t0, "tea"), added(bob, t0, "vim"), added(alice, t0, "cats")}
			err := errorsFor(t, e.Handle(t.Context(), batch), 1)
			if !strings.Contains(err.Error(), c.want) || memory.ErrorCode(err) != memory.EINVALID {
				t.Fatalf("err=%v, want EINVALID with %q", err, c.want)
			}
			evs := rec.events()
			if len(evs) != 1 || evs[0].scope != alice {
				t.Fatalf("published %+v, want alice's vectors only", evs)
			}
			if got, want := vectorsOf(evs[0]), want("tea", "cats"); !reflect.DeepEqual(got, want) {
				t.Fatalf("vectors=%v, want %v", got, want)
			}
		})
	}
}

// A response the client cannot use (vectors of two lengths) fails the
// request; sent again scope by scope, each part can still succeed.
func TestBrokenResponse(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	srv.EnqueueEmbed(vectorsStep(func(i int, v []float32) any {
		if i == 1 {
			return v[:dims-1]
		}
		return nil
	}))
	noErrors(t, e.Handle(t.Context(), []memory.Applied{added(alice, t0, "tea"), added(bob, t0, "vim")}))
	if got, want := srv.EmbedCalls(), 3; got != want {
		t.Fatalf("EmbedCalls=%d, want %d", got, want)
	}
	if got, want := len(rec.events()), 2; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}
}

// The model's vectors must keep their length across a scope's requests.
func TestDimsChange(t *testing.T) {
	srv, rec, e := setup(t, Config{Batch: 1})
	srv.EnqueueEmbed(vectorsStep(func(int, []float32) any { return nil }),
		vectorsStep(func(_ int, v []float32) any { return v[:dims/2] }))
	err := errorsFor(t, e.Handle(t.Context(), []memory.Applied{added(alice, t0, "tea"), added(alice, t0, "vim")}), 0, 1)
	if !strings.Contains(err.Error(), "changed from 64 to 32 dimensions") {
		t.Fatalf("err=%v", err)
	}
	if got := len(rec.events()); got != 0 {
		t.Fatalf("%d events published", got)
	}
}

func TestEmitterFailure(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	rec.setFail(errors.New("nats: no responders available for request"))
	err := errorsFor(t, e.Handle(t.Context(), mixed()), 0, 1, 3, 4, 6)
	if !strings.Contains(err.Error(), "no responders") {
		t.Fatalf("err=%v, want the emitter's error", err)
	}
	// Nothing counts as done: the redelivery embeds and publishes.
	rec.setFail(nil)
	noErrors(t, e.Handle(t.Context(), mixed()))
	if got, want := srv.EmbedCalls(), 2; got != want {
		t.Fatalf("EmbedCalls=%d, want %d", got, want)
	}
	if got, want := len(rec.events()), 2; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}
}

func TestCanceled(t *testing.T) {
	srv, rec, e := setup(t, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	// Shutdown comes while the model is working on the request.
	srv.EnqueueEmbed(func(w http.ResponseWriter, c *llmtest.Call) {
		cancel()
		<-c.HTTP.Context().Done()
	})
	err := errorsFor(t, e.Handle(ctx, mixed()), 0, 1, 3, 4, 6)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	if got := len(rec.events()); got != 0 {
		t.Fatalf("%d events published", got)
	}
}

// A scope's vectors are split over events that each fit the limit, and
// hold at most MaxEmbeddedVectors.
func TestSplit(t *testing.T) {
	t.Run("by size", func(t *testing.T) {
		srv, rec, e := setup(t, Config{MaxEventBytes: 8 << 10})
		var batch []memory.Applied
		var texts []string
		for i := range 9 {
			texts = append(texts, denseText(i))
			batch = append(batch, added(alice, t0, texts[i]))
		}
		noErrors(t, e.Handle(t.Context(), batch))
		checkSplit(t, rec.events(), want(texts...), 2)
		if got, want := srv.EmbedCalls(), 1; got != want {
			t.Fatalf("EmbedCalls=%d, want %d", got, want)
		}
	})
	t.Run("by count", func(t *testing.T) {
		srv, rec, e := setup(t, Config{})
		srv.SetDims(1)
		var batch []memory.Applied
		wantVecs := map[string][]float32{}
		for i := range events.MaxEmbeddedVectors + 44 {
			s := fmt.Sprint("fact ", i)
			batch = append(batch, added(alice, t0, s))
			wantVecs[events.TextHash(s)] = llmtest.Embedding(s, 1)
		}
		noErrors(t, e.Handle(t.Context(), batch))
		checkSplit(t, rec.events(), wantVecs, 2)
		if got, want := srv.EmbedCalls(), 5; got != want {
			t.Fatalf("EmbedCalls=%d, want %d (300 texts, 64 a request)", got, want)
		}
	})
	t.Run("a vector too large", func(t *testing.T) {
		srv, rec, e := setup(t, Config{MaxEventBytes: 4200})
		srv.SetDims(512) // about 5 KB of JSON
		err := errorsFor(t, e.Handle(t.Context(), []memory.Applied{added(alice, t0, denseText(0))}), 0)
		if memory.ErrorCode(err) != memory.EINVALID || len(rec.events()) != 0 {
			t.Fatalf("err=%v and %d events, want EINVALID and none", err, len(rec.events()))
		}
	})
}

// denseText has enough distinct words that few components of its
// vector are 0, so the vector's JSON is about 10 bytes a component.
func denseText(i int) string {
	var b strings.Builder
	for j := range 400 {
		fmt.Fprintf(&b, "w%dx%d ", i, j)
	}
	return b.String()
}

func checkSplit(t *testing.T, evs []published, want map[string][]float32, n int) {
	t.Helper()
	if got := len(evs); got != n {
		t.Fatalf("%d events, want %d", got, n)
	}
	got := map[string][]float32{}
	ids := map[string]bool{}
	for _, p := range evs {
		if len(p.data.Vectors) > events.MaxEmbeddedVectors {
			t.Fatalf("%d vectors in one event", len(p.data.Vectors))
		}
		ids[p.id] = true
		for h, v := range vectorsOf(p) {
			got[h] = v
		}
	}
	if len(ids) != n {
		t.Fatalf("ids repeat: %v", ids)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("published %d vectors, want %d, or they differ", len(got), len(want))
	}
}

// A long text is cut at a rune boundary before it is sent, but filed
// under the hash of the whole text, which is what the read model holds.
func TestMaxText(t *testing.T) {
	srv, rec, e := setup(t, Config{MaxText: 100})
	long := strings.Repeat("€", 40) // 120 bytes
	noErrors(t, e.Handle(t.Context(), []memory.Applied{added(alice, t0, long)}))
	in := srv.EmbedRequests()[0].Input[0]
	if got, want := in, strings.Repeat("€", 33); got != want || !utf8.ValidString(in) {
		t.Fatalf("sent %d bytes %q, want 99 bytes", len(in), in)
	}
	got := vectorsOf(rec.events()[0])
	if v, ok := got[events.TextHash(long)]; !ok || !slices.Equal(v, llmtest.Embedding(in, dims)) {
		t.Fatalf("vectors=%v, want the cut text's vector under the whole text's hash", got)
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{Model: "m"}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "model:"},
		{Config{Model: strings.Repeat("m", events.MaxEmbeddingModelBytes+1)}, "model:"},
		{Config{Model: "m", Batch: 2049}, "batch:"},
		{Config{Model: "m", Batch: -1}, "batch:"},
		{Config{Model: "m", MaxText: 3}, "max_text:"},
		{Config{Model: "m", MaxEventBytes: 1024}, "max_event_bytes:"},
		{Config{Model: "m", Remember: -1}, "remember:"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Validate(%+v)=%v, want %q…", c.cfg, err, c.want)
		}
	}
}

func TestLRU(t *testing.T) {
	c := newLRU(2)
	a, b, d := keyOf(alice, "m", "a"), keyOf(alice, "m", "b"), keyOf(alice, "m", "d")
	c.add(a)
	c.add(b)
	c.has(a) // a is now the most recent
	c.add(d)
	if !c.has(a) || c.has(b) || !c.has(d) {
		t.Fatalf("after a, b, a, d with room for 2: has a=%v b=%v d=%v, want true false true", c.has(a), c.has(b), c.has(d))
	}
	if keyOf(alice, "m", "a") == keyOf(bob, "m", "a") || keyOf(alice, "m", "a") == keyOf(alice, "n", "a") {
		t.Fatal("keys of different scopes or models are equal")
	}
}
