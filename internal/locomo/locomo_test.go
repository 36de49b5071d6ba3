package locomo

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadMini(t *testing.T) *Dataset {
	t.Helper()
	ds, err := Load("testdata/mini.json")
	if err != nil {
		t.Fatalf("Load(mini.json): %v", err)
	}
	return ds
}

func TestLoadMini(t *testing.T) {
	t.Parallel()
	ds := loadMini(t)

	t.Run("shape", func(t *testing.T) {
		if got, want := len(ds.Conversations), 2; got != want {
			t.Fatalf("conversations=%d, want %d", got, want)
		}
		a := ds.Conversations[0]
		if a.ID != "conv-a" || a.SpeakerA != "Alice" || a.SpeakerB != "Bob" {
			t.Fatalf("conversation 0 = %q %q %q, want conv-a Alice Bob", a.ID, a.SpeakerA, a.SpeakerB)
		}
		// session_3_date_time has no session_3 list: it is not a session.
		if got, want := len(a.Sessions), 2; got != want {
			t.Fatalf("conv-a sessions=%d, want %d", got, want)
		}
		if got, want := len(a.Turns()), 5; got != want {
			t.Fatalf("conv-a turns=%d, want %d", got, want)
		}
		tu := a.Sessions[1].Turns[1]
		if tu.DiaID != "D2:2" || tu.Session != 2 || tu.Index != 1 || tu.Speaker != "Alice" {
			t.Fatalf("turn = %+v, want D2:2 in session 2 at index 1 by Alice", tu)
		}
		if got, want := tu.BlipCaption, "a photo of moving boxes"; got != want {
			t.Fatalf("blip caption=%q, want %q", got, want)
		}
	})

	t.Run("session times", func(t *testing.T) {
		want := []time.Time{
			time.Date(2023, time.May, 8, 13, 56, 0, 0, time.UTC),
			time.Date(2022, time.December, 25, 10, 5, 0, 0, time.UTC),
			time.Date(2024, time.February, 29, 0, 0, 0, 0, time.UTC), // "12:00 am"
		}
		var got []time.Time
		for _, c := range ds.Conversations {
			for _, s := range c.Sessions {
				got = append(got, s.Time)
			}
		}
		if !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Fatalf("session times=%v, want %v", got, want)
		}
		if got[0].Location() != time.UTC {
			t.Fatalf("location=%v, want UTC", got[0].Location())
		}
	})

	t.Run("answers", func(t *testing.T) {
		qa := ds.Conversations[0].QA
		cases := []struct {
			i                   int
			answer, adversarial string
			category            int
		}{
			{0, "7 May 2023", "", 2},
			{1, "2022", "", 1}, // a bare number in the file
			{3, "", "Comet", 5},
			{5, "No", "Yes", 5},
		}
		for _, c := range cases {
			q := qa[c.i]
			if q.Answer != c.answer || q.AdversarialAnswer != c.adversarial || q.Category != c.category {
				t.Errorf("qa[%d] = answer %q adversarial %q category %d, want %q %q %d",
					c.i, q.Answer, q.AdversarialAnswer, q.Category, c.answer, c.adversarial, c.category)
			}
		}
	})

	t.Run("evidence", func(t *testing.T) {
		want := map[string][][]string{
			"conv-a": {
				{"D1:3"},
				{"D1:1", "D2:2"}, // "D1:1; D2:2"
				{"D2:1", "D1:2"}, // "D:2:1", "D1:02"
				nil,              // "D9:9" names no turn
				nil,              // none in the file
				{"D1:2"},         // "D1:2" twice, and "D"
			},
			"conv-b": {{"D1:1", "D1:2"}}, // "D1:1 D1:2"
		}
		for _, c := range ds.Conversations {
			for i, q := range c.QA {
				if got, want := q.Evidence, want[c.ID][i]; !slices.Equal(got, want) {
					t.Errorf("%s qa[%d] evidence=%q, want %q", c.ID, i, got, want)
				}
			}
		}
	})

	t.Run("stats", func(t *testing.T) {
		want := Stats{
			Conversations: 2, Sessions: 3, Turns: 7, Questions: 7,
			PerCategory: map[int]int{1: 2, 2: 1, 3: 1, 4: 1, 5: 2},
			EvidenceIDs: 8, Rewritten: 4, Dropped: 2, Duplicates: 1, NoEvidence: 2,
		}
		if got := ds.Stats; !reflect.DeepEqual(got, want) {
			t.Fatalf("stats=%+v, want %+v", got, want)
		}
		if got, want := len(ds.Fixes), 7; got != want {
			t.Fatalf("fixes=%d, want %d: %+v", got, want, ds.Fixes)
		}
		f := ds.Fixes[3] // conv-a qa[3] "D9:9"
		if f.Question != 3 || f.Raw != "D9:9" || len(f.Kept) != 0 || !slices.Equal(f.Dropped, []string{"D9:9"}) {
			t.Fatalf("fix=%+v, want D9:9 dropped from question 3", f)
		}
	})

	t.Run("turn text", func(t *testing.T) {
		c := ds.Conversations[0]
		tu, ok := c.Turn("D1:02")
		if !ok {
			t.Fatal("Turn(D1:02) not found")
		}
		if got, want := c.TurnText(tu), "Sure. Look at this bowl I made! [image: a photo of a black and white bowl]"; got != want {
			t.Fatalf("TurnText=%q, want %q", got, want)
		}
		tu, _ = c.Turn("D1:1")
		if got, want := c.TurnText(tu), "Hi Bob! We moved house in 2022, remember?"; got != want {
			t.Fatalf("TurnText=%q, want %q", got, want)
		}
		if _, ok := c.Turn("D3:1"); ok {
			t.Fatal("Turn(D3:1) found, want not found")
		}
	})
}

func TestNormaliseDiaID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"D1:3", "D1:3", true},
		{"D:11:26", "D11:26", true},
		{"D30:05", "D30:5", true},
		{" D2:1 ", "D2:1", true},
		{"D", "", false},
		{"D0:1", "", false},
		{"D1:0", "", false},
		{"1:3", "", false},
		{"D1:3:4", "", false},
		{"D99999999999999999999:1", "", false},
	}
	for _, c := range cases {
		got, err := NormaliseDiaID(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("NormaliseDiaID(%q) = %q, %v; want %q, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestSplitEvidence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in       string
		ids, bad []string
	}{
		{"D8:6; D9:17", []string{"D8:6", "D9:17"}, nil},
		{"D9:1 D4:4 D4:6", []string{"D9:1", "D4:4", "D4:6"}, nil},
		{"D:11:26", []string{"D11:26"}, nil},
		{"D", nil, []string{"D"}},
		{"", nil, []string{""}},
		{"D1:1, x", []string{"D1:1"}, []string{"x"}},
	}
	for _, c := range cases {
		ids, bad := SplitEvidence(c.in)
		if !slices.Equal(ids, c.ids) || !slices.Equal(bad, c.bad) {
			t.Errorf("SplitEvidence(%q) = %q, %q; want %q, %q", c.in, ids, bad, c.ids, c.bad)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	session := `"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]`
	conv := func(extra string) string {
		return `[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", ` + session + extra + `}, "qa": []}]`
	}
	cases := []struct {
		name, json, want string
	}{
		{"not json", `{`, "decode"},
		{"empty", `[]`, "no conversations"},
		{"no sample id", `[{"conversation": {}}]`, "no sample_id"},
		{"repeated sample id", `[` + strings.Trim(conv(""), "[]") + `,` + strings.Trim(conv(""), "[]") + `]`, "repeated"},
		{"no sessions", `[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B"}}]`, "no sessions"},
		{"no date", `[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": []}}]`, "session_1_date_time"},
		{"bad date", strings.Replace(conv(""), "8 May", "8 Mai", 1), "parse session time"},
		{"bad dia id", strings.Replace(conv(""), `"D1:1"`, `"X1"`, 1), "dia id"},
		{"wrong session", strings.Replace(conv(""), `"D1:1"`, `"D2:1"`, 1), "another session"},
		{"stranger", strings.Replace(conv(""), `"speaker": "A"`, `"speaker": "Z"`, 1), "neither"},
		{"bad category", strings.Replace(conv(""), `"qa": []`, `"qa": [{"question": "q", "evidence": [], "category": 7}]`, 1), "unknown category"},
		{"bad answer", strings.Replace(conv(""), `"qa": []`, `"qa": [{"question": "q", "answer": true, "evidence": [], "category": 1}]`, 1), "answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.json))
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse error=%q, want it to contain %q", err, c.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(t.TempDir() + "/nope.json")
		if err == nil || !strings.Contains(err.Error(), "load locomo") {
			t.Fatalf("Load error=%v, want one saying load locomo", err)
		}
	})
}

var canonicalID = regexp.MustCompile(`^D[1-9][0-9]*:[1-9][0-9]*$`)

func FuzzSplitEvidence(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		ids, _ := SplitEvidence(raw)
		for _, id := range ids {
			if !canonicalID.MatchString(id) {
				t.Fatalf("SplitEvidence(%q) gave %q, not canonical", raw, id)
			}
			if again, err := NormaliseDiaID(id); err != nil || again != id {
				t.Fatalf("NormaliseDiaID(%q) = %q, %v; want it unchanged", id, again, err)
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := Parse(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		for _, c := range ds.Conversations {
			for _, tu := range c.Turns() {
				if !canonicalID.MatchString(tu.DiaID) {
					t.Fatalf("%s: turn id %q not canonical", c.ID, tu.DiaID)
				}
			}
			for i, q := range c.QA {
				for _, id := range q.Evidence {
					if _, ok := c.Turn(id); !ok {
						t.Fatalf("%s qa[%d]: evidence %q names no turn", c.ID, i, id)
					}
				}
			}
		}
	})
}
