package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

const (
	// maxFileBytes bounds a rule file. Rule files are hand-written and a
	// few kilobytes; yaml.v3 reads about a megabyte a second into nodes,
	// so the bound keeps a stray large file from stalling a reload.
	maxFileBytes = 256 << 10
	// maxCondDepth bounds the nesting of all/any/not.
	maxCondDepth = 16
	// syntaxBudget bounds the bytes re-parsed to locate a syntax error;
	// past it, the line yaml.v3 reported stands, with no column.
	syntaxBudget = 2 << 20
)

var (
	ruleKeys = []string{"name", "description", "on", "schedule", "tz", "when", "do", "mode", "enabled"}
	condKeys = []string{"all", "any", "not", "field", "op", "value"}
	// hints answer keys that other rule formats use, seed 002's among them.
	hints = map[string]string{
		"event_type":  "on",
		"event":       "on",
		"cron":        "schedule",
		"conditions":  "when",
		"condition":   "when",
		"actions":     "do",
		"action_mode": "mode",
		"timezone":    "tz",
	}
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
	typePattern = regexp.MustCompile(`^[A-Za-z0-9*][A-Za-z0-9_.*-]{0,199}$`)
)

// Parse parses one rule file. file names it in errors. knownTypes lists the
// event types a rule may name; nil accepts any well-formed type. Every
// problem found is returned, as Errors; rules are returned only when there
// is none.
func Parse(file string, data []byte, knownTypes []string) ([]Rule, error) {
	p := &parser{file: file, known: knownTypes}
	rules := p.parse(data)
	if len(p.errs) > 0 {
		sortErrors(p.errs)
		return nil, p.errs
	}
	return rules, nil
}

type parser struct {
	file  string
	known []string
	errs  Errors
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, Error{File: p.file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(data []byte) []Rule {
	if len(data) > maxFileBytes {
		p.errs = append(p.errs, Error{File: p.file, Msg: fmt.Sprintf("larger than %d bytes, the most a rule file may hold", maxFileBytes)})
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			p.errs = append(p.errs, syntaxError(p.file, data, err))
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p.errorf(&extra, "a second YAML document; a rule file holds one")
		return nil
	case !errors.Is(err, io.EOF):
		p.errs = append(p.errs, syntaxError(p.file, data, err))
		return nil
	}
	if p.rejectAliases(&doc); len(p.errs) > 0 {
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	switch {
	case isNull(root):
		return nil
	case root.Kind == yaml.SequenceNode:
		p.errorf(root, "the file is a list; put the rules under a top-level rules: key")
		return nil
	case root.Kind != yaml.MappingNode:
		p.errorf(root, "want a mapping with a rules: key")
		return nil
	}
	var list *yaml.Node
	p.mapping(root, "", []string{"rules"}, func(key string, v *yaml.Node) { list = v })
	if list == nil || isNull(list) {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		p.errorf(list, "rules: want a list of rules")
		return nil
	}
	var rules []Rule
	firstLine := map[string]int{}
	for i, n := range list.Content {
		r, ok := p.rule(n, i)
		if !ok {
			continue
		}
		if line, dup := firstLine[r.Name]; dup {
			p.errorf(n, "rule %s: name used twice in this file (first at line %d)", r.Name, line)
			continue
		}
		rules = append(rules, r)
		firstLine[r.Name] = r.Line
	}
	return rules
}

// rejectAliases refuses anchors' aliases and merge keys: they make a rule
// mean something other than what its lines say, and would let a small file
// expand to a large condition tree.
func (p *parser) rejectAliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		p.errorf(n, "aliases (*%s) are not supported in rule files; write the value out", n.Value)
		return
	}
	for _, c := range n.Content {
		p.rejectAliases(c)
	}
}

// mapping walks a mapping's keys in order, reporting unknown and repeated
// keys, and hands each known key's value to f.
func (p *parser) mapping(n *yaml.Node, where string, keys []string, f func(key string, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%swant a plain key", where)
			continue
		}
		switch {
		case seen[k.Value]:
			p.errorf(k, "%s%s: key repeated", where, k.Value)
		case !slices.Contains(keys, k.Value):
			p.errorf(k, "%sunknown key %q%s", where, k.Value, hint(k.Value, keys))
		default:
			seen[k.Value] = true
			f(k.Value, v)
		}
	}
}

func hint(s string, candidates []string) string {
	if h, ok := hints[strings.ToLower(s)]; ok && slices.Contains(candidates, h) {
		return fmt.Sprintf(" (did you mean %s?)", h)
	}
	if h := suggest(s, candidates); h != "" {
		return h
	}
	return fmt.Sprintf(" (want one of %s)", strings.Join(candidates, ", "))
}

func (p *parser) rule(n *yaml.Node, i int) (Rule, bool) {
	before := len(p.errs)
	r := Rule{File: p.file, Line: n.Line, Col: n.Column, Mode: ModeAuto, Enabled: true}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "rules[%d]: want a mapping with name, on or schedule, and do", i)
		return r, false
	}
	where := fmt.Sprintf("rules[%d]: ", i)
	// The name comes first so every later message can say which rule.
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "name" {
			if name, ok := p.text(n.Content[j+1], where+"name"); ok {
				r.Name = name
				if !namePattern.MatchString(name) {
					p.errorf(n.Content[j+1], "%sname %s: want letters, digits, _ . - (at most 100)", where, formatValue(name))
					continue
				}
				where = "rule " + name + ": "
			}
		}
	}
	if r.Name == "" && len(p.errs) == before {
		p.errorf(n, "%sname: missing", where)
	}
	var on, sched, tz, when, do *yaml.Node
	p.mapping(n, where, ruleKeys, func(key string, v *yaml.Node) {
		switch key {
		case "description":
			r.Description, _ = p.text(v, where+"description")
		case "on":
			on = v
		case "schedule":
			sched = v
		case "tz":
			tz = v
		case "when":
			when = v
		case "do":
			do = v
		case "mode":
			if mode, ok := p.text(v, where+"mode"); ok {
				if mode != ModeAuto && mode != ModeConfirm {
					p.errorf(v, "%smode %q: want auto or confirm", where, mode)
				}
				r.Mode = mode
			}
		case "enabled":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&r.Enabled) != nil {
				p.errorf(v, "%senabled: want true or false", where)
			}
		}
	})
	switch {
	case on != nil && sched != nil:
		p.errorf(sched, "%son and schedule: a rule has one trigger, an event or a schedule", where)
	case on != nil:
		if t, ok := p.text(on, where+"on"); ok && p.eventType(on, where+"on", t, true) {
			r.On = t
		}
		if tz != nil {
			p.errorf(tz, "%stz: only a scheduled rule has a time zone", where)
		}
	case sched != nil:
		loc := time.Local
		if tz != nil {
			if name, ok := p.text(tz, where+"tz"); ok {
				l, err := time.LoadLocation(name)
				if err != nil {
					p.errorf(tz, "%stz: unknown time zone %q", where, name)
				} else {
					loc = l
				}
			}
		}
		if spec, ok := p.text(sched, where+"schedule"); ok {
			s, err := parseSchedule(spec, loc)
			if err != nil {
				col := sched.Column
				var se *scheduleError
				if errors.As(err, &se) && !strings.Contains(spec, "\n") {
					col += utf8.RuneCountInString(spec[:se.offset])
					if sched.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
						col++
					}
				}
				p.errs = append(p.errs, Error{File: p.file, Line: sched.Line, Col: col, Msg: fmt.Sprintf("%sschedule %q: %v", where, spec, err)})
			}
			r.Schedule = s
		}
		if when != nil {
			p.errorf(when, "%swhen: a scheduled rule has no event to test; conditions need on:", where)
			when = nil
		}
	default:
		p.errorf(n, "%swant on: (an event type) or schedule: (a cron expression)", where)
	}
	if when != nil {
		r.When = p.cond(when, where+"when", 0)
	}
	if do == nil {
		p.errorf(n, "%sdo: missing; a rule needs at least one action", where)
	} else {
		r.Do = p.actions(do, where, &r)
	}
	return r, len(p.errs) == before
}

// text returns a scalar as a string; numbers are taken as written.
func (p *parser) text(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) || n.ShortTag() == "!!bool" {
		p.errorf(n, "%s: want a string", what)
		return "", false
	}
	return n.Value, true
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// eventType checks a type or, when pattern is set, a "*" pattern against
// the known types.
func (p *parser) eventType(n *yaml.Node, what, t string, pattern bool) bool {
	if !typePattern.MatchString(t) || (!pattern && strings.Contains(t, "*")) {
		p.errorf(n, "%s: %q is not an event type", what, t)
		return false
	}
	if p.known == nil {
		return true
	}
	if strings.Contains(t, "*") {
		if !slices.ContainsFunc(p.known, func(k string) bool { return matchType(t, k) }) {
			p.errorf(n, "%s: %q matches no known event type (%s)", what, t, strings.Join(p.known, ", "))
			return false
		}
		return true
	}
	if !slices.Contains(p.known, t) {
		s := suggest(t, p.known)
		if s == "" {
			s = " (known: " + strings.Join(p.known, ", ") + ")"
		}
		p.errorf(n, "%s: unknown event type %q%s", what, t, s)
		return false
	}
	return true
}

func (p *parser) cond(n *yaml.Node, where string, depth int) *Cond {
	if depth >= maxCondDepth {
		p.errorf(n, "%s: conditions nested deeper than %d", where, maxCondDepth)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: want a mapping: all:, any:, not:, or field:, op:, value:", where)
		return nil
	}
	c := &Cond{Line: n.Line, Col: n.Column}
	var group []string
	var field, op, value *yaml.Node
	p.mapping(n, where+": ", condKeys, func(key string, v *yaml.Node) {
		switch key {
		case "all", "any":
			group = append(group, key)
			list := p.condList(v, where+"."+key, depth)
			if key == "all" {
				c.All = list
			} else {
				c.Any = list
			}
		case "not":
			group = append(group, key)
			c.Not = p.cond(v, where+".not", depth+1)
		case "field":
			field = v
		case "op":
			op = v
		case "value":
			value = v
		}
	})
	switch {
	case len(group) > 1:
		p.errorf(n, "%s: %s together; use one per mapping and nest them", where, strings.Join(group, " and "))
		return c
	case len(group) == 1 && (field != nil || op != nil || value != nil):
		p.errorf(n, "%s: %s with field/op/value; put the comparison inside %s", where, group[0], group[0])
		return c
	case len(group) == 1:
		return c
	}
	if field == nil {
		p.errorf(n, "%s: field: missing", where)
	} else if f, ok := p.text(field, where+".field"); ok && p.fieldPath(field, where+".field", f) {
		c.Field = f
	}
	if op == nil {
		p.errorf(n, "%s: op: missing", where)
		return c
	}
	o, ok := p.text(op, where+".op")
	if !ok {
		return c
	}
	if alias, ok := opAliases[o]; ok {
		o = alias
	}
	if !slices.Contains(ops, o) {
		p.errorf(op, "%s.op: unknown operator %q%s", where, o, hint(o, ops))
		return c
	}
	c.Op = o
	if value == nil {
		if o == OpExists {
			c.Value = true
			return c
		}
		p.errorf(n, "%s: value: missing", where)
		return c
	}
	p.condValue(c, value, where+".value")
	return c
}

func (p *parser) condList(n *yaml.Node, where string, depth int) []Cond {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "%s: want a non-empty list of conditions", where)
		return []Cond{}
	}
	list := make([]Cond, 0, len(n.Content))
	for i, item := range n.Content {
		if c := p.cond(item, fmt.Sprintf("%s[%d]", where, i), depth+1); c != nil {
			list = append(list, *c)
		}
	}
	return list
}

// fieldPath checks that a field names an attribute or something under data.
func (p *parser) fieldPath(n *yaml.Node, where, f string) bool {
	head, rest, nested := strings.Cut(f, ".")
	switch {
	case slices.Contains(strings.Split(f, "."), ""):
		p.errorf(n, "%s: %q has an empty segment", where, f)
	case head == "data":
		return true
	case !slices.Contains(attributes, head):
		if head == "payload" {
			p.errorf(n, "%s: unknown field %q (event data is under data: did you mean data.%s?)", where, f, rest)
		} else {
			p.errorf(n, "%s: unknown field %q: want an attribute (%s) or data.…%s", where, f, strings.Join(attributes, ", "), suggest(head, append([]string{"data"}, attributes...)))
		}
	case nested:
		p.errorf(n, "%s: %q: the %s attribute is a string with no fields", where, f, head)
	default:
		return true
	}
	return false
}

// condValue checks a comparison's value against its operator.
func (p *parser) condValue(c *Cond, n *yaml.Node, where string) {
	switch c.Op {
	case OpIn, OpNotIn:
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			p.errorf(n, "%s: %s needs a non-empty list", where, c.Op)
			return
		}
		list := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			if v, ok := p.scalar(item, where); ok {
				list = append(list, v)
			}
		}
		c.Value = list
		return
	}
	v, ok := p.scalar(n, where)
	if !ok {
		return
	}
	switch c.Op {
	case OpExists:
		b, isBool := v.(bool)
		if !isBool {
			p.errorf(n, "%s: exists takes true or false", where)
			return
		}
		c.Value = b
	case OpGt, OpGte, OpLt, OpLte:
		_, isNum := v.(float64)
		_, isStr := v.(string)
		if !isNum && !isStr {
			p.errorf(n, "%s: %s compares numbers or strings, not %s", where, c.Op, formatValue(v))
			return
		}
	case OpMatches:
		s, isStr := v.(string)
		if !isStr {
			p.errorf(n, "%s: matches takes a regular expression (a string)", where)
			return
		}
		re, err := regexp.Compile(s)
		if err != nil {
			p.errorf(n, "%s: bad regular expression: %v", where, err)
			return
		}
		c.re = re
	case OpContains:
		if v == nil {
			p.errorf(n, "%s: contains needs a value", where)
			return
		}
	}
	c.Value = v
}

// scalar decodes a scalar into nil, bool, float64 or string.
func (p *parser) scalar(n *yaml.Node, where string) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s: want a single value (string, number, true, false or null)", where)
		return nil, false
	}
	switch tag := n.ShortTag(); tag {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			p.errorf(n, "%s: %v", where, err)
			return nil, false
		}
		return b, true
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			p.errorf(n, "%s: %q is not a finite number", where, n.Value)
			return nil, false
		}
		return f, true
	case "!!str", "!!timestamp":
		// A timestamp stays as written: event times are RFC 3339 strings,
		// and strings of one form compare in time order.
		return n.Value, true
	default:
		p.errorf(n, "%s: unsupported tag %s", where, tag)
		return nil, false
	}
}

// object decodes a value into JSON-like Go values.
func (p *parser) object(n *yaml.Node, where string) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				p.errorf(k, "%s: want a plain key", where)
				ok = false
				continue
			}
			if _, dup := m[k.Value]; dup {
				p.errorf(k, "%s.%s: key repeated", where, k.Value)
				ok = false
				continue
			}
			v, vok := p.object(n.Content[i+1], where+"."+k.Value)
			ok = ok && vok
			m[k.Value] = v
		}
		return m, ok
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		ok := true
		for i, item := range n.Content {
			v, vok := p.object(item, fmt.Sprintf("%s[%d]", where, i))
			ok = ok && vok
			list = append(list, v)
		}
		return list, ok
	}
	return p.scalar(n, where)
}

func (p *parser) actions(n *yaml.Node, where string, r *Rule) []Action {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "%sdo: want a non-empty list of actions", where)
		return nil
	}
	names := sortedKeys(actionSpecs)
	var out []Action
	for i, item := range n.Content {
		at := fmt.Sprintf("%sdo[%d]", where, i)
		var typ string
		var typNode, params *yaml.Node
		switch {
		case item.Kind == yaml.ScalarNode && !isNull(item):
			typ, typNode = item.Value, item
		case item.Kind == yaml.MappingNode && len(item.Content) == 2:
			typNode, params = item.Content[0], item.Content[1]
			typ = typNode.Value
		default:
			p.errorf(item, "%s: want an action name, or one name mapped to its parameters (dedupe: {similarity: 0.9})", at)
			continue
		}
		spec, ok := actionSpecs[typ]
		if !ok {
			p.errorf(typNode, "%s: unknown action %q%s", at, typ, hint(typ, names))
			continue
		}
		a := Action{Type: typ, Params: map[string]any{}, Line: item.Line, Col: item.Column}
		given := map[string]bool{}
		if params != nil && !isNull(params) {
			if params.Kind != yaml.MappingNode {
				p.errorf(params, "%s: %s: want a mapping of parameters", at, typ)
				continue
			}
			if len(spec) == 0 && len(params.Content) > 0 {
				p.errorf(params, "%s: %s takes no parameters", at, typ)
				continue
			}
			p.mapping(params, at+": "+typ+": ", sortedKeys(spec), func(key string, v *yaml.Node) {
				given[key] = true
				if val, ok := p.param(v, at+"."+key, spec[key]); ok {
					a.Params[key] = val
				}
			})
		}
		for _, key := range sortedKeys(spec) {
			if given[key] {
				continue
			}
			ps := spec[key]
			switch d, ok := triggerDefault(typ, key, r); {
			case ok:
				a.Params[key] = d
			case ps.def != nil:
				a.Params[key] = ps.def
			case ps.required || ps.kind == pEnum:
				p.errorf(item, "%s: %s: %s: missing", at, typ, key)
			}
		}
		if typ == ActExtractNow {
			p.extractParams(item, at, r, a)
		}
		out = append(out, a)
	}
	return out
}

// extractParams checks that extract_now's batcher thresholds come with
// the trigger and reason they belong to: quiet_gap and token_cap are
// watched per recorded turn, one per action.
func (p *parser) extractParams(item *yaml.Node, at string, r *Rule, a Action) {
	_, gap := a.Params["quiet_gap"]
	_, tokCap := a.Params["token_cap"]
	reason := a.Text("reason")
	switch {
	case gap && tokCap:
		p.errorf(item, "%s: extract_now: give quiet_gap or token_cap, not both (one rule each)", at)
	case (gap || tokCap) && (r.Schedule != nil || r.On != "turn.recorded"):
		p.errorf(item, "%s: extract_now: quiet_gap and token_cap are watched per recorded turn: the rule needs on: turn.recorded", at)
	case gap && reason != "quiet":
		p.errorf(item, "%s: extract_now: quiet_gap needs reason: quiet, not %q", at, reason)
	case tokCap && reason != "token_cap":
		p.errorf(item, "%s: extract_now: token_cap needs reason: token_cap, not %q", at, reason)
	case !gap && !tokCap && r.Schedule == nil && r.On == "turn.recorded":
		p.errorf(item, "%s: extract_now: on turn.recorded it needs quiet_gap (reason quiet, e.g. 3m) or token_cap (reason token_cap, e.g. 6000)", at)
	}
}

func (p *parser) param(n *yaml.Node, where string, ps param) (any, bool) {
	switch ps.kind {
	case pObject:
		if n.Kind != yaml.MappingNode {
			p.errorf(n, "%s: want a mapping", where)
			return nil, false
		}
		return p.object(n, where)
	case pInt:
		var v int
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
			p.errorf(n, "%s: want a whole number", where)
			return nil, false
		}
		if float64(v) < ps.lo {
			p.errorf(n, "%s: %d is below %g", where, v, ps.lo)
			return nil, false
		}
		return v, true
	case pFloat:
		v, ok := p.scalar(n, where)
		if !ok {
			return nil, false
		}
		f, isNum := v.(float64)
		switch {
		case !isNum:
			p.errorf(n, "%s: want a number", where)
		case ps.loOpen && (f <= ps.lo || f > ps.hi):
			p.errorf(n, "%s: %g is outside (%g, %g]", where, f, ps.lo, ps.hi)
		case !ps.loOpen && (f < ps.lo || f > ps.hi):
			p.errorf(n, "%s: %g is outside [%g, %g]", where, f, ps.lo, ps.hi)
		default:
			return f, true
		}
		return nil, false
	}
	s, ok := p.text(n, where)
	if !ok {
		return nil, false
	}
	switch ps.kind {
	case pDuration:
		d, err := parseDuration(s)
		if err != nil {
			p.errorf(n, "%s: %v", where, err)
			return nil, false
		}
		return d, true
	case pEnum:
		if !slices.Contains(ps.enum, s) {
			p.errorf(n, "%s: %q%s", where, s, hint(s, ps.enum))
			return nil, false
		}
	case pEventType:
		if !p.eventType(n, where, s, false) {
			return nil, false
		}
	}
	return s, true
}

// parseDuration reads a Go duration ("36h", "90m") or a whole number of
// days ("3d"), which Go durations lack.
func parseDuration(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 36500 {
			return 0, fmt.Errorf("%q: want a duration such as 24h, 90m or 3d", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: want a duration such as 24h, 90m or 3d", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration", s)
	}
	return d, nil
}

// syntaxError places a YAML syntax error. yaml.v3 reports the line where
// the enclosing construct began, often lines above the mistake, and no
// column. The mistake is on the first line whose inclusion makes the text
// fail as the whole file fails, with the same message: a prefix that ends
// inside a multi-line flow collection or quoted string fails too, but
// with a different message, and is passed over. The search starts at the
// reported line, which is never below the mistake. The column is that
// line's first non-blank character, or the first tab in its indentation.
func syntaxError(file string, data []byte, err error) Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	reported := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				reported, msg = n, after
			}
		}
	}
	e := Error{File: file, Line: reported, Msg: "YAML syntax: " + msg}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	whole := firstError(data)
	if whole == nil {
		return e
	}
	spent := 0
	end := 0 // bytes in the first k lines
	for k, l := range lines {
		end += len(l)
		if k+1 < reported-1 {
			continue
		}
		if spent += end; spent > syntaxBudget {
			break
		}
		if err := firstError(data[:end]); err == nil || err.Error() != whole.Error() {
			continue
		}
		e.Line = k + 1
		indent := string(l[:len(l)-len(bytes.TrimLeft(l, " \t"))])
		if tab := strings.IndexByte(indent, '\t'); tab >= 0 {
			indent = indent[:tab] // YAML forbids tabs in indentation: point at it
		}
		e.Col = utf8.RuneCountInString(indent) + 1
		if _, v, ok := strings.Cut(string(l), "schedule:"); ok {
			if v = strings.TrimSpace(v); strings.HasPrefix(v, "*") || strings.HasPrefix(v, "@") {
				// YAML reads a leading * as an alias and @ as reserved.
				e.Msg += fmt.Sprintf(" (quote the schedule: schedule: %q)", v)
			}
		}
		break
	}
	return e
}

// firstError decodes every document of data and returns the first error.
func firstError(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sortErrors orders one file's errors by position.
func sortErrors(es Errors) {
	slices.SortStableFunc(es, func(a, b Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
}
