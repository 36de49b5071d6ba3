package events

import (
	"fmt"
	"strings"
	"time"
)

var (
	extractionReasons = []string{ReasonQuiet, ReasonTokenCap, ReasonCompressing, ReasonSessionEnded, ReasonSweep, ReasonManual, ReasonRedrive}
	extractors        = []string{ExtractorRules, ExtractorLLM}
	kinds             = []string{KindFact, KindPreference, KindRule, KindSkill, KindError, KindContext, KindIdentity}
	categories        = []string{CategoryIdentity, CategoryConfig, CategoryCredential, CategoryDecision, CategorySolution,
		CategoryEvent, CategoryConversation, CategoryTemp, CategoryDebug}
)

func decodeExtractionRequested(r *reader, path string) (ExtractionRequested, error) {
	var x ExtractionRequested
	hasTurns := false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "request_id":
			x.RequestID, err = r.str(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		case "reason":
			x.Reason, err = r.str(p)
		case "turns":
			hasTurns = true
			err = r.array(p, func(i int, p string) error {
				if i == MaxExtractionTurns {
					return tooMany(join(path, "turns"), MaxExtractionTurns, "turns")
				}
				t, err := decodeExtractionTurn(r, p)
				x.Turns = append(x.Turns, t)
				return err
			})
		case "summary":
			x.Summary, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "request_id"), x.RequestID, true); err != nil {
		return x, err
	}
	if err := checkID(join(path, "session_id"), x.SessionID, true); err != nil {
		return x, err
	}
	if err := oneOf(join(path, "reason"), x.Reason, extractionReasons...); err != nil {
		return x, err
	}
	if !hasTurns {
		return x, fieldErr(join(path, "turns"), "required")
	}
	if len(x.Turns) == 0 {
		return x, fieldErr(join(path, "turns"), "must hold at least one turn")
	}
	for i := 1; i < len(x.Turns); i++ {
		if prev, cur := x.Turns[i-1].TurnIndex, x.Turns[i].TurnIndex; cur <= prev {
			return x, fieldErr(fmt.Sprintf("%s.turns[%d].turn_index", path, i),
				fmt.Sprintf("is %d after %d; turns must be in ascending turn_index order, each once", cur, prev))
		}
	}
	return x, nil
}

func decodeExtractionTurn(r *reader, path string) (ExtractionTurn, error) {
	var t ExtractionTurn
	hasIndex, hasTime := false, false
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "turn_index":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			t.TurnIndex, hasIndex = int(n), true
		case "role":
			t.Role, err = r.str(p)
		case "content":
			t.Content, err = r.str(p)
		case "tool_calls":
			err = r.array(p, func(_ int, p string) error {
				c, err := decodeToolCall(r, p)
				t.ToolCalls = append(t.ToolCalls, c)
				return err
			})
		case "tool_results":
			err = r.array(p, func(_ int, p string) error {
				res, err := decodeToolResult(r, p)
				t.ToolResults = append(t.ToolResults, res)
				return err
			})
		case "time":
			t.Time, err = r.timestamp(p)
			hasTime = true
		case "project":
			t.Project, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if !hasIndex {
		return t, fieldErr(join(path, "turn_index"), "required")
	}
	if err := checkRole(join(path, "role"), t.Role); err != nil {
		return t, err
	}
	if !hasTime {
		return t, fieldErr(join(path, "time"), "required")
	}
	return t, checkID(join(path, "project"), t.Project, false)
}

func decodeMemoryExtracted(r *reader, path string) (MemoryExtracted, error) {
	var x MemoryExtracted
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "request_id":
			x.RequestID, err = r.str(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		case "extractor":
			x.Extractor, err = r.str(p)
		case "pass":
			x.Pass, err = r.str(p)
		case "model":
			x.Model, err = r.str(p)
		case "usage":
			x.Usage, err = decodeUsage(r, p)
		case "calls":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			x.Calls = int(n)
		case "turns":
			x.Turns, err = decodeIndexes(r, p, MaxExtractionTurns)
		case "candidates":
			x.Candidates = []Candidate{} // present and empty is not absent
			err = r.array(p, func(i int, p string) error {
				if i == MaxCandidates {
					return tooMany(join(path, "candidates"), MaxCandidates, "candidates")
				}
				c, err := decodeCandidate(r, p)
				x.Candidates = append(x.Candidates, c)
				return err
			})
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "request_id"), x.RequestID, true); err != nil {
		return x, err
	}
	if err := checkID(join(path, "session_id"), x.SessionID, true); err != nil {
		return x, err
	}
	if err := oneOf(join(path, "extractor"), x.Extractor, extractors...); err != nil {
		return x, err
	}
	if x.Pass != "" {
		if err := oneOf(join(path, "pass"), x.Pass, PassTurn); err != nil {
			return x, err
		}
		if x.Extractor != ExtractorRules || len(x.Turns) != 1 {
			return x, fieldErr(join(path, "pass"), "a turn's reading is the rules' of one turn")
		}
	}
	if err := checkID(join(path, "model"), x.Model, false); err != nil {
		return x, err
	}
	return x, missing(path, has, "usage", "calls", "turns", "candidates")
}

func decodeUsage(r *reader, path string) (Usage, error) {
	var u Usage
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		var n int64
		switch key {
		case "prompt_tokens":
			n, err = r.integer(p, 0, MaxCount)
			u.PromptTokens = int(n)
		case "completion_tokens":
			n, err = r.integer(p, 0, MaxCount)
			u.CompletionTokens = int(n)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return u, err
	}
	return u, missing(path, has, "prompt_tokens", "completion_tokens")
}

// decodeIndexes reads 1 to limit turn indices, ascending, each once, so
// that two lists of the same turns compare equal.
func decodeIndexes(r *reader, path string, limit int) ([]int, error) {
	var out []int
	err := r.array(path, func(i int, p string) error {
		if i == limit {
			return tooMany(path, limit, "turn indices")
		}
		n, err := r.integer(p, 0, MaxCount)
		if err != nil {
			return err
		}
		if i > 0 && int(n) <= out[i-1] {
			return fieldErr(p, fmt.Sprintf("is %d after %d; turn indices must be ascending, each once", n, out[i-1]))
		}
		out = append(out, int(n))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fieldErr(path, "must hold at least one turn index")
	}
	return out, nil
}

func decodeCandidate(r *reader, path string) (Candidate, error) {
	var c Candidate
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "kind":
			c.Kind, err = r.str(p)
		case "category":
			c.Category, err = r.str(p)
		case "subject":
			c.Subject, err = r.str(p)
		case "predicate":
			c.Predicate, err = r.str(p)
		case "content":
			c.Content, err = r.str(p)
		case "project":
			c.Project, err = r.str(p)
		case "topic":
			c.Topic, err = r.str(p)
		case "importance":
			c.Importance, err = r.fraction(p)
		case "confidence":
			c.Confidence, err = r.fraction(p)
		case "updates":
			c.Updates, err = r.boolean(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return c, err
	}
	m := memoryFields{c.Kind, c.Category, c.Subject, c.Predicate, c.Content, c.Project, c.Topic}
	if err := m.check(path); err != nil {
		return c, err
	}
	return c, missing(path, has, "importance", "confidence")
}

// memoryFields are the fields every memory-describing event shares, and
// check applies their rules in the order a producer reads them.
type memoryFields struct {
	kind, category, subject, predicate, content, project, topic string
}

func (m memoryFields) check(path string) error {
	return firstErr(
		oneOf(join(path, "kind"), m.kind, kinds...),
		oneOf(join(path, "category"), m.category, categories...),
		checkName(join(path, "subject"), m.subject, MaxMemorySubjectBytes, true),
		checkName(join(path, "predicate"), m.predicate, MaxPredicateBytes, true),
		checkProse(join(path, "content"), m.content, MaxMemoryContentBytes, true),
		checkID(join(path, "project"), m.project, false),
		checkID(join(path, "topic"), m.topic, false),
	)
}

// firstErr returns the first error of checks that are cheap enough to run
// all of.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func decodeExtractionFailed(r *reader, path string) (ExtractionFailed, error) {
	var x ExtractionFailed
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "request_id":
			x.RequestID, err = r.str(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		case "reason":
			x.Reason, err = r.str(p)
		case "attempts":
			var n int64
			n, err = r.integer(p, 0, MaxCount)
			x.Attempts = int(n)
		case "turns":
			x.Turns, err = decodeIndexes(r, p, MaxExtractionTurns)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "request_id"), x.RequestID, true); err != nil {
		return x, err
	}
	if err := checkID(join(path, "session_id"), x.SessionID, true); err != nil {
		return x, err
	}
	if err := checkProse(join(path, "reason"), x.Reason, MaxReasonBytes, true); err != nil {
		return x, err
	}
	return x, missing(path, has, "attempts", "turns")
}

func decodeMemoryAdded(r *reader, path string) (MemoryAdded, error) {
	var x MemoryAdded
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "memory_id":
			x.MemoryID, err = r.str(p)
		case "tier":
			var n int64
			n, err = r.integer(p, TierCore, TierKnowledge)
			x.Tier = int(n)
		case "kind":
			x.Kind, err = r.str(p)
		case "category":
			x.Category, err = r.str(p)
		case "subject":
			x.Subject, err = r.str(p)
		case "predicate":
			x.Predicate, err = r.str(p)
		case "content":
			x.Content, err = r.str(p)
		case "project":
			x.Project, err = r.str(p)
		case "topic":
			x.Topic, err = r.str(p)
		case "importance":
			x.Importance, err = r.fraction(p)
		case "confidence":
			x.Confidence, err = r.fraction(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "memory_id"), x.MemoryID, false); err != nil {
		return x, err
	}
	m := memoryFields{x.Kind, x.Category, x.Subject, x.Predicate, x.Content, x.Project, x.Topic}
	if err := m.check(path); err != nil {
		return x, err
	}
	if err := missing(path, has, "importance"); err != nil {
		return x, err
	}
	if !has["tier"] {
		x.Tier = TierKnowledge
	}
	if !has["confidence"] {
		x.Confidence = 1
	}
	return x, checkID(join(path, "session_id"), x.SessionID, false)
}

func decodeMemoryUpdated(r *reader, path string) (MemoryUpdated, error) {
	var x MemoryUpdated
	str := func(p string) (*string, error) {
		s, err := r.str(p)
		return &s, err
	}
	frac := func(p string) (*float64, error) {
		f, err := r.fraction(p)
		return &f, err
	}
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "memory_id":
			x.MemoryID, err = r.str(p)
		case "content":
			x.Content, err = str(p)
		case "kind":
			x.Kind, err = str(p)
		case "category":
			x.Category, err = str(p)
		case "subject":
			x.Subject, err = str(p)
		case "predicate":
			x.Predicate, err = str(p)
		case "project":
			x.Project, err = str(p)
		case "topic":
			x.Topic, err = str(p)
		case "importance":
			x.Importance, err = frac(p)
		case "confidence":
			x.Confidence, err = frac(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "memory_id"), x.MemoryID, true); err != nil {
		return x, err
	}
	checks := []struct {
		key   string
		value *string
		check func(field, s string) error
	}{
		{"content", x.Content, func(f, s string) error { return checkProse(f, s, MaxMemoryContentBytes, true) }},
		{"kind", x.Kind, func(f, s string) error { return oneOf(f, s, kinds...) }},
		{"category", x.Category, func(f, s string) error { return oneOf(f, s, categories...) }},
		{"subject", x.Subject, func(f, s string) error { return checkName(f, s, MaxMemorySubjectBytes, true) }},
		{"predicate", x.Predicate, func(f, s string) error { return checkName(f, s, MaxPredicateBytes, true) }},
		{"project", x.Project, func(f, s string) error { return checkID(f, s, false) }},
		{"topic", x.Topic, func(f, s string) error { return checkID(f, s, false) }},
	}
	set := x.Importance != nil || x.Confidence != nil
	for _, c := range checks {
		if c.value == nil {
			continue
		}
		set = true
		if err := c.check(join(path, c.key), *c.value); err != nil {
			return x, err
		}
	}
	if !set {
		return x, fieldErr(r.field(path), "must change at least one of content, kind, category, subject, predicate, project, topic, importance, confidence")
	}
	return x, nil
}

func decodeMemoryDeleted(r *reader, path string) (MemoryDeleted, error) {
	var x MemoryDeleted
	err := r.object(path, func(key, p string) (err error) {
		switch key {
		case "memory_id":
			x.MemoryID, err = r.str(p)
		case "reason":
			x.Reason, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "memory_id"), x.MemoryID, true); err != nil {
		return x, err
	}
	return x, checkProse(join(path, "reason"), x.Reason, MaxReasonBytes, false)
}

// decodePendingDecision reads the data of the three pending.* types; only
// a snooze has, and needs, an end.
func decodePendingDecision(r *reader, path, eventType string) (PendingDecision, error) {
	var x PendingDecision
	snooze := eventType == TypePendingSnoozed
	err := r.object(path, func(key, p string) (err error) {
		switch {
		case key == "memory_id":
			x.MemoryID, err = r.str(p)
		case key == "until" && snooze:
			var t time.Time
			t, err = r.timestamp(p)
			x.Until = &t
		case key == "until":
			err = fieldErr(p, "is only for "+TypePendingSnoozed)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "memory_id"), x.MemoryID, true); err != nil {
		return x, err
	}
	if snooze && x.Until == nil {
		return x, fieldErr(join(path, "until"), "required: a snooze needs an end")
	}
	return x, nil
}

func decodeMemoryImportant(r *reader, path string) (MemoryImportant, error) {
	var x MemoryImportant
	has := map[string]bool{}
	err := r.object(path, func(key, p string) (err error) {
		has[key] = true
		switch key {
		case "memory_id":
			x.MemoryID, err = r.str(p)
		case "kind":
			x.Kind, err = r.str(p)
		case "category":
			x.Category, err = r.str(p)
		case "subject":
			x.Subject, err = r.str(p)
		case "predicate":
			x.Predicate, err = r.str(p)
		case "content":
			x.Content, err = r.str(p)
		case "importance":
			x.Importance, err = r.fraction(p)
		case "session_id":
			x.SessionID, err = r.str(p)
		case "cause_event_id":
			x.CauseEventID, err = r.str(p)
		default:
			err = unknownField(p)
		}
		return err
	})
	if err != nil {
		return x, err
	}
	if err := checkID(join(path, "memory_id"), x.MemoryID, true); err != nil {
		return x, err
	}
	m := memoryFields{kind: x.Kind, category: x.Category, subject: x.Subject, predicate: x.Predicate, content: x.Content}
	if err := m.check(path); err != nil {
		return x, err
	}
	if err := missing(path, has, "importance"); err != nil {
		return x, err
	}
	if err := checkID(join(path, "session_id"), x.SessionID, false); err != nil {
		return x, err
	}
	return x, checkID(join(path, "cause_event_id"), x.CauseEventID, true)
}

// missing reports the first of keys that the object at path lacked.
func missing(path string, has map[string]bool, keys ...string) error {
	for _, k := range keys {
		if !has[k] {
			return fieldErr(join(path, k), "required")
		}
	}
	return nil
}

func tooMany(field string, limit int, what string) error {
	return fieldErr(field, fmt.Sprintf("holds more than %d %s", limit, what))
}

// oneOf checks a required enumerated string.
func oneOf(field, s string, allowed ...string) error {
	if s == "" {
		return fieldErr(field, "required")
	}
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	return fieldErr(field, fmt.Sprintf("must be %s, not %s", list, quote(s)))
}

// checkProse checks free text: it may hold any character (valid UTF-8 is
// checked for the whole document) but is bounded in bytes.
func checkProse(field, s string, limit int, required bool) error {
	switch {
	case s == "" && required:
		return fieldErr(field, "required")
	case len(s) > limit:
		return fieldErr(field, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), limit))
	}
	return nil
}
