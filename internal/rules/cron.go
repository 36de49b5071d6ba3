package rules

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed cron expression in a time zone: five fields,
// minute hour day-of-month month day-of-week, each "*", a value, a range
// "a-b", a step "*/n", "a-b/n" or "a/n" (a to the field's end), or a comma
// list of those; months and weekdays may be named (JAN, MON). Descriptors
// @hourly, @daily (@midnight), @weekly, @monthly and @yearly (@annually)
// stand for their usual expressions.
//
// Day-of-month and day-of-week follow classic (Vixie) cron: when both are
// restricted, a day matches if either matches ("0 3 1 * MON" runs on the
// 1st and on every Monday); a field that starts with "*" counts as
// unrestricted, so "0 3 */2 * MON" runs on Mondays that fall on odd days.
//
// Times are wall-clock times in Loc. Each wall-clock time fires at most
// once: a time skipped by a daylight-saving jump forward fires at the first
// instant after the jump (02:30 on the spring-forward day in New York fires
// at 03:00 EDT, so a daily job never misses a day), and a time that occurs
// twice when clocks go back fires at its first occurrence only.
type Schedule struct {
	Spec string
	Loc  *time.Location

	minute, hour, dom, month, dow uint64 // bit i set: value i matches
	domStar, dowStar              bool
}

// maxSearch bounds how far ahead Next looks. The rarest schedule that can
// fire, February 29th, may wait 8 years (2096 to 2104).
const maxSearch = 10

var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the name of value min+i
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	// 7 is Sunday too, as in every cron.
	{name: "day-of-week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// scheduleError is a problem at a byte offset of the spec, so the rule
// parser can point at the column of the bad field.
type scheduleError struct {
	offset int
	msg    string
}

func (e *scheduleError) Error() string { return e.msg }

// ParseSchedule parses a cron expression. A nil loc means time.Local.
func ParseSchedule(spec string, loc *time.Location) (*Schedule, error) {
	s, err := parseSchedule(spec, loc)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return s, nil
}

func parseSchedule(spec string, loc *time.Location) (*Schedule, error) {
	if loc == nil {
		loc = time.Local
	}
	s := &Schedule{Spec: spec, Loc: loc}
	expr := spec
	trimmed := strings.TrimSpace(spec)
	if strings.HasPrefix(trimmed, "@") {
		d, ok := descriptors[strings.ToLower(trimmed)]
		if !ok {
			return nil, &scheduleError{strings.Index(spec, "@"), fmt.Sprintf("unknown descriptor %q%s", trimmed, suggest(trimmed, sortedKeys(descriptors)))}
		}
		expr = d
	}
	fields, offsets := splitFields(expr)
	if expr != spec {
		// Errors in a descriptor's expansion cannot happen; point at the
		// descriptor all the same.
		for i := range offsets {
			offsets[i] = strings.Index(spec, "@")
		}
	}
	switch {
	case len(fields) == 6:
		return nil, &scheduleError{0, "6 fields: schedules have no seconds field; drop the first (seed 001's \"0 0 3 * * *\" is \"0 3 * * *\")"}
	case len(fields) != 5:
		return nil, &scheduleError{0, fmt.Sprintf("%d fields, want 5: minute hour day-of-month month day-of-week", len(fields))}
	}
	sets := [5]*uint64{&s.minute, &s.hour, &s.dom, &s.month, &s.dow}
	for i, f := range fields {
		bits, err := parseCronField(f, cronFields[i])
		if err != nil {
			return nil, &scheduleError{offsets[i], fmt.Sprintf("%s field %q: %v", cronFields[i].name, f, err)}
		}
		*sets[i] = bits
	}
	if s.dow&(1<<7) != 0 {
		s.dow = s.dow&^(1<<7) | 1
	}
	s.domStar = strings.HasPrefix(fields[2], "*")
	s.dowStar = strings.HasPrefix(fields[4], "*")
	start := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if s.nextWall(start, start.AddDate(maxSearch, 0, 0)).IsZero() {
		return nil, &scheduleError{offsets[2], "never fires: no month in the month field has the days in the day-of-month field"}
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// splitFields splits on blanks and remembers where each field starts.
func splitFields(s string) (fields []string, offsets []int) {
	start := -1
	for i := 0; i <= len(s); i++ {
		blank := i == len(s) || s[i] == ' ' || s[i] == '\t'
		switch {
		case blank && start >= 0:
			fields = append(fields, s[start:i])
			offsets = append(offsets, start)
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	return fields, offsets
}

func parseCronField(f string, spec cronField) (uint64, error) {
	var bits uint64
	for item := range strings.SplitSeq(f, ",") {
		if item == "" {
			return 0, errors.New("empty list item")
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("step %q is not a positive number", stepText)
			}
			step = n
		}
		lo, hi := spec.min, spec.max
		if spec.name == "day-of-week" {
			hi = 6 // "*" is Sunday to Saturday; 7 only when named
		}
		switch rng {
		case "*":
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = cronValue(a, spec); err != nil {
				return 0, err
			}
			switch {
			case isRange:
				if hi, err = cronValue(b, spec); err != nil {
					return 0, err
				}
				if hi < lo {
					return 0, fmt.Errorf("range %s runs backwards", rng)
				}
			case hasStep:
				hi = spec.max // "a/n" runs from a to the field's end
				if spec.name == "day-of-week" {
					hi = 6
				}
			default:
				hi = lo
			}
		}
		for v := lo; v <= hi; v += step {
			bits |= 1 << uint(v)
		}
	}
	return bits, nil
}

func cronValue(s string, spec cronField) (int, error) {
	for i, n := range spec.names {
		if strings.EqualFold(s, n) {
			return spec.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		if spec.names != nil {
			return 0, fmt.Errorf("%q is not a number or a name (%s)", s, strings.Join(spec.names, ", "))
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < spec.min || v > spec.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, spec.min, spec.max)
	}
	return v, nil
}

func (s *Schedule) String() string { return s.Spec + " " + s.Loc.String() }

// Next returns the first time after after at which the schedule fires, or
// the zero time if it fires in none of the next ten years.
func (s *Schedule) Next(after time.Time) time.Time {
	a := after.In(s.Loc)
	// w is a wall-clock time held as UTC, where calendar arithmetic has no
	// daylight saving.
	w := time.Date(a.Year(), a.Month(), a.Day(), a.Hour(), a.Minute(), 0, 0, time.UTC).Add(time.Minute)
	limit := w.AddDate(maxSearch, 0, 0)
	for {
		w = s.nextWall(w, limit)
		if w.IsZero() {
			return time.Time{}
		}
		// Only in a repeated hour can a later wall time be an earlier
		// instant; the loop then moves on past the repetition.
		if t := resolve(w, s.Loc); t.After(after) {
			return t
		}
		w = w.Add(time.Minute)
	}
}

// nextWall returns the first wall time at or after w that matches, or zero
// if there is none before limit.
func (s *Schedule) nextWall(w, limit time.Time) time.Time {
	for w.Before(limit) {
		switch {
		case s.month&(1<<uint(w.Month())) == 0:
			w = time.Date(w.Year(), w.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		case !s.dayMatches(w):
			w = time.Date(w.Year(), w.Month(), w.Day()+1, 0, 0, 0, 0, time.UTC)
		case s.hour&(1<<uint(w.Hour())) == 0:
			w = w.Truncate(time.Hour).Add(time.Hour)
		case s.minute&(1<<uint(w.Minute())) == 0:
			w = w.Add(time.Minute)
		default:
			return w
		}
	}
	return time.Time{}
}

func (s *Schedule) dayMatches(w time.Time) bool {
	dom := s.dom&(1<<uint(w.Day())) != 0
	dow := s.dow&(1<<uint(w.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// resolve returns the instant at which wall time w (held as UTC) happens in
// loc: the earlier one if it happens twice, and the end of the jump if it
// is skipped.
func resolve(w time.Time, loc *time.Location) time.Time {
	u := w.Unix()
	offsetAt := func(sec int64) int64 {
		_, off := time.Unix(sec, 0).In(loc).Zone()
		return int64(off)
	}
	wallAt := func(sec int64) int64 { return sec + offsetAt(sec) }
	// Transitions are months apart; the offsets a day either side are all
	// the candidates.
	before, after := offsetAt(u-86400), offsetAt(u+86400)
	best := int64(0)
	found := false
	for _, off := range []int64{before, offsetAt(u), after} {
		if t := u - off; wallAt(t) == u && (!found || t < best) {
			best, found = t, true
		}
	}
	if found {
		return time.Unix(best, 0).In(loc)
	}
	if after <= before {
		// No gap explains the miss (a zone with odd history); take what
		// time.Date makes of it.
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), 0, 0, loc)
	}
	// A gap: find the jump, the first second whose wall time is past w.
	lo, hi := u-after, u-before
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if wallAt(mid) > u {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Unix(hi, 0).In(loc)
}
