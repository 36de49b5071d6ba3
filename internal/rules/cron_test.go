package rules

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func loadLocation(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone data for %s: %v", name, err)
	}
	return loc
}

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	ny := loadLocation(t, "America/New_York")
	sh := loadLocation(t, "Asia/Shanghai")
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name  string
		spec  string
		loc   *time.Location
		after string // RFC 3339
		want  []string
	}{
		{"daily", "0 3 * * *", time.UTC, "2026-03-01T02:59:00Z", []string{"2026-03-01T03:00:00Z", "2026-03-02T03:00:00Z"}},
		{"strictly after", "0 3 * * *", time.UTC, "2026-03-01T03:00:00Z", []string{"2026-03-02T03:00:00Z"}},
		{"seconds are dropped", "0 3 * * *", time.UTC, "2026-03-01T02:59:59.9Z", []string{"2026-03-01T03:00:00Z"}},
		{"step", "*/15 * * * *", time.UTC, "2026-03-01T10:07:30Z", []string{"2026-03-01T10:15:00Z", "2026-03-01T10:30:00Z", "2026-03-01T10:45:00Z", "2026-03-01T11:00:00Z"}},
		{"range with step", "5-10/2 * * * *", time.UTC, "2026-03-01T10:00:00Z", []string{"2026-03-01T10:05:00Z", "2026-03-01T10:07:00Z", "2026-03-01T10:09:00Z", "2026-03-01T11:05:00Z"}},
		{"start with step", "10/20 * * * *", time.UTC, "2026-03-01T10:00:00Z", []string{"2026-03-01T10:10:00Z", "2026-03-01T10:30:00Z", "2026-03-01T10:50:00Z", "2026-03-01T11:10:00Z"}},
		{"list", "0 9,17 * * *", time.UTC, "2026-03-01T10:00:00Z", []string{"2026-03-01T17:00:00Z", "2026-03-02T09:00:00Z"}},
		{"weekly on Monday", "0 4 * * 1", time.UTC, "2026-03-01T00:00:00Z", []string{"2026-03-02T04:00:00Z", "2026-03-09T04:00:00Z"}},
		{"names", "30 9 * jan-mar SAT,sun", time.UTC, "2026-03-27T00:00:00Z", []string{"2026-03-28T09:30:00Z", "2026-03-29T09:30:00Z", "2027-01-02T09:30:00Z"}},
		{"7 is Sunday", "0 0 * * 7", time.UTC, "2026-03-02T00:00:00Z", []string{"2026-03-08T00:00:00Z"}},
		{"weekday range to 7", "0 0 * * 6-7", time.UTC, "2026-03-02T00:00:00Z", []string{"2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-14T00:00:00Z"}},
		// Both day fields restricted: either matches (classic cron).
		{"day-of-month or day-of-week", "0 3 1 * MON", time.UTC, "2026-03-28T00:00:00Z", []string{"2026-03-30T03:00:00Z", "2026-04-01T03:00:00Z", "2026-04-06T03:00:00Z"}},
		{"Friday or the 13th", "0 12 13 * 5", time.UTC, "2026-03-10T00:00:00Z", []string{"2026-03-13T12:00:00Z", "2026-03-20T12:00:00Z", "2026-03-27T12:00:00Z", "2026-04-03T12:00:00Z", "2026-04-10T12:00:00Z", "2026-04-13T12:00:00Z"}},
		// A field starting with * is unrestricted: both must match.
		{"starred day-of-month ands", "0 3 */2 * MON", time.UTC, "2026-03-01T00:00:00Z", []string{"2026-03-09T03:00:00Z", "2026-03-23T03:00:00Z"}},
		{"starred day-of-week ands", "0 3 1 * */1", time.UTC, "2026-03-01T04:00:00Z", []string{"2026-04-01T03:00:00Z"}},
		{"leap day", "0 0 29 2 *", time.UTC, "2026-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"31st skips short months", "0 0 31 * *", time.UTC, "2026-03-31T00:00:00Z", []string{"2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"@hourly", "@hourly", time.UTC, "2026-03-01T10:30:00Z", []string{"2026-03-01T11:00:00Z"}},
		{"@daily", "@daily", time.UTC, "2026-03-01T10:30:00Z", []string{"2026-03-02T00:00:00Z"}},
		{"@weekly is Sunday midnight", "@weekly", time.UTC, "2026-03-02T00:00:00Z", []string{"2026-03-08T00:00:00Z"}},
		{"@monthly", "@monthly", time.UTC, "2026-03-02T00:00:00Z", []string{"2026-04-01T00:00:00Z"}},
		{"@yearly", "@Yearly", time.UTC, "2026-03-02T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		// A zone with no daylight saving: 03:00 in Shanghai is 19:00 UTC.
		{"Shanghai", "0 3 * * *", sh, "2026-03-01T00:00:00Z", []string{"2026-03-01T19:00:00Z", "2026-03-02T19:00:00Z"}},
		// New York springs forward on 2026-03-08 at 02:00 EST to 03:00 EDT.
		// 02:30 does not exist that day: it fires at 03:00 EDT, 07:00 UTC,
		// and the day is not skipped.
		{"spring forward: skipped time fires after the jump", "30 2 * * *", ny, "2026-03-07T08:00:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"spring forward: hourly", "0 * * * *", ny, "2026-03-08T05:30:00Z", []string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}},
		{"spring forward: every 15 minutes fires once for the gap", "*/15 * * * *", ny, "2026-03-08T06:50:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"}},
		{"spring forward: 03:00 itself", "0 3 * * *", ny, "2026-03-07T09:00:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z"}},
		// New York falls back on 2026-11-01 at 02:00 EDT to 01:00 EST; 01:30
		// happens twice and fires the first time only.
		{"fall back: repeated time fires once", "30 1 * * *", ny, "2026-10-31T12:00:00Z", []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"fall back: hourly skips the repeated hour", "0 * * * *", ny, "2026-11-01T04:30:00Z", []string{"2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"}},
		{"fall back: from inside the repeated hour", "45 1 * * *", ny, "2026-11-01T06:10:00Z", []string{"2026-11-02T06:45:00Z"}},
		{"fall back: after the repetition", "30 2 * * *", ny, "2026-10-31T12:00:00Z", []string{"2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSchedule(tc.spec, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			at := utc(tc.after)
			for i, w := range tc.want {
				got := s.Next(at)
				if want := utc(w); !got.Equal(want) {
					t.Fatalf("Next #%d after %s = %s, want %s", i+1, at.UTC().Format(time.RFC3339), got.UTC().Format(time.RFC3339), w)
				}
				if got.Location() != tc.loc {
					t.Fatalf("Next in %s, want %s", got.Location(), tc.loc)
				}
				at = got
			}
		})
	}
}

func TestParseScheduleDefaultsToLocal(t *testing.T) {
	t.Parallel()
	s, err := ParseSchedule("0 3 * * *", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Loc != time.Local {
		t.Fatalf("Loc = %v, want Local", s.Loc)
	}
	if _, err := ParseSchedule("0 3 * *", nil); err == nil {
		t.Fatal("4 fields parsed")
	}
}

func TestDue(t *testing.T) {
	t.Parallel()
	set := mustSet(t, `rules:
  - name: nightly
    schedule: "0 3 * * *"
    tz: UTC
    do: [decay]
  - name: quarter
    schedule: "*/15 * * * *"
    tz: UTC
    do: [decay]
  - name: off
    schedule: "* * * * *"
    tz: UTC
    enabled: false
    do: [decay]
  - name: evented
    on: session.ended
    do: [decay]
`)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		from, to string
		want     []string // rule@time, in order
	}{
		{"empty window", "2026-03-01T03:00:00Z", "2026-03-01T03:00:00Z", nil},
		{"to is included, from is not", "2026-03-01T02:45:00Z", "2026-03-01T03:00:00Z", []string{"nightly@03:00 01", "quarter@03:00 01"}},
		{"a short window", "2026-03-01T03:01:00Z", "2026-03-01T03:20:00Z", []string{"quarter@03:15 01"}},
		// Three days down: each rule fires once, at its latest time.
		{"catching up", "2026-03-01T00:00:00Z", "2026-03-04T00:05:00Z", []string{"nightly@03:00 03", "quarter@00:00 04"}},
		{"centuries", "0001-01-01T00:00:00Z", "2026-03-04T00:05:00Z", []string{"nightly@03:00 03", "quarter@00:00 04"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range set.Due(at(tc.from), at(tc.to)) {
				got = append(got, f.Rule.Name+"@"+f.At.Format("15:04 02"))
			}
			if g, w := joined(got), joined(tc.want); g != w {
				t.Fatalf("Due = %s, want %s", g, w)
			}
		})
	}
	up := set.Upcoming(at("2026-03-01T03:01:00Z"))
	if len(up) != 2 || up[0].Rule.Name != "quarter" || !up[0].At.Equal(at("2026-03-01T03:15:00Z")) || !up[1].At.Equal(at("2026-03-02T03:00:00Z")) {
		t.Fatalf("Upcoming = %+v", up)
	}
}

func joined(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func mustSet(t *testing.T, file string) *Set {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "r.yaml", file)
	set, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestScheduleNextBruteForce checks Next against a minute-by-minute walk
// for schedules built at random, in a zone with no daylight saving (the
// DST rules are tested by table above).
func TestScheduleNextBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(lo, hi int, names []string) string {
		switch rng.IntN(6) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", 1+rng.IntN(hi-lo+1))
		case 2:
			a := lo + rng.IntN(hi-lo+1)
			return fmt.Sprintf("%d-%d", a, a+rng.IntN(hi-a+1))
		case 3:
			return fmt.Sprintf("%d,%d", lo+rng.IntN(hi-lo+1), lo+rng.IntN(hi-lo+1))
		case 4:
			if names != nil {
				return names[rng.IntN(len(names))]
			}
		}
		return strconv.Itoa(lo + rng.IntN(hi-lo+1))
	}
	matches := func(s *Schedule, w time.Time) bool {
		return s.minute&(1<<w.Minute()) != 0 && s.hour&(1<<w.Hour()) != 0 && s.month&(1<<int(w.Month())) != 0 && s.dayMatches(w)
	}
	start := time.Date(2026, 1, 30, 22, 0, 0, 0, time.UTC)
	compared := 0
	for range 150 {
		spec := strings.Join([]string{pick(0, 59, nil), pick(0, 23, nil), pick(1, 31, nil), pick(1, 12, []string{"jan", "feb", "mar"}), pick(0, 6, []string{"mon", "fri", "sun"})}, " ")
		s, err := ParseSchedule(spec, time.UTC)
		if err != nil {
			continue // a random day-of-month the random months lack
		}
		after := start.Add(time.Duration(rng.IntN(90*24*60)) * time.Minute)
		want := time.Time{}
		for w := after.Add(time.Minute); w.Before(after.AddDate(0, 0, 40)); w = w.Add(time.Minute) {
			if matches(s, w) {
				want = w
				break
			}
		}
		if want.IsZero() {
			continue // rarer than every 40 days; the tables cover those
		}
		if got := s.Next(after); !got.Equal(want) {
			t.Fatalf("%q Next(%v) = %v, want %v", spec, after, got, want)
		}
		compared++
	}
	if compared < 50 {
		t.Fatalf("only %d of 150 random schedules compared", compared)
	}
}
