package episode

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
)

// episodeReply is what a model said about a session, cleaned and cut to
// the package's limits. Empty fields were missing or unusable.
type episodeReply struct {
	summary, goal, outcome string
	entities               []string
	decisions              []decision
}

type decision struct {
	turn    int
	hasTurn bool
	text    string
}

// scratchpadReply is a model's new scratchpad; has* report the fields it
// gave (an empty list given means "none left").
type scratchpadReply struct {
	projects, questions, steps          []string
	focus, progress                     string
	hasProjects, hasQuestions, hasSteps bool
}

var (
	errShape   = errors.New("the reply is not a JSON object")
	errNothing = errors.New("the reply has none of the fields asked for")
)

// Field names models use, the one the prompt asks for first.
var (
	summaryKeys   = []string{"summary", "abstract", "description", "摘要", "总结"}
	goalKeys      = []string{"goal", "intent", "objective", "task", "目标"}
	outcomeKeys   = []string{"outcome", "result", "status", "结果"}
	entityKeys    = []string{"entities", "entity", "keywords", "实体"}
	decisionKeys  = []string{"decisions", "decision", "决策", "决定"}
	decisionText  = []string{"decision", "text", "content", "description", "what"}
	turnKeys      = []string{"turn", "turn_index", "index"}
	projectKeys   = []string{"active_projects", "projects", "project", "当前项目"}
	focusKeys     = []string{"current_focus", "focus", "当前关注"}
	questionKeys  = []string{"open_questions", "questions", "未解决的问题"}
	stepKeys      = []string{"next_steps", "steps", "next", "下一步"}
	progressKeys  = []string{"progress", "recent_progress", "summary", "近期进展"}
	entityNameKey = []string{"name", "text", "entity", "value"}
)

// parseEpisodeReply reads a model's episode. It treats the reply as
// untrusted: it digs the JSON out of reasoning, fences and prose
// (llm.JSONContent), accepts common synonyms of field names and outcomes
// in English and Chinese, and cuts every field to the package's limits.
// A reply with no summary, goal or outcome in it is an error.
func parseEpisodeReply(content string) (episodeReply, error) {
	f, err := replyObject(content, summaryKeys, goalKeys, outcomeKeys)
	if err != nil {
		return episodeReply{}, err
	}
	r := episodeReply{
		summary: chars.ClipHead(clean(textField(f, summaryKeys)), MaxSummaryRunes),
		goal:    chars.ClipHead(clean(textField(f, goalKeys)), MaxGoalRunes),
		outcome: outcomeOf(textField(f, outcomeKeys)),
	}
	for _, e := range listField(f, entityKeys, entityNameKey) {
		if len(r.entities) == MaxEntities {
			break
		}
		if e = clean(e); e != "" && runes(e) <= MaxEntityRunes && len(e) <= maxEntityBytes && !slices.Contains(r.entities, e) {
			r.entities = append(r.entities, e)
		}
	}
	if raw, ok := llm.Field(f, decisionKeys); ok {
		r.decisions = decisionsOf(raw)
	}
	if r.summary == "" && r.goal == "" && r.outcome == "" {
		return episodeReply{}, errNothing
	}
	return r, nil
}

// parseScratchpadReply reads a model's scratchpad, as parseEpisodeReply
// does. A reply with none of the scratchpad's fields is an error.
func parseScratchpadReply(content string) (scratchpadReply, error) {
	f, err := replyObject(content, projectKeys, focusKeys, questionKeys, stepKeys, progressKeys)
	if err != nil {
		return scratchpadReply{}, err
	}
	var r scratchpadReply
	_, r.hasProjects = llm.Field(f, projectKeys)
	_, r.hasQuestions = llm.Field(f, questionKeys)
	_, r.hasSteps = llm.Field(f, stepKeys)
	r.projects = items(maxProjectRunes, MaxActiveProjects, listField(f, projectKeys, entityNameKey))
	r.questions = items(maxItemRunes, MaxOpenQuestions, listField(f, questionKeys, decisionText))
	r.steps = items(maxItemRunes, MaxNextSteps, listField(f, stepKeys, decisionText))
	r.focus = item(textField(f, focusKeys), maxItemRunes)
	r.progress = item(textField(f, progressKeys), maxProgressRunes)
	if !r.hasProjects && !r.hasQuestions && !r.hasSteps && r.focus == "" && r.progress == "" {
		return scratchpadReply{}, errNothing
	}
	return r, nil
}

// replyObject finds the reply's JSON object, with keys lower-cased. A
// single wrapper object ({"episode":{…}}) is looked through when the
// outer object has none of the fields wanted.
func replyObject(content string, wanted ...[]string) (map[string]json.RawMessage, error) {
	text, err := llm.JSONContent(content)
	if err != nil {
		return nil, err
	}
	for depth := 0; depth < 2; depth++ {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			return nil, errShape
		}
		f := llm.LowerKeys(obj)
		for _, keys := range wanted {
			if _, ok := llm.Field(f, keys); ok {
				return f, nil
			}
		}
		if len(obj) != 1 {
			break
		}
		for _, v := range obj {
			text = strings.TrimSpace(string(v))
		}
		if !strings.HasPrefix(text, "{") {
			break
		}
	}
	return nil, errNothing
}

// outcomeOf maps a model's outcome onto the five the episode knows, or ""
// for anything else.
func outcomeOf(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("-", "_", " ", "_").Replace(s)
	switch s {
	case memory.OutcomeCompleted, "complete", "success", "successful", "succeeded", "done", "solved", "resolved",
		"成功", "完成", "已完成", "解决":
		return memory.OutcomeCompleted
	case memory.OutcomePartial, "partial_success", "partially_completed", "mixed", "部分", "部分完成", "部分成功":
		return memory.OutcomePartial
	case memory.OutcomeFailed, "fail", "failure", "error", "unsuccessful", "失败", "未解决":
		return memory.OutcomeFailed
	case memory.OutcomeAbandoned, "cancelled", "canceled", "dropped", "given_up", "stopped", "放弃", "取消", "中止":
		return memory.OutcomeAbandoned
	case memory.OutcomeOngoing, "in_progress", "pending", "unfinished", "incomplete", "open", "进行中", "未完成":
		return memory.OutcomeOngoing
	}
	return ""
}

func decisionsOf(raw json.RawMessage) []decision {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		elems = []json.RawMessage{raw}
	}
	var out []decision
	for _, e := range elems {
		if len(out) == MaxDecisions {
			break
		}
		var d decision
		var s string
		if json.Unmarshal(e, &s) == nil {
			d.text = s
		} else {
			var obj map[string]json.RawMessage
			if json.Unmarshal(e, &obj) != nil || obj == nil {
				continue
			}
			f := llm.LowerKeys(obj)
			d.text = textField(f, decisionText)
			if n, err := strconv.Atoi(strings.TrimSpace(textField(f, turnKeys))); err == nil && n >= 0 {
				d.turn, d.hasTurn = n, true
			}
		}
		if d.text = chars.ClipHead(clean(d.text), MaxResultRunes); d.text != "" {
			out = append(out, d)
		}
	}
	return out
}

// textField returns a string or number field as text.
func textField(f map[string]json.RawMessage, keys []string) string {
	v, ok := llm.Field(f, keys)
	if !ok {
		return ""
	}
	return scalar(v)
}

func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		return n.String()
	}
	return ""
}

// listField reads a list of texts: an array of strings, or of objects
// holding one under nameKeys, or a single string.
func listField(f map[string]json.RawMessage, keys, nameKeys []string) []string {
	v, ok := llm.Field(f, keys)
	if !ok {
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(v, &elems) != nil {
		if s := scalar(v); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, e := range elems {
		if s := scalar(e); s != "" {
			out = append(out, s)
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) == nil && obj != nil {
			if s := textField(llm.LowerKeys(obj), nameKeys); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
