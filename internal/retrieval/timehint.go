package retrieval

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// timeWindow is the span of time a question points at: "三月初", "late
// May", "上周", "yesterday" (seed 001 §5.2 lists time references among the
// cues). What was said or written then is what such a question is about.
type timeWindow struct {
	from, to time.Time
	// sharp: the question named a day ("on October 13") or a month with
	// its year ("in July 2023"), a surer cue than "in June" or "last
	// week", so it weighs more (TimeWeights.SharpIn, SharpOut).
	sharp bool
	// yearless: the question named a month or a day but no year; the year
	// is the latest that fits before now until anchor moves it.
	yearless bool
	// weigh is what an item weighs inside and outside the window
	// (askedWindow sets it from Engine.Weights).
	weigh TimeWeights
}

func (w *timeWindow) holds(t time.Time) bool {
	return w != nil && !t.Before(w.from) && t.Before(w.to)
}

// factor is what an item said or written at t weighs for a question about
// w (1 for a question about no time).
func (w *timeWindow) factor(t time.Time) float64 {
	switch {
	case w == nil:
		return 1
	case w.holds(t) && w.sharp:
		return w.weigh.SharpIn
	case w.holds(t):
		return w.weigh.In
	case w.sharp:
		return w.weigh.SharpOut
	default:
		return w.weigh.Out
	}
}

const (
	// timeSlack widens a window: people round ("early March" for the 12th).
	timeSlack = 3 * 24 * time.Hour
	// daySlack widens a named day.
	daySlack = 24 * time.Hour
)

var (
	// A day: "October 13, 2023", "13 October 2023", "the 3rd of June",
	// "2023-10-13", "3月5日", "2023年3月5号".
	enMonthDay = regexp.MustCompile(`(?i)\b(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?`)
	enDayMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?(?:,?\s+(\d{4}))?`)
	isoDay     = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	zhDay      = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(1[0-2]|0?[1-9])\s*月\s*([12][0-9]|3[01]|0?[1-9])\s*[日号]`)
	zhMonth    = regexp.MustCompile(`(十[一二]|[一二三四五六七八九十]|1[0-2]|0?[1-9])\s*月份?\s*(初|上旬|中旬|中|下旬|底|末)?`)
	enMonth    = regexp.MustCompile(`(?i)\b(?:(early|mid|late|end of|beginning of|start of)[\s-]+)?(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?(\s+\d{4})?`)
)

var zhDigits = map[string]int{"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "十一": 11, "十二": 12}

var enMonths = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
	"sep": 9, "oct": 10, "nov": 11, "dec": 12}

// parseTimeWindow finds the first time reference of query, relative to
// now, or returns nil.
func parseTimeWindow(query string, now time.Time) *timeWindow {
	lq := strings.ToLower(query)
	day := 24 * time.Hour
	for _, rel := range []struct {
		words    []string
		from, to time.Duration // before now
	}{
		{[]string{"前天", "day before yesterday"}, 3 * day, 1 * day},
		{[]string{"昨天", "昨晚", "yesterday", "last night"}, 2 * day, 0},
		{[]string{"上周", "上个星期", "上礼拜", "上星期", "last week"}, 14 * day, 2 * day},
		{[]string{"这周", "本周", "这个星期", "this week"}, 7 * day, 0},
		{[]string{"上个月", "上月", "last month"}, 62 * day, 20 * day},
	} {
		for _, w := range rel.words {
			if strings.Contains(lq, w) {
				return &timeWindow{from: now.Add(-rel.from), to: now.Add(-rel.to + time.Minute)}
			}
		}
	}
	if strings.Contains(lq, "去年") || strings.Contains(lq, "last year") {
		y := now.Year() - 1
		return &timeWindow{from: time.Date(y, 1, 1, 0, 0, 0, 0, now.Location()), to: time.Date(y+1, 1, 1, 0, 0, 0, 0, now.Location())}
	}
	if w := parseDay(query, now); w != nil {
		return w
	}
	if m := zhMonth.FindStringSubmatch(query); m != nil {
		n, ok := zhDigits[m[1]]
		if !ok {
			n, _ = strconv.Atoi(m[1])
		}
		part := map[string]string{"初": "early", "上旬": "early", "中": "mid", "中旬": "mid", "下旬": "late", "底": "late", "末": "late"}[m[2]]
		return monthWindow(time.Month(n), part, 0, now)
	}
	for _, m := range enMonth.FindAllStringSubmatch(query, -1) {
		name := strings.ToLower(m[2])
		// "may" is mostly a verb: a month only with a part, a year, or
		// "in" before it.
		if name == "may" && m[1] == "" && m[3] == "" && !strings.Contains(lq, "in may") {
			continue
		}
		part := strings.ToLower(m[1])
		switch part {
		case "end of":
			part = "late"
		case "beginning of", "start of":
			part = "early"
		}
		year, _ := strconv.Atoi(strings.TrimSpace(m[3]))
		return monthWindow(enMonths[name[:3]], part, year, now)
	}
	return nil
}

// parseDay finds a date with its day in query ("on October 13, 2023",
// "3月5日"): what was said that day, a day either side for the rounding of
// time zones and late nights.
func parseDay(query string, now time.Time) *timeWindow {
	var year, day int
	var month time.Month
	// ISO and Chinese dates both hold year, month and day in that order.
	ymd := isoDay.FindStringSubmatch(query)
	if ymd == nil {
		ymd = zhDay.FindStringSubmatch(query)
	}
	if m := ymd; m != nil {
		year, _ = strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		month = time.Month(n)
		day, _ = strconv.Atoi(m[3])
	} else if m := enMonthDay.FindStringSubmatch(query); m != nil {
		month = enMonths[strings.ToLower(m[1])[:3]]
		day, _ = strconv.Atoi(m[2])
		year, _ = strconv.Atoi(m[3])
	} else if m := enDayMonth.FindStringSubmatch(query); m != nil {
		day, _ = strconv.Atoi(m[1])
		month = enMonths[strings.ToLower(m[2])[:3]]
		year, _ = strconv.Atoi(m[3])
	} else {
		return nil
	}
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return nil
	}
	yearless := year == 0
	if yearless {
		year = now.Year()
		if time.Date(year, month, day, 0, 0, 0, 0, now.Location()).After(now) {
			year--
		}
	}
	start := time.Date(year, month, day, 0, 0, 0, 0, now.Location())
	return &timeWindow{from: start.Add(-daySlack), to: start.Add(24*time.Hour + daySlack), sharp: true, yearless: yearless}
}

// monthWindow is month (of year, or its latest occurrence not after now),
// or its early, mid or late part, widened by timeSlack.
func monthWindow(month time.Month, part string, year int, now time.Time) *timeWindow {
	if month < 1 || month > 12 {
		return nil
	}
	explicit := year != 0
	if year == 0 {
		year = now.Year()
		if month > now.Month() {
			year--
		}
	}
	start := time.Date(year, month, 1, 0, 0, 0, 0, now.Location())
	end := start.AddDate(0, 1, 0)
	switch part {
	case "early":
		end = start.AddDate(0, 0, 10)
	case "mid":
		start, end = start.AddDate(0, 0, 10), start.AddDate(0, 0, 20)
	case "late":
		start = start.AddDate(0, 0, 20)
	}
	return &timeWindow{from: start.Add(-timeSlack), to: end.Add(timeSlack), sharp: explicit, yearless: !explicit}
}

// askedWindow is the time text asks about (parseTimeWindow), anchored to
// the user's own years and weighing as weigh says: nil when it names none.
// When the anchor's read fails the window is returned unanchored, with the
// error.
func askedWindow(ctx context.Context, st TurnStore, scope memory.Scope, text string, now time.Time, weigh TimeWeights) (*timeWindow, error) {
	tw := parseTimeWindow(text, now)
	if tw == nil {
		return nil, nil
	}
	tw.weigh = weigh
	return anchor(ctx, st, scope, tw)
}

// maxYearsBack bounds how far anchor looks for a year the user spoke in.
const maxYearsBack = 5

// anchor moves a window whose year the question left out ("in May", "on
// the 3rd of June") back a year at a time, up to maxYearsBack, until it
// holds something the user said: the May a user asks about is the latest
// May they have anything from, not one they were silent in. A window the
// store cannot check, or that no year fills, stays as it was; so does one
// whose check failed, returned with the error.
func anchor(ctx context.Context, st TurnStore, scope memory.Scope, tw *timeWindow) (*timeWindow, error) {
	r, ok := st.(TurnWindowReader)
	if tw == nil || !tw.yearless || !ok {
		return tw, nil
	}
	for back := range maxYearsBack + 1 {
		w := *tw
		w.from, w.to = tw.from.AddDate(-back, 0, 0), tw.to.AddDate(-back, 0, 0)
		if said, err := r.SaidWithin(ctx, scope, w.from, w.to); err != nil {
			return tw, fmt.Errorf("anchor a time to the user's years: %w", err)
		} else if said {
			return &w, nil
		}
	}
	return tw, nil
}
