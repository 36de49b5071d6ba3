package episode

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// ToolCall is a tool the agent called, with its raw input (often a JSON
// object). ID, when the agent sent one, is what its result names.
type ToolCall struct {
	ID, Name, Input string
}

// ToolResult is what a tool returned. ToolCallID names the call it
// answers; without one, results answer calls in order.
type ToolResult struct {
	ToolCallID, Content string
	IsError             bool
}

// Turn is one conversation message. Role is user, assistant, tool or
// system; a tool turn with Content and no ToolResults is read as one
// result.
type Turn struct {
	Index       int
	Role        string
	Content     string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	Time        time.Time
	Project     string
}

// Input is what an episode is built from.
type Input struct {
	SessionID string
	// Turns are the turns the episode covers. They are read in Index
	// order (stably, so equal indices keep the order given).
	Turns []Turn
	// Summary is the agent's own summary of the turns, sent with
	// context.compressing; when present it is the extractive summary.
	Summary string
	// Source is SourceSessionEnd, SourceCompression or SourceSweep; any
	// other value is read as SourceSessionEnd.
	Source string
	// Memories are the ids of memories extracted from these turns.
	Memories []string
}

// What made an episode.
const (
	SourceSessionEnd  = "session_end"
	SourceCompression = "compression"
	SourceSweep       = "sweep"
)

// Limits on what an episode holds. Each is within the bounds of the
// episode.built event (events.MaxEpisode…, TestLimitsFitEvents), so an
// episode from this package always validates.
const (
	MaxGoalRunes    = 200
	MaxSummaryRunes = 400
	MaxParamsRunes  = 120
	MaxResultRunes  = 160
	MaxErrorRunes   = 160
	MaxEntities     = 20
	MaxEntityRunes  = 80
	// MaxActions bounds the action nodes: MaxToolActions tool calls (the
	// first and last halves of a longer session) and MaxDecisions
	// decisions.
	MaxActions     = 200
	MaxToolActions = MaxActions - MaxDecisions
	MaxDecisions   = 10
	MaxTools       = 50
	MaxLinked      = 200
)

const (
	maxEntityBytes   = 240 // entities are identifiers in the event: 256 bytes at most
	maxToolNameRunes = 64
	maxPartRunes     = 160 // one sentence of a summary
)

// Roles of turns.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

// ID is an episode's id: "ep_" and a hash of the session and the turn
// indices it covers, so building the same episode twice (a redelivered
// event, a sweep over turns already told) gives the same id.
func ID(sessionID string, turns []int) string {
	idx := slices.Clone(turns)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	h := sha256.New()
	h.Write([]byte(sessionID))
	h.Write([]byte{0})
	for i, n := range idx {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write([]byte(strconv.Itoa(n)))
	}
	return "ep_" + hex.EncodeToString(h.Sum(nil))[:20]
}

// Extractive builds an episode with no model. It is deterministic: the
// same input gives the same episode (no clock, no randomness, no map
// order). Namespace and User are left for the caller; ID is ID(session,
// turns); Started and Ended are the earliest and latest turn times.
//
// Goal is the first substantive user request: the first user turn that is
// more than a greeting or an acknowledgement ("hi", "ok", "好的", "继续"),
// leading greetings dropped, cut to whole sentences within MaxGoalRunes.
// With no user turn it is the start of the agent's summary.
//
// Outcome, first rule that holds:
//  1. abandoned: the user's last words (their last turn that is more than
//     an acknowledgement) call it off: "never mind", "forget it", "stop
//     here", "give up", "算了", "不用了", "别弄了", "放弃"… or a bare
//     "stop"/"停".
//  2. failed: the last tool call that got a result got an error, so
//     nothing succeeded after it.
//  3. ongoing: the user spoke last (beyond an acknowledgement): their
//     request or question is unanswered.
//  4. completed (partial): the final assistant text reads as done, with a
//     done cue ("done", "fixed", "deployed", "tests pass", "完成", "已经",
//     "搞定", "修好", "成功"…) and no failure cue ("not yet", "failed",
//     "couldn't", "失败", "无法", "还没"…); partial when it also says
//     "partially", "mostly done", "部分完成"….
//  5. completed: no tool was called and the final assistant text answers
//     rather than asks (a question answered).
//  6. ongoing otherwise.
//
// Actions are one node per tool call, in order (MaxToolActions at most:
// the first and last halves of a longer session). A result is paired with
// its call by ToolCallID, else with the oldest call still unanswered at
// that point. Params are the call's key parameters: for a JSON object up
// to three of path, command, query, url and their kin as "key=value",
// else its first two plain fields, else the raw input; MaxParamsRunes.
// Result is the output (head and tail, MaxResultRunes), Success is
// !IsError, Error the first line of an error. A call with no result has
// Success false and no Result or Error. Tools are the distinct tool names
// in the order first called.
//
// Entities, at most MaxEntities, once each (case-insensitively), by kind
// and then in order of appearance: the turns' projects as
// ProjectPrefix+name, most recently used first (at most 5); file paths
// (rooted, with an extension, or with two slashes: "internal/auth/jwt.go",
// "~/bin/run", "README.md", not "and/or"); the hosts of URLs; tools with a
// version ("Python 3.12", "Go 1.26", "Vue3"); `code spans`; terms quoted
// in 「」『』“”《》; names: acronyms (NATS), CamelCase identifiers
// (PostgreSQL, parseToken) and capitalised words that do not start a
// sentence ("we use Redis"), less function words, calendar words and log
// levels. Names, versions, code and quotes come from what the user and the
// assistant wrote (the first 8 KB of each turn, fenced code skipped);
// tool inputs give paths and hosts; tool output, too noisy, gives none.
//
// Summary is extractive, at most MaxSummaryRunes, in the words (and so
// the language) of the turns. The agent's own summary, when sent, is used
// as it is, cut to whole sentences. Otherwise sentences of the turns are
// chosen best first until the budget is spent and put back in
// conversation order: the goal; the sentence that says how it ended (the
// done sentence, the user's calling off, the final error, the unanswered
// question); the assistant's last next-step sentence ("next", "will",
// "下一步", "接下来"…); its first sentence after the first failure
// (usually the diagnosis); up to two decision sentences ("decided",
// "instead of", "决定", "改用"…). A session with no sentence at all is
// summarised by its tools, or by its length.
//
// Importance, in [0, 1], rounded to two places:
//
//	0.10 base
//	0.25 × min(1, turns with something in them / 20)   length
//	0.25 × min(1, tool calls / 10)                      tool activity
//	0.10 if a tool failed, 0.10 more if one succeeded after   errors, fixes
//	0.10 per decision sentence, at most 2               decisions
//
// so a long working session that hit an error, fixed it and settled a
// choice scores 1, and a short chat 0.1 to 0.2.
func Extractive(in Input) memory.Episode {
	return analyse(in).episode(in)
}

func (s *session) episode(in Input) memory.Episode {
	ep := memory.Episode{
		ID:             ID(in.SessionID, s.indices),
		SessionID:      in.SessionID,
		Goal:           s.goal.text,
		Outcome:        s.outcome,
		Started:        s.started,
		Ended:          s.ended,
		Actions:        s.actionNodes(),
		Entities:       s.entities(),
		Tools:          s.tools(),
		LinkedMemories: linked(in.Memories),
		Source:         source(in.Source),
		Turns:          s.indices,
	}
	ep.Summary = s.summary(in.Summary)
	ep.Importance = s.importance(s.decisions)
	return ep
}

func source(s string) string {
	switch s {
	case SourceCompression, SourceSweep:
		return s
	}
	return SourceSessionEnd
}

// linked keeps the memory ids once each, in order, within MaxLinked.
func linked(ids []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		id = clean(id)
		if id == "" || seen[id] || len(id) > maxEntityBytes {
			continue
		}
		seen[id] = true
		out = append(out, id)
		if len(out) == MaxLinked {
			break
		}
	}
	return out
}

// importance is the formula documented at Extractive.
func (s *session) importance(decisions int) float64 {
	v := 0.10
	v += 0.25 * min(1, float64(s.busyTurns)/20)
	v += 0.25 * min(1, float64(len(s.calls))/10)
	if s.errors > 0 {
		v += 0.10
		if s.fixed {
			v += 0.10
		}
	}
	v += 0.10 * float64(min(2, decisions))
	return math.Round(min(1, max(0, v))*100) / 100
}

// fitSentences returns the leading whole sentences of text that fit in n
// runes, or the first sentence cut to n when even it does not fit.
func fitSentences(text string, n int) string {
	ss := sentences(text)
	if len(ss) == 0 {
		return ""
	}
	var kept []string
	for _, s := range ss {
		if runes(joinSentences(append(kept, s))) > n {
			break
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return chars.ClipHead(ss[0], n)
	}
	return joinSentences(kept)
}

// normRole lower-cases a role; "human" and "ai" are what some agents
// call them.
func normRole(r string) string {
	r = strings.ToLower(strings.TrimSpace(r))
	switch r {
	case "human":
		return roleUser
	case "ai", "model", "bot":
		return roleAssistant
	case "function":
		return roleTool
	}
	return r
}
