package extraction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/ruleextract"
	"github.com/engramhq/engram/internal/secrets"
	"go.uber.org/zap"
)

// Source is the CloudEvents source of what the extractor publishes.
const Source = "engram/extractor"

// LLM extracts candidates from turns; *llmextract.Extractor is one.
type LLM interface {
	Extract(ctx context.Context, turns []llmextract.Turn, known []llmextract.Known, opt llmextract.Options) (*llmextract.Result, error)
}

// Extractor answers extraction requests.
type Extractor struct {
	// LLM is nil when no model is configured: rules do the work.
	LLM LLM
	// Known, when set, supplies the user's current facts for the LLM's
	// update check.
	Known memory.MemoryReader
	// Mask hides secrets before text reaches the LLM or a memory; nil
	// leaves text as it is.
	Mask *secrets.Masker
	Emit memory.Emitter
	Log  *zap.Logger
	// MaxRetryAfter caps the wait a rate-limited endpoint asks for
	// (Retry-After: 3600 would park the request an hour per try); zero
	// is DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// AtOnce says the rules read each of the user's turns as it arrives
	// (ReadTurns), so a batch's rules pass leaves those turns' words to
	// that reading instead of counting them twice.
	AtOnce bool
	// Applied, when set, reports which of the scope's events (by id, from
	// Source) the read model has applied: a batch does not publish again
	// a turn's reading that is already there. nil publishes it again,
	// and the duplicate is dropped by JetStream or at apply.
	Applied func(ctx context.Context, scope memory.Scope, source string, ids []string) (map[string]bool, error)
	// Extracted, when set, tells whether the read model holds any of the
	// events of source with the given ids: a request delivered again (a
	// replay, a consumer made again) whose conclusion is already in the
	// stream is acknowledged without asking the model again (DESIGN:
	// replay never calls the LLM). engram reextract makes new requests.
	Extracted func(ctx context.Context, scope memory.Scope, source string, ids ...string) (bool, error)
}

// DefaultMaxRetryAfter is the longest a request waits for a rate limit.
const DefaultMaxRetryAfter = 5 * time.Minute

// errUnpublishable is a model's result that no event can carry. It is
// the model's fault, like a reply that is not JSON: the request ends in
// the rule fallback.
var errUnpublishable = errors.New("the model's result cannot be published")

// Handle extracts one request. An LLM failure is returned (with the delay
// a 429 asked for) so the stream retries it; on the final try, or when the
// failure cannot pass, the rule extractor covers the turns, the failure is
// recorded as extraction.failed, and the error is still returned so the
// request is dead-lettered with its reason.
func (x *Extractor) Handle(ctx context.Context, d memory.Delivery) error {
	req, ok := d.Data.(*events.ExtractionRequested)
	if !ok {
		return memory.Errorf(memory.EINVALID, "extractor got %s", d.Type)
	}
	if x.Extracted != nil {
		ends := Conclusions(req.RequestID)
		if d.Redriven {
			// Sent back from the dead letters to be tried again: only an
			// extraction that succeeded since ends it.
			ends = ends[:1]
		}
		done, err := x.Extracted(ctx, d.Scope, Source, ends...)
		if err != nil {
			return fmt.Errorf("was %s extracted before: %w", req.RequestID, err)
		}
		if done {
			x.Log.Info("extracted before; not asked again", zap.String("request", req.RequestID), zap.Int("attempt", d.Attempt))
			return nil
		}
	}
	turns := x.masked(req.Turns)
	if x.LLM == nil {
		return x.rulesPass(ctx, d, req, turns, "")
	}
	if req.Reason == ReasonCompressing && d.Attempt == 1 {
		// The turns are leaving the agent's window: the fast rule pass is
		// stored before the model is asked, so nothing waits on it.
		if err := x.rulesPass(ctx, d, req, turns, "-rules"); err != nil {
			return err
		}
	}
	res, err := x.LLM.Extract(ctx, toLLMTurns(turns), x.known(ctx, d.Scope), llmextract.Options{
		Project: project(turns), Summary: req.Summary})
	if err == nil {
		err = x.publish(ctx, d, req, turns, res.Candidates, "llm", res.Model, res.Usage, res.Calls, res.Summary)
		if !errors.Is(err, errUnpublishable) {
			return err
		}
	}
	if ctx.Err() != nil {
		return err // shutting down: the request is redelivered
	}
	final := d.Final || !retryable(err)
	x.Log.Warn("llm extraction failed", zap.String("request", req.RequestID), zap.Int("attempt", d.Attempt),
		zap.Bool("final", final), zap.Error(err))
	if !final {
		if after, ok := llm.RetryAfter(err); ok {
			return &memory.RetryError{Err: err, After: min(after, x.maxRetryAfter())}
		}
		return err
	}
	// Out of tries: the rules cover the turns, and the failure is kept.
	failed := memory.Outgoing{Type: events.TypeExtractionFailed, ID: "failed-" + req.RequestID, Scope: d.Scope,
		Agent: d.Agent, Time: d.Time, Data: &events.ExtractionFailed{RequestID: req.RequestID, SessionID: req.SessionID,
			Reason: chars.ClipBytes(err.Error(), 1000), Attempts: d.Attempt, Turns: indices(req.Turns)}}
	if perr := x.Emit(ctx, failed); perr != nil {
		return perr
	}
	if perr := x.rulesPass(ctx, d, req, turns, "-fallback"); perr != nil {
		return perr
	}
	return memory.Errorf(memory.EINVALID, "llm extraction failed after %d attempts, rules covered the turns: %v", d.Attempt, err)
}

// Conclusions are the ids of the events that end a request: its
// extraction (by the model, or by the rules without one), the rules'
// cover after the model failed, and the failure itself. The fast rule
// pass before the model ("-rules", on compression) ends nothing.
func Conclusions(requestID string) []string {
	return []string{"extracted-" + requestID, "extracted-" + requestID + "-fallback", "failed-" + requestID}
}

func (x *Extractor) maxRetryAfter() time.Duration {
	if x.MaxRetryAfter > 0 {
		return x.MaxRetryAfter
	}
	return DefaultMaxRetryAfter
}

func retryable(err error) bool {
	if errors.Is(err, llmextract.ErrBadOutput) {
		return true
	}
	return llm.IsTemporary(err)
}

func (x *Extractor) publish(ctx context.Context, d memory.Delivery, req *events.ExtractionRequested, turns []events.ExtractionTurn,
	cands []memory.Candidate, extractor, model string, usage llm.Usage, calls int, summary string) error {
	return x.publishAs(ctx, d, req, turns, cands, extractor, model, usage, calls, summary, "")
}

// publishAs publishes memory.extracted (id "extracted-<request><suffix>"),
// a memory.write.important for every candidate that will be written with
// importance ≥ 0.8, and, unless this is the fast rule pass ahead of the
// model ("-rules"), the parts of the days' logs the turns make
// (dailyParts), from the model's summary when it wrote one.
func (x *Extractor) publishAs(ctx context.Context, d memory.Delivery, req *events.ExtractionRequested, turns []events.ExtractionTurn,
	cands []memory.Candidate, extractor, model string, usage llm.Usage, calls int, summary, suffix string) error {
	ev := &events.MemoryExtracted{RequestID: req.RequestID, SessionID: req.SessionID, Extractor: extractor,
		Model: model, Usage: events.Usage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens},
		Calls: calls, Turns: indices(req.Turns)}
	out, err := x.extracted(ctx, d.Scope, d.Agent, d.Time, "extracted-"+req.RequestID+suffix, ev, cands, lastSaid(req.Turns), nil)
	if err != nil {
		return err
	}
	return x.Emit(ctx, append(out, x.daily(d, req, turns, candidatesOf(ev.Candidates), summary, suffix)...)...)
}

// daily is the parts of the days' logs a request's turns make (dailyParts),
// from the model's summary when it wrote one, unless this is the fast rule
// pass ahead of the model ("-rules"): the model's pass writes them then.
func (x *Extractor) daily(d memory.Delivery, req *events.ExtractionRequested, turns []events.ExtractionTurn,
	cands []memory.Candidate, summary, suffix string) []memory.Outgoing {
	if suffix == "-rules" {
		return nil
	}
	if x.Mask != nil {
		summary, _ = x.Mask.Mask(summary)
	}
	return dailyParts(d, req, turns, cands, summary)
}

// ReadTurns is the rules' reading of each turn of the user's as it arrives
// (the batcher calls it on each turn.recorded): what the rules find in it
// is published at once as a memory.extracted with pass "turn", named by
// extractreq.ReadingID, so it is readable within moments rather than
// after the session's quiet gap. The turn still waits for its batch,
// which asks the model (when there is one) with this reading's memories
// among the known facts, and marks the turn extracted. Other roles wait
// for the batch: their tool calls and results need the session around
// them.
//
// ReadTurns reads the turns of one batch of the batcher's consumer and
// publishes their readings together, so the batch waits for one round of
// acknowledgements rather than one per turn (a partition handed over
// waits for its batch to finish).
func (x *Extractor) ReadTurns(ctx context.Context, turns []memory.Applied) error {
	if !x.AtOnce {
		return nil
	}
	var out []memory.Outgoing
	known := map[memory.Scope][]memory.Memory{}
	for _, a := range turns {
		d, ok := a.Data.(*events.TurnRecorded)
		if !ok || !extractreq.ReadsAtOnce(d.Role) {
			continue
		}
		t := events.ExtractionTurn{TurnIndex: d.TurnIndex, Role: d.Role, Content: d.Content, ToolCalls: d.ToolCalls,
			Time: a.Time, Project: d.Project}
		reading, err := x.readings(ctx, a.Scope, a.Agent, a.Time, d.SessionID, []events.ExtractionTurn{t}, false, known)
		if err != nil {
			return err
		}
		out = append(out, reading...)
	}
	if len(out) == 0 {
		return nil
	}
	return x.Emit(ctx, out...)
}

// ReadingEventID is the id of the memory.extracted that is the rules'
// reading of turn t (as the stream has it).
func ReadingEventID(scope memory.Scope, session string, t events.ExtractionTurn) string {
	return "extracted-" + extractreq.ReadingID(scope, session, t) // extractreq.ReadingEventPrefix
}

// readings are the turn readings of the turns the rules read at once,
// less those the read model has applied when check is set. turns are as
// the stream has them (their ids are computed from that), not masked.
func (x *Extractor) readings(ctx context.Context, scope memory.Scope, agent string, at time.Time, session string,
	turns []events.ExtractionTurn, check bool, known map[memory.Scope][]memory.Memory) ([]memory.Outgoing, error) {
	ids := map[int]string{}
	var all []string
	for _, t := range turns {
		if extractreq.ReadsAtOnce(t.Role) {
			id := ReadingEventID(scope, session, t)
			ids[t.TurnIndex] = id
			all = append(all, id)
		}
	}
	var done map[string]bool
	if check && x.Applied != nil && len(all) > 0 {
		var err error
		if done, err = x.Applied(ctx, scope, Source, all); err != nil {
			// Published again, the readings are dropped as duplicates.
			x.Log.Warn("which turn readings are applied is unknown", zap.Error(err))
		}
	}
	var out []memory.Outgoing
	for _, t := range x.masked(turns) {
		id, ok := ids[t.TurnIndex]
		if !ok || done[id] {
			continue
		}
		ev := &events.MemoryExtracted{RequestID: strings.TrimPrefix(id, "extracted-"), SessionID: session,
			Extractor: events.ExtractorRules, Pass: events.PassTurn, Turns: []int{t.TurnIndex}}
		reading, err := x.extracted(ctx, scope, agent, at, id, ev, x.rules([]events.ExtractionTurn{withoutResults(t)}), t.Time, known)
		if err != nil {
			return nil, fmt.Errorf("read turn %d of session %q: %w", t.TurnIndex, session, err)
		}
		out = append(out, reading...)
	}
	return out, nil
}

// rulesPass is the rules' extraction of a request (suffix as publishAs's).
// When the rules read the user's turns at once, those turns' readings are
// published (again, if need be: the ids make it one event), and the
// request's own result holds the rest: the other roles' turns and what
// the tools answered, which needs the calls of earlier turns.
func (x *Extractor) rulesPass(ctx context.Context, d memory.Delivery, req *events.ExtractionRequested,
	turns []events.ExtractionTurn, suffix string) error {
	if !x.AtOnce {
		return x.publishAs(ctx, d, req, turns, x.rules(turns), "rules", "", llm.Usage{}, 0, "", suffix)
	}
	known := map[memory.Scope][]memory.Memory{}
	out, err := x.readings(ctx, d.Scope, d.Agent, d.Time, req.SessionID, req.Turns, true, known)
	if err != nil {
		return err
	}
	rest := make([]events.ExtractionTurn, len(turns))
	for i, t := range turns {
		if extractreq.ReadsAtOnce(t.Role) {
			// Read already: only the results, named by the earlier calls.
			t.Content, t.ToolCalls = "", nil
		}
		rest[i] = t
	}
	ev := &events.MemoryExtracted{RequestID: req.RequestID, SessionID: req.SessionID, Extractor: events.ExtractorRules,
		Turns: indices(req.Turns)}
	own, err := x.extracted(ctx, d.Scope, d.Agent, d.Time, "extracted-"+req.RequestID+suffix, ev, x.rulesKeepingCalls(turns, rest),
		lastSaid(req.Turns), known)
	if err != nil {
		return err
	}
	// The day's log reads what the rules find in all the turns, those
	// read at once included, whether or not their readings are applied
	// yet: the same parts however the workers raced.
	found := x.rules(turns)
	for i := range found {
		if found[i].SaidAt.IsZero() {
			found[i].SaidAt = lastSaid(req.Turns) // as extracted dates them
		}
	}
	out = append(out, own...)
	return x.Emit(ctx, append(out, x.daily(d, req, turns, found, "", suffix)...)...)
}

// withoutResults is a turn less its tool results: a reading at arrival
// cannot name a result for a call made in another turn.
func withoutResults(t events.ExtractionTurn) events.ExtractionTurn {
	t.ToolResults = nil
	return t
}

// extracted builds memory.extracted ev (event id id) with cands, and a
// memory.write.important for every candidate that will be written with
// importance ≥ 0.8. A candidate that names no time was said at last, the
// latest its turns can have been. known, when not nil, keeps each scope's
// active memories read for the announcement check, for the next call.
func (x *Extractor) extracted(ctx context.Context, scope memory.Scope, agent string, at time.Time, id string,
	ev *events.MemoryExtracted, cands []memory.Candidate, last time.Time, cache map[memory.Scope][]memory.Memory) ([]memory.Outgoing, error) {
	ev.Candidates = make([]events.Candidate, 0, len(cands))
	out := []memory.Outgoing{{Type: events.TypeMemoryExtracted, ID: id, Scope: scope, Agent: agent, Time: at, Data: ev}}
	for _, c := range cands {
		if x.Mask != nil {
			c.Content, _ = x.Mask.Mask(c.Content)
		}
		if !c.Kind.Valid() || !c.Category.Valid() || c.Subject == "" || c.Predicate == "" || c.Content == "" {
			continue
		}
		ec := events.Candidate{Kind: string(c.Kind), Category: string(c.Category),
			Subject: c.Subject, Predicate: c.Predicate, Content: c.Content, Project: c.Project, Topic: c.Topic,
			Importance: clamp(c.Importance), Confidence: clamp(c.Confidence), Updates: c.Updates, SaidAt: c.SaidAt}
		if ec.SaidAt.IsZero() {
			// No turn named: the request's last turn, the latest it can
			// have been said.
			ec.SaidAt = last
		}
		// A candidate no event may carry costs that candidate, never the
		// request.
		probe := &events.MemoryExtracted{RequestID: ev.RequestID, SessionID: ev.SessionID, Extractor: ev.Extractor,
			Pass: ev.Pass, Turns: ev.Turns, Candidates: []events.Candidate{ec}}
		if _, err := events.NewDerived(Source, events.TypeMemoryExtracted, id, scope.Namespace, scope.User, at, probe); err != nil {
			x.Log.Warn("candidate dropped", zap.String("request", ev.RequestID), zap.Error(err))
			continue
		}
		ev.Candidates = append(ev.Candidates, ec)
	}
	if _, err := events.NewDerived(Source, events.TypeMemoryExtracted, id, scope.Namespace, scope.User, at, ev); err != nil {
		return nil, fmt.Errorf("%w: %v", errUnpublishable, err)
	}
	known := cache[scope] // the read model's active memories, read once when needed
	for i, c := range ev.Candidates {
		if c.Importance < memory.ImportantAt || memory.Route(c.Confidence) != memory.StatusActive {
			continue
		}
		if known == nil {
			known = x.active(ctx, scope)
			if cache != nil {
				cache[scope] = known
			}
		}
		if holds(known, c) {
			continue // written before, and announced then
		}
		if outdated(known, c) {
			continue // said before what its slot holds now: history, not news
		}
		mid := memory.MemoryID(Source, id, i)
		out = append(out, memory.Outgoing{Type: events.TypeMemoryImportant, ID: ImportantID(scope, c), Scope: scope,
			Agent: agent, Time: at, Data: &events.MemoryImportant{MemoryID: mid, Kind: c.Kind, Category: c.Category,
				Subject: c.Subject, Predicate: c.Predicate, Content: c.Content, Importance: c.Importance,
				SessionID: ev.SessionID, CauseEventID: id}})
	}
	return out, nil
}

// candidatesOf is what was extracted, as dailyParts reads it.
func candidatesOf(cs []events.Candidate) []memory.Candidate {
	out := make([]memory.Candidate, len(cs))
	for i, c := range cs {
		out[i] = memory.Candidate{Content: c.Content, Importance: c.Importance, Confidence: c.Confidence, SaidAt: c.SaidAt}
	}
	return out
}

// ImportantID is the event id of a fact's memory.write.important: derived
// from the fact itself (scope, kind, subject, predicate and content), not
// from the request that found it, so the same fact extracted again — after
// a restart, a redelivery, a compression and the session's end — is one id
// and JetStream's duplicate window drops the repeats. Past that window the
// read model is asked first (holds): a fact already written is not
// announced again.
func ImportantID(scope memory.Scope, c events.Candidate) string {
	key := strings.Join([]string{scope.Namespace, scope.User, c.Kind, memory.NormalizeKey(c.Subject),
		memory.NormalizeKey(c.Predicate), normContent(c.Content)}, "\x00")
	return "important-" + memory.MemoryID("important", key, 0)
}

func normContent(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".。!！ ")
}

// active reads the scope's active memories for the announcement check; an
// error leaves the check to JetStream's duplicate window alone.
func (x *Extractor) active(ctx context.Context, scope memory.Scope) []memory.Memory {
	if x.Known == nil {
		return []memory.Memory{}
	}
	mems, err := x.Known.Memories(ctx, memory.MemoryQuery{Scope: scope, Limit: 2000})
	if err != nil {
		x.Log.Warn("active memories unavailable for the announcement check", zap.Error(err))
		return []memory.Memory{}
	}
	if mems == nil {
		mems = []memory.Memory{}
	}
	return mems
}

// holds reports whether an active memory already states the candidate.
func holds(mems []memory.Memory, c events.Candidate) bool {
	for _, m := range mems {
		if string(m.Kind) == c.Kind && memory.NormalizeKey(m.Subject) == memory.NormalizeKey(c.Subject) &&
			memory.NormalizeKey(m.Predicate) == memory.NormalizeKey(c.Predicate) && normContent(m.Content) == normContent(c.Content) {
			return true
		}
	}
	return false
}

// outdated reports whether an active memory of the candidate's slot was
// said after it and replaced the slot: the candidate will enter the
// history already superseded.
func outdated(mems []memory.Memory, c events.Candidate) bool {
	slot := memory.Slot(c.Subject, c.Predicate, c.Topic)
	for _, m := range mems {
		if m.SaidAt.After(c.SaidAt) && memory.Replaces(m.Predicate, m.Supersedes != "") &&
			memory.Slot(m.Subject, m.Predicate, m.Topic) == slot {
			return true
		}
	}
	return false
}

func (x *Extractor) rules(turns []events.ExtractionTurn) []memory.Candidate {
	return x.rulesKeepingCalls(turns, turns)
}

// rulesKeepingCalls runs the rules over turns, with the tool calls of
// calls (the same turns, perhaps fuller) to name what a result answers.
func (x *Extractor) rulesKeepingCalls(calls0, turns []events.ExtractionTurn) []memory.Candidate {
	var out []memory.Candidate
	// A tool's result often comes in a later turn than its call: a failed
	// result is named for the call it answers, wherever that was.
	calls := map[string]ruleextract.ToolCall{}
	for _, t := range calls0 {
		for _, c := range t.ToolCalls {
			if c.ID != "" {
				calls[c.ID] = ruleextract.ToolCall{ID: c.ID, Name: c.Name, Input: string(c.Input)}
			}
		}
	}
	for _, t := range turns {
		in := ruleextract.Input{Role: t.Role, Content: t.Content, Project: t.Project}
		for _, c := range t.ToolCalls {
			tc := ruleextract.ToolCall{ID: c.ID, Name: c.Name, Input: string(c.Input)}
			in.ToolCalls = append(in.ToolCalls, tc)
			if c.ID != "" {
				calls[c.ID] = tc
			}
		}
		for _, r := range t.ToolResults {
			in.ToolResults = append(in.ToolResults, ruleextract.ToolResult{ToolCallID: r.ToolCallID,
				Call: calls[r.ToolCallID], Content: r.Content, IsError: r.IsError})
		}
		for _, c := range ruleextract.Extract(in) {
			c.SaidAt = t.Time
			out = append(out, c)
		}
	}
	return out
}

// lastSaid is the time of the latest turn of a request.
func lastSaid(turns []events.ExtractionTurn) time.Time {
	var last time.Time
	for _, t := range turns {
		if t.Time.After(last) {
			last = t.Time
		}
	}
	return last
}

func (x *Extractor) masked(turns []events.ExtractionTurn) []events.ExtractionTurn {
	if x.Mask == nil {
		return turns
	}
	out := make([]events.ExtractionTurn, len(turns))
	for i, t := range turns {
		t.Content, _ = x.Mask.Mask(t.Content)
		calls := make([]events.ToolCall, len(t.ToolCalls))
		for j, c := range t.ToolCalls {
			in, _ := x.Mask.Mask(string(c.Input))
			c.Input = json.RawMessage(jsonString(in, c.Input))
			calls[j] = c
		}
		results := make([]events.ToolResult, len(t.ToolResults))
		for j, r := range t.ToolResults {
			r.Content, _ = x.Mask.Mask(r.Content)
			results[j] = r
		}
		t.ToolCalls, t.ToolResults = calls, results
		out[i] = t
	}
	return out
}

// jsonString keeps masked tool input valid JSON: if masking broke it, the
// masked text is carried as a JSON string instead.
func jsonString(masked string, orig json.RawMessage) string {
	if masked == string(orig) || json.Valid([]byte(masked)) {
		return masked
	}
	b, _ := json.Marshal(masked)
	return string(b)
}

func (x *Extractor) known(ctx context.Context, scope memory.Scope) []llmextract.Known {
	if x.Known == nil {
		return nil
	}
	mems, err := x.Known.Memories(ctx, memory.MemoryQuery{Scope: scope, Limit: 30})
	if err != nil {
		x.Log.Warn("known facts unavailable", zap.Error(err))
		return nil
	}
	out := make([]llmextract.Known, 0, len(mems))
	for _, m := range mems {
		out = append(out, llmextract.Known{Subject: m.Subject, Predicate: m.Predicate, Content: m.Content, Topic: m.Topic})
	}
	return out
}

func toLLMTurns(turns []events.ExtractionTurn) []llmextract.Turn {
	out := make([]llmextract.Turn, len(turns))
	for i, t := range turns {
		lt := llmextract.Turn{Index: t.TurnIndex, Role: t.Role, Content: t.Content, Time: t.Time}
		for _, c := range t.ToolCalls {
			lt.ToolCalls = append(lt.ToolCalls, llmextract.ToolCall{Name: c.Name, Input: string(c.Input)})
		}
		for _, r := range t.ToolResults {
			lt.ToolResults = append(lt.ToolResults, llmextract.ToolResult{Content: r.Content, IsError: r.IsError})
		}
		out[i] = lt
	}
	return out
}

func project(turns []events.ExtractionTurn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Project != "" {
			return turns[i].Project
		}
	}
	return ""
}

func indices(turns []events.ExtractionTurn) []int {
	out := make([]int, len(turns))
	for i, t := range turns {
		out[i] = t.TurnIndex
	}
	return out
}

func clamp(v float64) float64 { return max(0, min(1, v)) }
