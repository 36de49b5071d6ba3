package llmextract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/ruleextract"
)

// Limits on what a reply may put into memory.
const (
	maxItems          = 50
	maxContentBytes   = 1000
	maxSubjectBytes   = 100
	maxPredicateBytes = 64
	maxLabelBytes     = 100 // project and topic
	snippetRunes      = 40  // of a dropped item's text in a problem line
	defaultConfidence = 0.7
	defaultImportance = 0.5
)

// errShape is a reply that is JSON but not a list of facts.
var errShape = errors.New("reply is JSON but holds no list of facts")

// Parse turns a model's reply into candidates. It accepts what real models
// send: reasoning blocks, code fences and prose around the JSON, trailing
// commas, {"facts":[…]}, {"memories":[…]} or a bare array, a reply cut off
// mid-list (the complete items are kept), synonyms and other languages for
// kinds and categories, numbers as strings.
//
// problems has one line per item dropped or changed, naming the item by its
// position and at most snippetRunes of its text. err is non-nil only when
// the reply holds nothing usable: no JSON, the wrong shape, or items of
// which none could be used. An empty list is not an error: the model found
// nothing worth keeping.
func Parse(content string) ([]memory.Candidate, []string, error) {
	cands, _, problems, err := parse(content)
	return cands, problems, err
}

// parse is Parse that also returns, for each candidate, the index of the
// turn the model says it came from (-1 when it named none).
func parse(content string) ([]memory.Candidate, []int, []string, error) {
	if s := strings.Trim(strings.TrimSpace(content), `."'`); strings.EqualFold(s, "none") {
		return nil, nil, nil, nil // seed 000's prompt convention for "nothing"
	}
	var problems []string
	items, lone, err := itemsIn(content)
	if err != nil || lone || !allObjects(items) {
		// A reply cut off by max_tokens is not JSON as a whole; JSONContent
		// then finds only its longest complete piece, often one item.
		if salvaged, cut := salvage(content); len(salvaged) > 0 && len(salvaged) >= len(items) {
			items, err = salvaged, nil
			if cut {
				problems = append(problems, fmt.Sprintf("reply breaks off; complete items kept: %d", len(items)))
			}
		}
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse extraction reply: %w", err)
	}

	var out []memory.Candidate
	var turns []int
	seen := make(map[[3]string]bool)
	for i, raw := range items {
		if len(out) == maxItems {
			problems = append(problems, fmt.Sprintf("items %d to %d: over the cap of %d", i, len(items)-1, maxItems))
			break
		}
		c, turn, problem := candidate(raw)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("item %d: %s", i, problem))
			continue
		}
		key := [3]string{c.Subject, c.Predicate, c.Content}
		if seen[key] {
			problems = append(problems, fmt.Sprintf("item %d: duplicate %s", i, describe(c.Subject, c.Predicate, c.Content)))
			continue
		}
		seen[key] = true
		out = append(out, c)
		turns = append(turns, turn)
	}
	if len(out) == 0 && len(items) > 0 {
		return nil, nil, problems, fmt.Errorf("parse extraction reply: none of its %d items is usable", len(items))
	}
	return out, turns, problems, nil
}

// maxReplySummaryRunes bounds the summary taken from a reply: the prompt
// asks for 200 characters, and a model that writes more is cut.
const maxReplySummaryRunes = 400

// summaryIn is the "summary" string of a reply's JSON object, on one line
// and cut to maxReplySummaryRunes; "" when there is none. It never fails:
// a reply without a summary still has its facts.
func summaryIn(content string) string {
	text, err := llm.JSONContent(content)
	if err != nil || !strings.HasPrefix(text, "{") {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(llm.LowerKeys(obj)["summary"], &s) != nil {
		return ""
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if r := []rune(s); len(r) > maxReplySummaryRunes {
		s = string(r[:maxReplySummaryRunes]) + "…"
	}
	return s
}

// itemsIn finds the list of facts in a reply. lone reports that the JSON
// was a single fact object rather than a list.
func itemsIn(content string) (items []json.RawMessage, lone bool, err error) {
	text, err := llm.JSONContent(content)
	if err != nil {
		return nil, false, err
	}
	return listIn(text, 0)
}

// listIn finds the list of facts in valid JSON text.
func listIn(text string, depth int) (items []json.RawMessage, lone bool, err error) {
	if strings.HasPrefix(text, "[") {
		if err := json.Unmarshal([]byte(text), &items); err != nil {
			return nil, false, err
		}
		return items, false, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, false, errShape
	}
	if len(obj) == 0 {
		return nil, false, nil
	}
	fields := llm.LowerKeys(obj)
	for _, key := range []string{"facts", "memories", "memory", "items", "results"} {
		raw, ok := fields[key]
		if !ok {
			continue
		}
		if string(raw) == "null" {
			return nil, false, nil
		}
		if json.Unmarshal(raw, &items) != nil {
			return nil, false, errShape
		}
		return items, false, nil
	}
	if _, ok := llm.Field(fields, contentKeys); ok {
		return []json.RawMessage{json.RawMessage(text)}, true, nil
	}
	// {"result":{"facts":[…]}}: one wrapper too many.
	if len(obj) == 1 && depth == 0 {
		for _, v := range obj {
			if inner := strings.TrimSpace(string(v)); strings.HasPrefix(inner, "{") {
				return listIn(inner, depth+1)
			}
		}
	}
	return nil, false, errShape
}

func allObjects(items []json.RawMessage) bool {
	for _, it := range items {
		if !strings.HasPrefix(strings.TrimSpace(string(it)), "{") {
			return false
		}
	}
	return true
}

// salvage reads the items of the first list of objects in a reply, item
// by item, so that a list cut off by max_tokens still yields its complete
// items. cut reports that the list did not end. A trailing comma, which
// JSONContent would have repaired had it not found a complete item first,
// does not count as an end missing.
func salvage(content string) (items []json.RawMessage, cut bool) {
	s := content
	for _, tag := range []string{"</think>", "</thinking>", "</reasoning>"} {
		if i := strings.LastIndex(s, tag); i >= 0 {
			s = s[i+len(tag):]
		}
	}
	start := -1
	for _, key := range []string{`"facts"`, `"memories"`} {
		if i := strings.Index(s, key); i >= 0 {
			if j := strings.IndexByte(s[i:], '['); j >= 0 {
				start = i + j
			}
			break
		}
	}
	if start < 0 {
		start = strings.IndexByte(s, '[')
	}
	if start < 0 {
		return nil, false
	}
	s = s[start:]
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for {
		if !dec.More() {
			// The closing bracket, or the end of the reply.
			tok, err := dec.Token()
			cut = err != nil || tok != json.Delim(']')
			break
		}
		if len(items) > maxItems {
			break // Parse reports the overflow
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			rest := strings.TrimLeft(s[min(len(s), int(dec.InputOffset())):], " \t\r\n")
			cut = !strings.HasPrefix(rest, "]")
			break
		}
		items = append(items, raw)
	}
	if !allObjects(items) {
		return nil, false
	}
	return items, cut
}

// Field names models use, first the one the prompt asks for.
var (
	subjectKeys    = []string{"subject", "entity", "subj"}
	predicateKeys  = []string{"predicate", "attribute", "relation", "property", "pred"}
	contentKeys    = []string{"content", "fact", "text", "memory", "value", "description"}
	kindKeys       = []string{"kind", "type", "memory_type"}
	categoryKeys   = []string{"category", "cat"}
	projectKeys    = []string{"project"}
	topicKeys      = []string{"topic"}
	importanceKeys = []string{"importance", "priority"}
	confidenceKeys = []string{"confidence", "certainty"}
	updatesKeys    = []string{"updates", "is_update", "update", "replaces"}
	turnKeys       = []string{"turn", "turn_index", "source_turn", "from_turn"}
)

// candidate normalises one item, or says why it cannot be used.
func candidate(raw json.RawMessage) (memory.Candidate, int, string) {
	if !utf8.Valid(raw) {
		return memory.Candidate{}, -1, "invalid UTF-8"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return memory.Candidate{}, -1, "not an object"
	}
	f := llm.LowerKeys(obj)
	// JSON escapes can still spell invalid text: a lone surrogate decodes
	// to U+FFFD.
	for _, keys := range [][]string{subjectKeys, predicateKeys, contentKeys} {
		if strings.ContainsRune(textField(f, keys), utf8.RuneError) {
			return memory.Candidate{}, -1, "invalid UTF-8"
		}
	}
	c := memory.Candidate{
		Subject:    subjectOf(noControl(textField(f, subjectKeys))),
		Predicate:  predicateOf(noControl(textField(f, predicateKeys))),
		Content:    chars.CutBytes(chars.OneLine(prose(textField(f, contentKeys))), maxContentBytes),
		Project:    chars.CutBytes(chars.OneLine(noControl(textField(f, projectKeys))), maxLabelBytes),
		Topic:      chars.CutBytes(chars.OneLine(noControl(textField(f, topicKeys))), maxLabelBytes),
		Importance: unitField(f, importanceKeys, defaultImportance),
		Confidence: unitField(f, confidenceKeys, defaultConfidence),
	}
	if v, ok := llm.Field(f, updatesKeys); ok {
		c.Updates = truth(v)
	}
	c.Kind = kindOf(textField(f, kindKeys))
	cat, ok := categoryOf(textField(f, categoryKeys))
	if !ok {
		cat = defaultCategory(c.Kind)
	}
	c.Category = cat
	var missing []string
	for _, m := range []struct{ name, value string }{{"subject", c.Subject}, {"predicate", c.Predicate}, {"content", c.Content}} {
		if m.value == "" {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return memory.Candidate{}, -1, "missing " + strings.Join(missing, " and ") + " " + describe(c.Subject, c.Predicate, c.Content)
	}
	return c, turnOf(textField(f, turnKeys)), ""
}

// turnOf reads the index of the turn a fact came from, as the prompt
// shows it ("3", "[3]", "turn 3"); -1 when there is none to read.
func turnOf(text string) int {
	t := strings.TrimSpace(strings.ToLower(text))
	t = strings.TrimSpace(strings.TrimPrefix(t, "turn"))
	t = strings.Trim(t, "[]# ")
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// describe names an item in a problem line without quoting much of it.
func describe(subject, predicate, content string) string {
	return fmt.Sprintf("(%s/%s %q)", chars.ClipMiddle(subject, snippetRunes/2), chars.ClipMiddle(predicate, snippetRunes/2), chars.ClipMiddle(content, snippetRunes))
}

// textField returns a string or number field as text.
func textField(f map[string]json.RawMessage, keys []string) string {
	v, ok := llm.Field(f, keys)
	if !ok {
		return ""
	}
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

// unitField reads a score into [0, 1]: a number, a number in a string
// ("0.8", "80%"), or a word ("high").
func unitField(f map[string]json.RawMessage, keys []string, def float64) float64 {
	text := strings.ToLower(strings.TrimSpace(textField(f, keys)))
	if text == "" {
		return def
	}
	if w, ok := scoreWords[text]; ok {
		return w
	}
	scale := 1.0
	if t, ok := strings.CutSuffix(text, "%"); ok {
		text, scale = strings.TrimSpace(t), 100
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return def
	}
	return min(1, max(0, v/scale))
}

var scoreWords = map[string]float64{
	"high": 0.8, "medium": 0.5, "low": 0.2, "critical": 1, "very high": 0.9, "very low": 0.1,
	"高": 0.8, "中": 0.5, "低": 0.2,
}

func truth(v json.RawMessage) bool {
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return b
	}
	var n float64
	if json.Unmarshal(v, &n) == nil {
		return n != 0
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "1", "是":
			return true
		}
	}
	return false
}

// subjectOf lowercases a subject so "Postgres" and "postgres" are one
// entity. A subject with CJK in it is kept as it is; the user is "user" in
// any language.
func subjectOf(s string) string {
	s = chars.OneLine(s)
	if !chars.HasCJK(s) {
		s = strings.ToLower(s)
	}
	switch s {
	case "the user", "the_user", "user's", "me", "i", "myself", "用户", "我", "用户本人":
		return "user"
	}
	return chars.CutBytes(s, maxSubjectBytes)
}

// predicateOf lowercases a predicate into snake_case and maps common
// synonyms onto the canonical vocabulary, so "lives_in" and "住址" collide
// with the rule extractor's "location".
func predicateOf(s string) string {
	p := strings.ToLower(chars.OneLine(s))
	p = strings.Trim(strings.NewReplacer(" ", "_", "-", "_").Replace(p), "_")
	if v, ok := predicateSynonyms[p]; ok {
		return v
	}
	return chars.CutBytes(p, maxPredicateBytes)
}

var predicateSynonyms = invert(map[string][]string{
	ruleextract.PredName:       {"full_name", "is_named", "名字", "姓名"},
	ruleextract.PredNickname:   {"called", "prefers_to_be_called", "昵称"},
	ruleextract.PredLocation:   {"lives_in", "located_in", "based_in", "city", "residence", "住址", "居住地", "所在地", "位置"},
	ruleextract.PredHometown:   {"comes_from", "born_in", "家乡", "老家"},
	ruleextract.PredEmployer:   {"works_at", "works_for", "company", "公司", "雇主"},
	ruleextract.PredOccupation: {"job", "job_title", "profession", "职业"},
	ruleextract.PredAge:        {"年龄"},
	ruleextract.PredLikes:      {"like", "loves", "enjoys", "喜欢"},
	ruleextract.PredDislikes:   {"dislike", "hates", "不喜欢"},
	ruleextract.PredPrefers:    {"prefer", "preference", "preferred", "偏好"},
	ruleextract.PredRule:       {"rules", "instruction", "规则"},
	ruleextract.PredNote:       {"notes", "备注"},
	ruleextract.PredUses:       {"use", "using", "使用"},
	ruleextract.PredVersion:    {"uses_version", "版本"},
	ruleextract.PredPath:       {"file_path", "location_path", "路径"},
	ruleextract.PredDecision:   {"decided", "decisions", "决定", "决策"},
})

func invert(m map[string][]string) map[string]string {
	out := make(map[string]string)
	for canonical, synonyms := range m {
		for _, s := range synonyms {
			out[s] = canonical
		}
	}
	return out
}

// label normalises a kind or category name for lookup.
func label(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Trim(strings.NewReplacer(" ", "_", "-", "_").Replace(s), "_")
}

// variants are the forms of a label worth looking up: as given, without
// a "user_" prefix, without an "_info"-style suffix or a plural s.
func variants(s string) []string {
	out := []string{s}
	base := strings.TrimPrefix(s, "user_")
	for _, suffix := range []string{"_information", "_info", "_memory", "_fact", "s"} {
		if t, ok := strings.CutSuffix(base, suffix); ok && t != "" {
			base = t
			break
		}
	}
	return append(out, strings.TrimPrefix(s, "user_"), base)
}

func kindOf(s string) memory.Kind {
	for _, v := range variants(label(s)) {
		if k := memory.Kind(v); k.Valid() {
			return k
		}
		if k, ok := kindSynonyms[v]; ok {
			return k
		}
	}
	return memory.KindFact
}

var kindSynonyms = map[string]memory.Kind{
	"knowledge": memory.KindFact, "事实": memory.KindFact, "知识": memory.KindFact,
	"like": memory.KindPreference, "habit": memory.KindPreference, "偏好": memory.KindPreference, "喜好": memory.KindPreference,
	"instruction": memory.KindRule, "constraint": memory.KindRule, "requirement": memory.KindRule,
	"规则": memory.KindRule, "约定": memory.KindRule, "规范": memory.KindRule,
	"howto": memory.KindSkill, "how_to": memory.KindSkill, "procedure": memory.KindSkill, "solution": memory.KindSkill,
	"技能": memory.KindSkill, "方法": memory.KindSkill,
	"mistake": memory.KindError, "bug": memory.KindError, "failure": memory.KindError, "lesson": memory.KindError,
	"错误": memory.KindError, "教训": memory.KindError,
	"project": memory.KindContext, "task": memory.KindContext, "background": memory.KindContext,
	"上下文": memory.KindContext, "背景": memory.KindContext, "项目": memory.KindContext,
	"personal": memory.KindIdentity, "profile": memory.KindIdentity, "persona": memory.KindIdentity,
	"身份": memory.KindIdentity, "个人信息": memory.KindIdentity,
}

func categoryOf(s string) (memory.Category, bool) {
	for _, v := range variants(label(s)) {
		if c := memory.Category(v); c.Valid() {
			return c, true
		}
		if c, ok := categorySynonyms[v]; ok {
			return c, true
		}
	}
	return "", false
}

var categorySynonyms = map[string]memory.Category{
	"personal": memory.CategoryIdentity, "profile": memory.CategoryIdentity, "身份": memory.CategoryIdentity,
	"configuration": memory.CategoryConfig, "setting": memory.CategoryConfig, "preference": memory.CategoryConfig,
	"rule": memory.CategoryConfig, "配置": memory.CategoryConfig, "设置": memory.CategoryConfig, "偏好": memory.CategoryConfig,
	"secret": memory.CategoryCredential, "password": memory.CategoryCredential, "凭证": memory.CategoryCredential, "密钥": memory.CategoryCredential,
	"决策": memory.CategoryDecision, "决定": memory.CategoryDecision,
	"fix": memory.CategorySolution, "解决方案": memory.CategorySolution, "方案": memory.CategorySolution,
	"事件": memory.CategoryEvent, "日程": memory.CategoryEvent,
	"chat": memory.CategoryConversation, "对话": memory.CategoryConversation, "闲聊": memory.CategoryConversation,
	"temporary": memory.CategoryTemp, "临时": memory.CategoryTemp,
	"debugging": memory.CategoryDebug, "调试": memory.CategoryDebug,
}

// defaultCategory is the decay class for an item whose category is
// missing or unknown. Identity, preferences and rules must not fade with
// the conversation (the rule extractor files them the same way); anything
// else fades like a conversation.
func defaultCategory(k memory.Kind) memory.Category {
	switch k {
	case memory.KindIdentity:
		return memory.CategoryIdentity
	case memory.KindPreference, memory.KindRule:
		return memory.CategoryConfig
	}
	return memory.CategoryConversation
}

// noControl drops every control character from a short field (a NUL in a
// subject, an ESC in a project): a model's stray byte costs that byte,
// never the fact, let alone the request.
func noControl(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// prose drops control characters from free text but keeps line breaks
// and tabs.
func prose(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s)
}
