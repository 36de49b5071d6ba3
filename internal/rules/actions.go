package rules

import "time"

// Action types. The worker that runs rules (the consolidator) implements
// each; this package only checks their parameters.
const (
	ActBuildEpisode     = "build_episode"     // source: session_end | compression | sweep
	ActUpdateScratchpad = "update_scratchpad" // max_chars
	ActExtractNow       = "extract_now"       // reason, min_messages, quiet_gap, token_cap
	ActCompressDaily    = "compress_daily"    // days
	ActDedupe           = "dedupe"            // similarity, min_entries, model_similarity
	ActRefreshProfile   = "refresh_profile"   // min_importance
	ActDecay            = "decay"             // (none)
	ActArchive          = "archive"           // score_below, access_below
	ActExpire           = "expire"            // transient, short_term
	ActEnforceCap       = "enforce_cap"       // max_memories
	ActRenderCards      = "render_cards"      // max_chars, per_kind
	ActReport           = "report"            // window
	ActCompact          = "compact"           // max_messages
	ActPublish          = "publish"           // type (required), data
)

type paramKind int

const (
	pFloat     paramKind = iota // float64 in [lo, hi], (lo, hi] when loOpen
	pInt                        // int ≥ lo
	pDuration                   // time.Duration > 0; "72h", "90m", "3d"
	pEnum                       // one of enum
	pEventType                  // a known event type, no pattern
	pObject                     // a mapping, kept as map[string]any
)

type param struct {
	kind     paramKind
	def      any // filled in when absent; nil: none
	required bool
	lo, hi   float64
	loOpen   bool
	enum     []string
}

// Episode sources and extraction reasons, as the events package spells them.
var (
	episodeSources    = []string{"session_end", "compression", "sweep"}
	extractionReasons = []string{"quiet", "token_cap", "compressing", "session_ended", "sweep", "manual"}
)

// actionSpecs lists every action type and its parameters, with the
// defaults DESIGN.md §5 takes from the seeds.
var actionSpecs = map[string]map[string]param{
	// source defaults from the trigger: see triggerDefault.
	ActBuildEpisode:     {"source": {kind: pEnum, enum: episodeSources}},
	ActUpdateScratchpad: {"max_chars": {kind: pInt, lo: 100, def: 2000}},
	// quiet_gap and token_cap are the batcher's thresholds: a rule on
	// turn.recorded gives them (see extractParams); min_messages is the
	// smallest session a rule on session.ended or context.compressing
	// extracts at once.
	ActExtractNow: {
		"reason":       {kind: pEnum, enum: extractionReasons},
		"min_messages": {kind: pInt, lo: 1, def: 1},
		"quiet_gap":    {kind: pDuration},
		"token_cap":    {kind: pInt, lo: 100},
	},
	ActCompressDaily: {"days": {kind: pInt, lo: 1, def: 1}},
	// model_similarity is how alike memories must be for a model, when
	// one is configured, to judge whether they are one fact (seed 000
	// §5.7: loose clusters, the model decides inside each).
	ActDedupe: {
		"similarity":       {kind: pFloat, lo: 0, hi: 1, loOpen: true, def: 0.9},
		"min_entries":      {kind: pInt, lo: 1, def: 10},
		"model_similarity": {kind: pFloat, lo: 0, hi: 1, loOpen: true, def: 0.4},
	},
	ActRefreshProfile: {"min_importance": {kind: pFloat, lo: 0, hi: 1, def: 0.7}},
	ActDecay:          {},
	ActArchive: {
		"score_below":  {kind: pFloat, lo: 0, hi: 1, loOpen: true, def: 0.1},
		"access_below": {kind: pInt, lo: 1, def: 2},
	},
	ActExpire: {
		"transient":  {kind: pDuration, def: 24 * time.Hour},
		"short_term": {kind: pDuration, def: 72 * time.Hour},
	},
	ActEnforceCap:  {"max_memories": {kind: pInt, lo: 1, def: 10000}},
	ActRenderCards: {"max_chars": {kind: pInt, lo: 100, def: 1500}, "per_kind": {kind: pInt, lo: 1, def: 5}},
	ActPublish:     {"type": {kind: pEventType, required: true}, "data": {kind: pObject}},
	// max_messages: how long a session grows before its older half is
	// summarized (seed 002 §4.2, ShortTermMemory(max_messages=200)).
	ActCompact: {"max_messages": {kind: pInt, lo: 2, def: 200}},
	// window: how far back the nightly report looks (seed 000 §7.4 step 8).
	ActReport: {"window": {kind: pDuration, def: 24 * time.Hour}},
}

// triggerDefault is the default of a parameter that depends on what
// triggers the rule: an episode built at session end says so.
func triggerDefault(action, key string, r *Rule) (string, bool) {
	var byTrigger map[string]string
	switch {
	case action == ActBuildEpisode && key == "source":
		byTrigger = map[string]string{"session.ended": "session_end", "context.compressing": "compression", "": "sweep"}
	case action == ActExtractNow && key == "reason":
		byTrigger = map[string]string{"session.ended": "session_ended", "context.compressing": "compressing", "": "sweep"}
	default:
		return "", false
	}
	on := r.On
	if r.Schedule != nil {
		on = ""
	}
	v, ok := byTrigger[on]
	if !ok && action == ActExtractNow {
		return "manual", true
	}
	return v, ok
}
