package rules

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// Set is a validated set of rules, in load order: files by name, rules in
// file order. A Set is read-only and safe to share between goroutines.
type Set struct {
	Rules  []Rule // disabled ones included
	Files  []string
	Loaded time.Time
}

type source struct {
	name string
	data []byte
}

// Load loads the rules at path: one file, or every *.yaml and *.yml file
// directly in a directory (not its subdirectories; names starting with "."
// are editors' files and are skipped). knownTypes is as for Parse. An empty
// directory is an empty Set: removing a rule file removes its behaviour.
// All problems in all files are returned together, as Errors, and no Set.
func Load(path string, knownTypes []string) (*Set, error) {
	srcs, err := readPath(path)
	if err != nil {
		return nil, err
	}
	return build(srcs, knownTypes)
}

// LoadFS loads every *.yaml and *.yml file at the root of fsys, such as the
// defaults embedded in the binary.
func LoadFS(fsys fs.FS, knownTypes []string) (*Set, error) {
	srcs, err := readDir(fsys, func(name string) string { return name })
	if err != nil {
		return nil, err
	}
	return build(srcs, knownTypes)
}

func readPath(path string) ([]source, error) {
	info, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Errors{{File: path, Msg: fmt.Sprintf("read rules: %v", err)}}
	}
	if !info.IsDir() {
		dir, name := filepath.Split(path)
		data, err := readFile(os.DirFS(filepath.Clean(dir)), name)
		if err != nil {
			return nil, Errors{{File: path, Msg: fmt.Sprintf("read rules: %v", err)}}
		}
		return []source{{path, data}}, nil
	}
	return readDir(os.DirFS(path), func(name string) string { return filepath.Join(path, name) })
}

// readDir reads the rule files at the root of fsys; display turns a file's
// name into the name errors give it.
func readDir(fsys fs.FS, display func(string) string) ([]source, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, Errors{{File: display("."), Msg: fmt.Sprintf("read rules: %v", err)}}
	}
	var srcs []source
	var errs Errors
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		data, err := readFile(fsys, name)
		if err != nil {
			errs = append(errs, Error{File: display(name), Msg: fmt.Sprintf("read: %v", err)})
			continue
		}
		srcs = append(srcs, source{display(name), data})
	}
	return srcs, errs.err()
}

// readFile reads one byte past the size limit, so that Parse can say a file
// is too large without holding all of it.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(f) // only read
	return io.ReadAll(io.LimitReader(f, maxFileBytes+1))
}

func build(srcs []source, known []string) (*Set, error) {
	s := &Set{Loaded: time.Now()}
	var errs Errors
	byName := map[string]Rule{}
	for _, src := range srcs {
		s.Files = append(s.Files, src.name)
		rules, err := Parse(src.name, src.data, known)
		if err != nil {
			var perr Errors
			if !errors.As(err, &perr) { // Parse says each problem as an Errors
				perr = Errors{{File: src.name, Msg: err.Error()}}
			}
			errs = append(errs, perr...)
			continue
		}
		var fileErrs Errors
		for _, r := range rules {
			if prev, dup := byName[r.Name]; dup {
				fileErrs = append(fileErrs, Error{File: r.File, Line: r.Line, Col: r.Col,
					Msg: fmt.Sprintf("rule %s: name already used at %s", r.Name, prev.Pos())})
				continue
			}
			byName[r.Name] = r
			s.Rules = append(s.Rules, r)
		}
		errs = append(errs, fileErrs...)
	}
	errs = append(errs, loops(s.Rules)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// loops refuses a publish action whose event can lead back, through the
// enabled rules, to the rule that published it: such a set would flood the
// stream. Conditions are not considered; a loop they would break is still
// refused, since a condition is easy to change and a flood is not.
func loops(rules []Rule) Errors {
	// Edges: an event type triggers rules, which publish event types.
	publishes := func(eventType string) []string {
		var out []string
		for i := range rules {
			if !rules[i].Triggers(eventType) {
				continue
			}
			for _, a := range rules[i].Do {
				if a.Type == ActPublish {
					out = append(out, a.Text("type"))
				}
			}
		}
		return out
	}
	var errs Errors
	for i := range rules {
		r := &rules[i]
		if !r.Enabled || r.On == "" {
			continue
		}
		for _, a := range r.Do {
			if a.Type != ActPublish {
				continue
			}
			// Breadth-first from the published type, remembering the way.
			start := a.Text("type")
			from := map[string]string{start: ""}
			queue := []string{start}
			for len(queue) > 0 {
				t := queue[0]
				queue = queue[1:]
				if matchType(r.On, t) {
					path := []string{t}
					for p := from[t]; p != ""; p = from[p] {
						path = append(path, p)
					}
					slices.Reverse(path)
					errs = append(errs, Error{File: r.File, Line: a.Line, Col: a.Col,
						Msg: fmt.Sprintf("rule %s: publish %s loops back to this rule (%s → rule %s); rules may not trigger themselves", r.Name, start, strings.Join(path, " → "), r.Name)})
					break
				}
				for _, next := range publishes(t) {
					if _, seen := from[next]; !seen {
						from[next] = t
						queue = append(queue, next)
					}
				}
			}
		}
	}
	return errs
}

// Match returns the enabled rules that ev triggers and whose conditions
// hold, in set order.
func (s *Set) Match(ev Event) []Rule {
	var out []Rule
	for i := range s.Rules {
		r := &s.Rules[i]
		if !r.Triggers(ev.Type()) {
			continue
		}
		if r.When != nil {
			if ok, _ := r.When.Eval(ev); !ok {
				continue
			}
		}
		out = append(out, *r)
	}
	return out
}

// Explanation says whether a rule fires for an event, and why or why not.
type Explanation struct {
	Rule  Rule
	Fired bool
	Why   string
}

// Explain tells, for every rule of the set in order, whether ev fires it
// and why; it is what `engram rules test` prints.
func (s *Set) Explain(ev Event) []Explanation {
	out := make([]Explanation, 0, len(s.Rules))
	for _, r := range s.Rules {
		x := Explanation{Rule: r}
		switch {
		case r.Schedule != nil:
			x.Why = "scheduled (" + r.Schedule.String() + "), not triggered by events"
		case !r.Enabled:
			x.Why = "disabled"
		case !matchType(r.On, ev.Type()):
			x.Why = fmt.Sprintf("on %s; the event is %s", r.On, ev.Type())
		case r.When == nil:
			x.Fired, x.Why = true, "on "+r.On+", no conditions"
		default:
			x.Fired, x.Why = r.When.Eval(ev)
		}
		out = append(out, x)
	}
	return out
}

func (x Explanation) String() string {
	var b strings.Builder
	mark := "-"
	if x.Fired {
		mark = "✓"
	}
	fmt.Fprintf(&b, "%s %s (%s): %s\n", mark, x.Rule.Name, x.Rule.Pos(), x.Why)
	if x.Fired {
		for _, a := range x.Rule.Do {
			verb := "do"
			if x.Rule.Mode == ModeConfirm {
				verb = "ask, then do"
			}
			fmt.Fprintf(&b, "    %s %s\n", verb, a)
		}
	}
	return b.String()
}

// Firing is a scheduled rule falling due.
type Firing struct {
	Rule Rule
	At   time.Time
}

// Due returns the enabled scheduled rules with a time in (from, to], each
// once, at its latest such time, ordered by that time then set order. A
// rule that fell due several times in the window (the process was down,
// or a job ran long) fires once: jobs catch up on their own (compress_daily
// takes days), and a burst of identical runs helps nobody.
func (s *Set) Due(from, to time.Time) []Firing {
	var out []Firing
	for _, r := range s.Rules {
		if r.Schedule == nil || !r.Enabled {
			continue
		}
		if at := r.Schedule.last(from, to); !at.IsZero() {
			out = append(out, Firing{Rule: r, At: at})
		}
	}
	slices.SortStableFunc(out, func(a, b Firing) int { return a.At.Compare(b.At) })
	return out
}

// Upcoming returns each enabled scheduled rule's next time after after,
// soonest first.
func (s *Set) Upcoming(after time.Time) []Firing {
	var out []Firing
	for _, r := range s.Rules {
		if r.Schedule == nil || !r.Enabled {
			continue
		}
		if at := r.Schedule.Next(after); !at.IsZero() {
			out = append(out, Firing{Rule: r, At: at})
		}
	}
	slices.SortStableFunc(out, func(a, b Firing) int { return a.At.Compare(b.At) })
	return out
}

// last returns the latest time in (from, to] at which s fires, or zero.
// It searches windows ending at to, doubling, so a long window costs about
// as much as a short one.
func (s *Schedule) last(from, to time.Time) time.Time {
	if !to.After(from) {
		return time.Time{}
	}
	span := to.Sub(from) // saturates for a window of centuries
	for w := time.Hour; ; {
		start := from
		if w < span {
			start = to.Add(-w)
		}
		var last time.Time
		for t := s.Next(start); !t.IsZero() && !t.After(to); t = s.Next(t) {
			last = t
		}
		if !last.IsZero() || start.Equal(from) {
			return last
		}
		if w > span/2 {
			w = span
		} else {
			w *= 2
		}
	}
}
