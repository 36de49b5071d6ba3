package embedding

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// Source is the CloudEvents source of what the embedder publishes.
const Source = "engram/embedder"

// Client is what the embedder needs of an embeddings endpoint; *llm.Client
// is one. It returns one vector per input, in input order.
type Client interface {
	Embed(ctx context.Context, inputs []string) ([][]float32, llm.Usage, error)
}

// envelopeBytes is kept free in every event for the envelope: id, source,
// type, time, and a namespace and user of up to 256 bytes each.
const envelopeBytes = 2048

// Log field keys.
const (
	keyNamespace = "namespace"
	keyUser      = "user"
	keyTexts     = "texts"
	keyEvents    = "events"
	keyTokens    = "tokens"
)

// Embedder embeds memory texts and publishes their vectors as
// memory.embedded events.
type Embedder struct {
	cfg    Config
	client Client
	emit   memory.Emitter
	log    *zap.Logger
	done   *lru // keys already published
}

// New returns an Embedder. Zero fields of cfg take DefaultConfig's values;
// cfg should have passed Validate.
func New(cfg Config, c Client, emit memory.Emitter, log *zap.Logger) *Embedder {
	cfg = cfg.withDefaults()
	return &Embedder{cfg: cfg, client: c, emit: emit, log: log, done: newLRU(cfg.Remember)}
}

// scopeWork is what one scope of a batch needs embedded.
type scopeWork struct {
	scope  memory.Scope
	texts  []*text // in order of first appearance
	byHash map[string]*text
	events []int     // indexes in the batch of the events that wait on texts
	latest time.Time // the latest time of those events
	err    error
}

type text struct {
	work  *scopeWork
	hash  string
	input string // what is sent: the text, cut to MaxText
	vec   []float32
	err   error
}

// Handle embeds the memory texts in a batch of applied events and
// publishes one memory.embedded event per scope (more when the vectors
// pass the event size limit). It returns one error per event: nil for an
// event whose texts are published, now or before, or that has none; for
// the rest, the error of their scope. An error that retrying cannot fix
// (the endpoint refused the request, or sent a bad vector) carries
// memory.EINVALID; a rate limit's delay is a memory.RetryError; any
// *llm.Error stays in the chain.
func (e *Embedder) Handle(ctx context.Context, batch []memory.Applied) []error {
	errs := make([]error, len(batch))
	works := e.collect(batch)
	if len(works) == 0 {
		return errs
	}
	e.embedAll(ctx, works)
	for _, w := range works {
		if w.err == nil {
			if err := e.publish(ctx, w); err != nil {
				w.fail(err)
			}
		}
		for _, i := range w.events {
			errs[i] = w.err
		}
	}
	return errs
}

// collect gathers, per scope, the texts not yet published.
func (e *Embedder) collect(batch []memory.Applied) []*scopeWork {
	var works []*scopeWork
	byScope := map[memory.Scope]*scopeWork{}
	for i, a := range batch {
		waits := false
		for _, s := range texts(a.Data) {
			if s == "" {
				continue
			}
			h := events.TextHash(s)
			w := byScope[a.Scope]
			if w == nil || w.byHash[h] == nil {
				if e.done.has(keyOf(a.Scope, e.cfg.Model, h)) {
					continue
				}
				if w == nil {
					w = &scopeWork{scope: a.Scope, byHash: map[string]*text{}}
					byScope[a.Scope] = w
					works = append(works, w)
				}
				t := &text{work: w, hash: h, input: chars.CutBytes(s, e.cfg.MaxText)}
				w.byHash[h] = t
				w.texts = append(w.texts, t)
			}
			if !waits {
				waits = true
				w.events = append(w.events, i)
				if a.Time.After(w.latest) {
					w.latest = a.Time
				}
			}
		}
	}
	return works
}

// texts returns the memory texts an event brings: what the read model
// will hold as a memory's content once it applies the event.
func texts(data any) []string {
	switch d := data.(type) {
	case *events.MemoryExtracted:
		out := make([]string, len(d.Candidates))
		for i, c := range d.Candidates {
			out[i] = c.Content
		}
		return out
	case *events.MemoryAdded:
		return []string{d.Content}
	case *events.MemoryUpdated:
		if d.Content != nil {
			return []string{*d.Content}
		}
	case *events.MemoriesMerged:
		if d.Content != nil {
			return []string{*d.Content}
		}
	}
	return nil
}

// embedAll embeds every scope's texts, Batch at a time, setting each
// text's vector or error, or its scope's error. Scopes are taken one
// after another, so most requests hold one scope; when a request that
// holds several is refused for good, each scope's part is sent alone, so
// that one scope's bad text does not fail the others.
func (e *Embedder) embedAll(ctx context.Context, works []*scopeWork) {
	var queue []*text
	for _, w := range works {
		queue = append(queue, w.texts...)
	}
	for len(queue) > 0 {
		var req []*text
		for len(queue) > 0 && len(req) < e.cfg.Batch {
			if t := queue[0]; t.work.err == nil {
				req = append(req, t)
			}
			queue = queue[1:]
		}
		if len(req) == 0 {
			break
		}
		err := e.request(ctx, req)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			for _, w := range works {
				w.fail(ctx.Err())
			}
			return
		}
		parts := byWork(req)
		if len(parts) == 1 || !permanent(err) {
			for _, part := range parts {
				part[0].work.fail(err)
			}
			continue
		}
		for _, part := range parts {
			if err := e.request(ctx, part); err != nil {
				part[0].work.fail(err)
			}
		}
	}
	for _, w := range works {
		w.check()
	}
}

// byWork splits texts into runs of one scope each.
func byWork(ts []*text) [][]*text {
	var out [][]*text
	for i, t := range ts {
		if i == 0 || t.work != ts[i-1].work {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], t)
	}
	return out
}

// request embeds ts in one call. A vector that is unfit is the error of
// its text alone; an error of the call is returned.
func (e *Embedder) request(ctx context.Context, ts []*text) error {
	inputs := make([]string, len(ts))
	for i, t := range ts {
		inputs[i] = t.input
	}
	vecs, usage, err := e.client.Embed(ctx, inputs)
	if err != nil {
		return err
	}
	e.log.Debug("embedded", zap.Int(keyTexts, len(ts)), zap.Int(keyTokens, usage.PromptTokens))
	if len(vecs) != len(ts) {
		return memory.Errorf(memory.EINVALID, "the model sent %d vectors for %d inputs", len(vecs), len(ts))
	}
	for i, v := range vecs {
		if err := checkVector(v, len(vecs[0])); err != nil {
			ts[i].err = memory.Errorf(memory.EINVALID, "the vector for input %d of %d %s", i, len(ts), err)
			continue
		}
		ts[i].vec = v
	}
	return nil
}

// checkVector holds a vector to what memory.embedded accepts, with the
// length of the first vector of its response.
func checkVector(v []float32, dims int) error {
	switch {
	case len(v) != dims:
		return fmt.Errorf("has %d components, the first has %d", len(v), dims)
	case len(v) == 0 || len(v) > events.MaxEmbeddingDims:
		return fmt.Errorf("has %d components; events carry 1 to %d", len(v), events.MaxEmbeddingDims)
	}
	zero := true
	for j, c := range v {
		if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
			return fmt.Errorf("has %g at component %d", c, j)
		}
		zero = zero && c == 0
	}
	if zero {
		return errors.New("is all zeros")
	}
	return nil
}

// permanent reports whether sending the same request again cannot help.
// Only an *llm.Error is known to be so; anything else may pass.
func permanent(err error) bool {
	var me *memory.Error
	if errors.As(err, &me) {
		return me.Code == memory.EINVALID
	}
	var le *llm.Error
	return errors.As(err, &le) && !le.Temporary()
}

// fail records the scope's first error, naming the scope, in the form the
// consumer's fate table reads.
func (w *scopeWork) fail(err error) {
	if w.err != nil {
		return
	}
	n := len(w.texts)
	if after, ok := llm.RetryAfter(err); ok {
		err = &memory.RetryError{Err: err, After: after}
	} else if permanent(err) && memory.ErrorCode(err) != memory.EINVALID {
		err = fmt.Errorf("%w: %w", memory.Errorf(memory.EINVALID, "the embedding endpoint refused the request"), err)
	}
	w.err = fmt.Errorf("embed %d texts of %s/%s: %w", n, w.scope.Namespace, w.scope.User, err)
}

// check fails the scope if one of its texts has no vector, or its vectors
// disagree on their length (the model changed between two requests).
func (w *scopeWork) check() {
	if w.err != nil {
		return
	}
	for _, t := range w.texts {
		if t.err != nil {
			w.fail(t.err)
			return
		}
		if t.vec == nil { // every text is sent unless its scope failed
			w.fail(memory.Errorf(memory.EINTERNAL, "text %s has no vector", t.hash))
			return
		}
		if len(t.vec) != len(w.texts[0].vec) {
			w.fail(memory.Errorf(memory.EINVALID, "the model's vectors changed from %d to %d dimensions",
				len(w.texts[0].vec), len(t.vec)))
			return
		}
	}
}

// publish sends a scope's vectors, sorted by hash and split to fit the
// event size limit, and remembers them once the stream has them.
func (e *Embedder) publish(ctx context.Context, w *scopeWork) error {
	ts := slices.Clone(w.texts)
	slices.SortFunc(ts, func(a, b *text) int { return cmp.Compare(a.hash, b.hash) })
	dims := len(ts[0].vec)
	budget := e.cfg.MaxEventBytes - envelopeBytes - len(e.cfg.Model) - len(`{"model":"","dims":0000,"vectors":[]}`)
	var outs []memory.Outgoing
	var cur []events.Embedded
	size := 0
	flush := func() {
		if len(cur) > 0 {
			outs = append(outs, e.outgoing(w, dims, cur))
			cur, size = nil, 0
		}
	}
	for _, t := range ts {
		v := events.Embedded{Hash: t.hash, Vector: t.vec}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("marshal a vector: %w", err)
		}
		n := len(b) + 1 // and a comma
		if n > budget {
			return memory.Errorf(memory.EINVALID, "a vector of %d dimensions is %d bytes, more than an event of %d bytes holds",
				dims, len(b), e.cfg.MaxEventBytes)
		}
		if size+n > budget || len(cur) == events.MaxEmbeddedVectors {
			flush()
		}
		cur = append(cur, v)
		size += n
	}
	flush()
	if err := e.emit(ctx, outs...); err != nil {
		return fmt.Errorf("publish %d events: %w", len(outs), err)
	}
	for _, t := range ts {
		e.done.add(keyOf(w.scope, e.cfg.Model, t.hash))
	}
	e.log.Debug("published vectors", zap.String(keyNamespace, w.scope.Namespace), zap.String(keyUser, w.scope.User),
		zap.Int(keyTexts, len(ts)), zap.Int(keyEvents, len(outs)))
	return nil
}

// outgoing makes one event of sorted vectors. Its id is derived from the
// model, the scope and the hashes, so a redelivered batch makes the same
// event and the stream drops it as a duplicate.
func (e *Embedder) outgoing(w *scopeWork, dims int, vs []events.Embedded) memory.Outgoing {
	h := sha256.New()
	for _, s := range []string{e.cfg.Model, w.scope.Namespace, w.scope.User} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, v := range vs {
		h.Write([]byte(v.Hash))
	}
	return memory.Outgoing{Type: events.TypeMemoryEmbedded, ID: "embedded-" + hex.EncodeToString(h.Sum(nil)[:20]),
		Scope: w.scope, Time: w.latest, Data: &events.MemoryEmbedded{Model: e.cfg.Model, Dims: dims, Vectors: vs}}
}
