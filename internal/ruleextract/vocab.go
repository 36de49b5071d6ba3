package ruleextract

import "github.com/engramhq/engram/internal/memory"

// The predicate vocabulary. Predicates are canonical English whatever the
// language of the message, so a fact stated in Chinese and the same fact
// stated later in English share (subject, predicate) and can supersede.
//
// Subjects: "user" for the speaker's own facts (identity, preferences,
// rules, notes); the lowercased tool or package name for tool facts
// ("python", "go", "node", "postgres"); a short canonical noun for paths
// ("config", "logs", "code", "data", or the phrase itself); the project for
// decisions ("project" when the turn names none).
const (
	PredName       = "name"       // user: what they are called
	PredNickname   = "nickname"   // user: what they want to be called
	PredLocation   = "location"   // user: where they live or are based
	PredHometown   = "hometown"   // user: where they come from
	PredEmployer   = "employer"   // user: who they work for
	PredOccupation = "occupation" // user: what they do
	PredAge        = "age"        // user: how old they are
	PredLikes      = "likes"      // user: something they like (many values)
	PredDislikes   = "dislikes"   // user: something they dislike (many values)
	PredPrefers    = "prefers"    // user: a preference among options (many values)
	PredRule       = "rule"       // user: an instruction for the agent (many values)
	PredNote       = "note"       // user: something they asked to remember (many values)
	PredUses       = "uses"       // tool: in use, or no longer in use
	PredVersion    = "version"    // tool: the version in use
	PredPath       = "path"       // thing: where it lives on disk
	PredDecision   = "decision"   // project: a decision taken (many values)
	PredPlan       = "plan"       // project or user: something planned, not yet done (many values)
	PredError      = "error"      // program: how it failed when a tool ran it (many values)
)

// SingleValued reports whether a subject holds at most one current value for
// predicate, so a newer candidate with the same subject and predicate
// replaces the older memory. The others (likes, dislikes, prefers, rule,
// note, decision) are sets: a new one adds to them, and only a near-duplicate
// or a contradiction should supersede.
func SingleValued(predicate string) bool { return memory.SingleValued(predicate) }

// spec is how a predicate is stored: its kind, its decay category and its
// importance (seed 001 §6.4: identity 1.0, technical decision 0.8, ordinary
// facts lower). Confidence is not here: it depends on how clear the pattern
// that matched was.
type spec struct {
	kind       memory.Kind
	category   memory.Category
	importance float64
}

// specs decides kind and category per predicate. Preferences, rules and
// notes are CategoryConfig rather than decision or conversation because they
// must not fade: a user who said "never use emoji" or "I prefer dark mode"
// expects it to hold until they say otherwise (seed 003 keeps core rules and
// preferences PERMANENT), and supersede, not decay, is how they change.
var specs = map[string]spec{
	PredName:       {memory.KindIdentity, memory.CategoryIdentity, 1.0},
	PredNickname:   {memory.KindIdentity, memory.CategoryIdentity, 0.9},
	PredLocation:   {memory.KindIdentity, memory.CategoryIdentity, 0.8},
	PredHometown:   {memory.KindIdentity, memory.CategoryIdentity, 0.7},
	PredEmployer:   {memory.KindIdentity, memory.CategoryIdentity, 0.8},
	PredOccupation: {memory.KindIdentity, memory.CategoryIdentity, 0.8},
	PredAge:        {memory.KindIdentity, memory.CategoryIdentity, 0.7},
	PredLikes:      {memory.KindPreference, memory.CategoryConfig, 0.6},
	PredDislikes:   {memory.KindPreference, memory.CategoryConfig, 0.6},
	PredPrefers:    {memory.KindPreference, memory.CategoryConfig, 0.7},
	PredRule:       {memory.KindRule, memory.CategoryConfig, 0.9},
	PredNote:       {memory.KindFact, memory.CategoryConfig, 0.7},
	PredUses:       {memory.KindFact, memory.CategoryConfig, 0.6},
	PredVersion:    {memory.KindFact, memory.CategoryConfig, 0.7},
	PredPath:       {memory.KindFact, memory.CategoryConfig, 0.6},
	PredDecision:   {memory.KindContext, memory.CategoryDecision, 0.8},
	PredPlan:       {memory.KindContext, memory.CategoryEvent, 0.6},
	PredError:      {memory.KindError, memory.CategoryDebug, 0.6},
}

// Confidence levels. Seed 004 §6 routes ≥ 0.85 to active memory, 0.60–0.85
// to pending, and drops the rest, so a pattern that can misfire is given a
// level below 0.85 on purpose.
const (
	confStrong  = 0.9  // explicit, unambiguous form: "我叫…", "my name is …", "from now on …"
	confClear   = 0.85 // clear but a little looser: "call me …", "我是北京人"
	confWeak    = 0.8  // often right, sometimes not: "I'm Ana", bare "don't …", "let's go with …"
	confGuess   = 0.75 // plausible: an unknown tool with a version, "我在北京工作"
	confHint    = 0.7  // a hint worth asking about; also the cap for assistant turns
	confToolRun = 0.65 // a package install or version switch seen in a tool call
	confBoost   = 0.05 // added when the user prefixed the fact with "remember …"
	confMax     = 0.95
)
