package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	defaultrules "github.com/engramhq/engram/rules"
)

const shippedDir = "../../rules"

func loadShipped(t *testing.T) *Set {
	t.Helper()
	set, err := Load(shippedDir, events.Types())
	if err != nil {
		t.Fatalf("load shipped rules:\n%v", err)
	}
	return set
}

// event builds an Event as a worker would: a structured-mode CloudEvent.
func event(t *testing.T, typ string, data map[string]any) Event {
	t.Helper()
	m := map[string]any{"specversion": "1.0", "id": "e1", "source": "test", "type": typ,
		"namespace": "default", "user": "u1", "subject": "s1", "time": "2026-03-02T10:00:00Z"}
	if data != nil {
		m["data"] = data
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func names(rules []Rule) string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Name)
	}
	return strings.Join(out, ",")
}

func TestShippedFilesParse(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(shippedDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d shipped rule files, want at least 5", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rules, err := Parse(f, data, events.Types())
			if err != nil {
				t.Fatal(err)
			}
			if len(rules) == 0 {
				t.Fatal("no rules")
			}
			if !strings.Contains(strings.ToLower(string(data)), "seed 00") {
				t.Error("no comment cites the seed the rules come from")
			}
			for _, r := range rules {
				if r.Description == "" {
					t.Errorf("rule %s has no description", r.Name)
				}
			}
		})
	}
}

func TestShippedEmbeddedMatchDisk(t *testing.T) {
	t.Parallel()
	disk := loadShipped(t)
	embedded, err := LoadFS(defaultrules.FS, events.Types())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(embedded.Rules), names(disk.Rules); got != want {
		t.Fatalf("embedded rules %s, on disk %s", got, want)
	}
}

func TestShippedEvents(t *testing.T) {
	t.Parallel()
	set := loadShipped(t)
	for _, tc := range []struct {
		name string
		typ  string
		data map[string]any
		want string
	}{
		{"long session", events.TypeSessionEnded, map[string]any{"session_id": "s1", "message_count": 12, "reason": "user_closed"}, "extract_on_session_end,consolidate_on_session_end"},
		{"3 messages is enough", events.TypeSessionEnded, map[string]any{"session_id": "s1", "message_count": 3}, "extract_on_session_end,consolidate_on_session_end"},
		{"2 messages is too short", events.TypeSessionEnded, map[string]any{"session_id": "s1", "message_count": 2}, "extract_on_session_end"},
		{"no count", events.TypeSessionEnded, map[string]any{"session_id": "s1"}, "extract_on_session_end"},
		{"compression", events.TypeContextCompressing, map[string]any{"session_id": "s1", "turns": []any{}}, "extract_on_compression,episode_on_compression"},
		{"important rule", events.TypeMemoryImportant, map[string]any{"kind": "rule", "importance": 0.85}, "cards_on_important_rule"},
		{"important fact", events.TypeMemoryImportant, map[string]any{"kind": "fact", "importance": 0.85}, ""},
		{"very important fact", events.TypeMemoryImportant, map[string]any{"kind": "fact", "importance": 0.97}, "cards_on_important_rule"},
		{"a turn", events.TypeTurnRecorded, map[string]any{"session_id": "s1", "role": "user", "content": "hi"}, "extract_when_quiet,extract_at_token_cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(set.Match(event(t, tc.typ, tc.data))); got != tc.want {
				t.Fatalf("fired %q, want %q", got, tc.want)
			}
		})
	}
}

func TestShippedActions(t *testing.T) {
	t.Parallel()
	set := loadShipped(t)
	want := map[string]string{
		"consolidate_on_session_end": "build_episode source=\"session_end\"; update_scratchpad max_chars=2000",
		"extract_on_session_end":     "extract_now min_messages=1 reason=\"session_ended\"",
		"extract_on_compression":     "extract_now min_messages=1 reason=\"compressing\"",
		"episode_on_compression":     "build_episode source=\"compression\"",
		"extract_when_quiet":         "extract_now min_messages=1 quiet_gap=3m0s reason=\"quiet\"",
		"extract_at_token_cap":       "extract_now min_messages=1 reason=\"token_cap\" token_cap=6000",
		"daily_sweep":                "extract_now min_messages=1 reason=\"sweep\"; build_episode source=\"sweep\"",
		"daily_compress":             "compress_daily days=1",
		"daily_decay_archive":        "decay; archive access_below=2 score_below=0.1",
		"daily_expire":               "expire short_term=72h0m0s transient=24h0m0s",
		"daily_cards":                "render_cards max_chars=1500 per_kind=5",
		"weekly_dedupe":              "dedupe min_entries=10 model_similarity=0.4 similarity=0.9",
		"weekly_profile":             "refresh_profile min_importance=0.7",
		"maintenance_cap":            "enforce_cap max_memories=10000",
		"cards_on_important_rule":    "render_cards max_chars=1500 per_kind=5",
		"daily_report":               "report window=24h0m0s",
		"compact_long_session":       "compact max_messages=200",
	}
	for _, r := range set.Rules {
		var got []string
		for _, a := range r.Do {
			got = append(got, a.String())
		}
		if w, ok := want[r.Name]; !ok {
			t.Errorf("unexpected shipped rule %s", r.Name)
		} else if g := strings.Join(got, "; "); g != w {
			t.Errorf("rule %s does %s, want %s", r.Name, g, w)
		}
		delete(want, r.Name)
	}
	for name := range want {
		t.Errorf("shipped rule %s missing", name)
	}
	if r := find(t, set, "cards_on_important_rule"); r.Mode != ModeConfirm {
		t.Errorf("cards_on_important_rule mode %s, want confirm", r.Mode)
	}
}

func find(t *testing.T, set *Set, name string) Rule {
	t.Helper()
	for _, r := range set.Rules {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %s", name)
	return Rule{}
}

func TestShippedSchedules(t *testing.T) {
	t.Parallel()
	set := loadShipped(t)
	// A week from Sunday 2026-03-01 00:00 local time: five daily rules on
	// each of 7 days, the report after them, the weekly ones on Monday the
	// 2nd at 04:00.
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.Local)
	daily, reports, weekly := 0, 0, 0
	for day := range 7 {
		from := start.AddDate(0, 0, day)
		for _, f := range set.Due(from, from.AddDate(0, 0, 1)) {
			switch at := f.At; {
			case at.Hour() == 3 && at.Minute() == 0:
				daily++
			case at.Hour() == 3 && at.Minute() == 30 && f.Rule.Name == "daily_report":
				reports++
			case at.Hour() == 4 && at.Weekday() == time.Monday:
				weekly++
			default:
				t.Errorf("%s due at %v", f.Rule.Name, at)
			}
		}
	}
	if daily != 5*7 || reports != 7 || weekly != 3 {
		t.Fatalf("in a week: %d daily firings, %d reports, %d weekly; want 35, 7 and 3", daily, reports, weekly)
	}
}
