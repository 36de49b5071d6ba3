package rules

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Modes of a rule.
const (
	// ModeAuto runs the actions when the rule fires.
	ModeAuto = "auto"
	// ModeConfirm asks an operator first: the worker records the firing as
	// pending and runs the actions once it is confirmed.
	ModeConfirm = "confirm"
)

// Rule is one validated rule. A Rule and everything it holds are read-only
// once loaded: Sets are shared between goroutines.
type Rule struct {
	Name        string
	Description string
	File        string // as the loader named it: rules/session.yaml
	Line, Col   int    // where the rule's mapping starts
	// On is the event type that triggers the rule; "*" in it matches any
	// run of characters ("memory.*"). Empty for a scheduled rule.
	On string
	// Schedule is set for a rule that runs on a timetable instead of on
	// an event.
	Schedule *Schedule
	// When must hold for the rule to fire; nil always holds.
	When    *Cond
	Do      []Action
	Mode    string // ModeAuto or ModeConfirm
	Enabled bool
}

// Pos is where the rule is defined, "file:line".
func (r *Rule) Pos() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// Triggers reports whether an event of this type triggers r, conditions
// aside. A disabled rule triggers nothing.
func (r *Rule) Triggers(eventType string) bool {
	return r.Enabled && r.On != "" && matchType(r.On, eventType)
}

func matchType(pattern, eventType string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == eventType
	}
	// Event types hold no "/", so path.Match's "*" spans dots; the parser
	// admits no other pattern syntax, so the pattern is well formed.
	ok, _ := path.Match(pattern, eventType)
	return ok
}

// Action is one step of a rule. Params holds every parameter the action
// type takes, defaults filled in, so what `engram rules test` shows is
// exactly what runs: float parameters are float64, counts int, durations
// time.Duration, names string, publish's data a JSON-like
// map[string]any.
type Action struct {
	Type      string
	Params    map[string]any
	Line, Col int
}

// Float returns a float parameter, or 0.
func (a Action) Float(key string) float64 { v, _ := a.Params[key].(float64); return v }

// Int returns a count parameter, or 0.
func (a Action) Int(key string) int { v, _ := a.Params[key].(int); return v }

// Text returns a string parameter, or "".
func (a Action) Text(key string) string { v, _ := a.Params[key].(string); return v }

// Duration returns a duration parameter, or 0.
func (a Action) Duration(key string) time.Duration {
	v, _ := a.Params[key].(time.Duration)
	return v
}

// String is the action as `engram rules test` prints it:
// "dedupe min_entries=10 similarity=0.9".
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(a.Type)
	keys := sortedKeys(a.Params)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, formatValue(a.Params[k]))
	}
	return b.String()
}

// Operators of a condition. The seed's symbols (==, !=, >, >=, <, <=) are
// accepted in rule files as the same operators.
const (
	OpEq       = "eq"
	OpNe       = "ne"
	OpGt       = "gt"
	OpGte      = "gte"
	OpLt       = "lt"
	OpLte      = "lte"
	OpIn       = "in"
	OpNotIn    = "not_in"
	OpContains = "contains"
	OpMatches  = "matches" // RE2, unanchored
	OpExists   = "exists"
)

var ops = []string{OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpNotIn, OpContains, OpMatches, OpExists}

var opAliases = map[string]string{"==": OpEq, "!=": OpNe, ">": OpGt, ">=": OpGte, "<": OpLt, "<=": OpLte}

// Cond is a condition on an event: a comparison (Field, Op, Value) or a
// group, exactly one of All, Any and Not.
//
// A comparison holds only when its field is present and of the kind the
// operator compares: a missing field or a string compared with a number
// makes every operator false (exists: false aside), ne and not_in
// included. Write not: {field: f, op: eq, value: v} for "anything but v,
// or nothing".
type Cond struct {
	All []Cond
	Any []Cond
	Not *Cond

	Field string // "type", "user", "data.message_count", …
	Op    string // one of the Op constants
	// Value is nil, bool, float64, string, or for in and not_in a []any of
	// those; for exists, true or false.
	Value any

	Line, Col int
	re        *regexp.Regexp
}

// Eval reports whether c holds for ev, and why: the comparisons that
// decided it, with the values they saw. It never fails: a field that is
// missing or of the wrong kind makes a comparison false, and why says so.
func (c *Cond) Eval(ev Event) (bool, string) {
	switch {
	case c.All != nil:
		whys := make([]string, 0, len(c.All))
		for i := range c.All {
			ok, why := c.All[i].Eval(ev)
			if !ok {
				return false, why
			}
			whys = append(whys, why)
		}
		return true, strings.Join(whys, " and ")
	case c.Any != nil:
		whys := make([]string, 0, len(c.Any))
		for i := range c.Any {
			ok, why := c.Any[i].Eval(ev)
			if ok {
				return true, why
			}
			whys = append(whys, why)
		}
		return false, "none of: " + strings.Join(whys, "; ")
	case c.Not != nil:
		ok, why := c.Not.Eval(ev)
		return !ok, "not (" + why + ")"
	}
	return c.compare(ev)
}

func (c *Cond) compare(ev Event) (bool, string) {
	v, ok := ev.Lookup(c.Field)
	if c.Op == OpExists {
		want := c.Value != false
		switch {
		case ok && want:
			return true, c.Field + " exists"
		case ok:
			return false, c.Field + " exists, want it missing"
		case want:
			return false, c.Field + " is missing"
		default:
			return true, c.Field + " is missing"
		}
	}
	if !ok {
		return false, c.Field + " is missing"
	}
	seen := c.Field + " = " + formatValue(v)
	held := func(b bool) (bool, string) {
		if b {
			return true, fmt.Sprintf("%s, %s %s", seen, c.Op, formatValue(c.Value))
		}
		return false, fmt.Sprintf("%s, not %s %s", seen, c.Op, formatValue(c.Value))
	}
	mismatch := func(want string) (bool, string) {
		return false, fmt.Sprintf("%s is %s, %s needs %s", seen, kindOf(v), c.Op, want)
	}
	switch c.Op {
	case OpEq, OpNe:
		// Comparing with null asks whether the field is null; anything
		// else must compare like with like.
		if c.Value != nil && kindOf(v) != kindOf(c.Value) {
			return mismatch(kindOf(c.Value))
		}
		return held(equal(v, c.Value) == (c.Op == OpEq))
	case OpGt, OpGte, OpLt, OpLte:
		cmp, ok := order(v, c.Value)
		if !ok {
			return mismatch(kindOf(c.Value))
		}
		switch c.Op {
		case OpGt:
			return held(cmp > 0)
		case OpGte:
			return held(cmp >= 0)
		case OpLt:
			return held(cmp < 0)
		default:
			return held(cmp <= 0)
		}
	case OpIn, OpNotIn:
		list, _ := c.Value.([]any)
		kindSeen := false
		for _, x := range list {
			if kindOf(x) == kindOf(v) {
				kindSeen = true
			}
			if equal(v, x) {
				return held(c.Op == OpIn)
			}
		}
		if !kindSeen {
			return mismatch("one of the list's kinds")
		}
		return held(c.Op == OpNotIn)
	case OpContains:
		switch f := v.(type) {
		case string:
			s, ok := c.Value.(string)
			if !ok {
				return mismatch("a list")
			}
			return held(strings.Contains(f, s))
		case []any:
			return held(slices.ContainsFunc(f, func(x any) bool { return equal(x, c.Value) }))
		}
		return mismatch("a string or a list")
	case OpMatches:
		s, ok := v.(string)
		if !ok {
			return mismatch("a string")
		}
		return held(c.re.MatchString(s))
	}
	return false, "unknown operator " + c.Op
}

// kindOf names the JSON kind of v, for explanations.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	}
	return 0, false
}

// equal compares scalars of the same kind; values of different kinds, and
// lists and objects, are never equal.
func equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if x, ok := toFloat(a); ok {
		y, ok := toFloat(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// order compares two numbers or two strings.
func order(a, b any) (int, bool) {
	if x, ok := toFloat(a); ok {
		y, ok := toFloat(b)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		case x == y:
			return 0, true
		}
		return 0, false // NaN orders with nothing
	}
	x, ok := a.(string)
	y, ok2 := b.(string)
	if !ok || !ok2 {
		return 0, false
	}
	return strings.Compare(x, y), true
}
