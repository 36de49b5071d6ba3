package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// day is the morning of a fixed day; said times in these tests are hours
// of it, learned times (the events' own) are seconds from 1970, so the two
// never agree by accident.
var day = time.Date(2025, 11, 1, 8, 0, 0, 0, time.UTC)

func hour(h float64) time.Time { return day.Add(time.Duration(h * float64(time.Hour))) }

// fact is one candidate of a memory.extracted event.
type fact struct {
	pred, content, topic string
	said                 time.Time
	updates              bool
	conf                 float64
}

// extractedAt is a memory.extracted event at seq (learned then) carrying
// facts about the user.
func extractedAt(seq uint64, user string, facts ...fact) memory.Applied {
	d := &events.MemoryExtracted{RequestID: fmt.Sprintf("r%d", seq), SessionID: "s", Extractor: events.ExtractorRules,
		Turns: []int{int(seq)}}
	for _, f := range facts {
		kind, category := events.KindIdentity, events.CategoryIdentity
		if !memory.SingleValued(f.pred) {
			kind, category = events.KindPreference, events.CategoryConfig
		}
		conf := f.conf
		if conf == 0 {
			conf = 0.9
		}
		d.Candidates = append(d.Candidates, events.Candidate{Kind: kind, Category: category, Subject: "user",
			Predicate: f.pred, Content: f.content, Topic: f.topic, Importance: 0.8, Confidence: conf, Updates: f.updates, SaidAt: f.said})
	}
	a := derived(seq, user, events.TypeMemoryExtracted, d)
	a.Source, a.ID = "engram/extractor", fmt.Sprintf("x%d", seq)
	return a
}

func scopeOf(user string) memory.Scope { return memory.Scope{Namespace: "ns", User: user} }

// byContent reads every memory of user, keyed by content.
func byContent(t *testing.T, s *Store, user string) map[string]memory.Memory {
	t.Helper()
	all, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: scopeOf(user), Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]memory.Memory{}
	for _, m := range all {
		if _, dup := out[m.Content]; dup {
			t.Fatalf("two memories say %q", m.Content)
		}
		out[m.Content] = m
	}
	return out
}

// activeContents lists the contents of user's active memories with
// predicate, sorted.
func activeContents(t *testing.T, s *Store, user, predicate string) []string {
	t.Helper()
	mems, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: scopeOf(user)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mems {
		if m.Predicate == predicate {
			out = append(out, m.Content)
		}
	}
	slices.Sort(out)
	return out
}

// asOf lists the contents of user's memories with predicate that were
// current at, sorted.
func asOf(t *testing.T, s *Store, user, predicate string, at time.Time) []string {
	t.Helper()
	mems, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: scopeOf(user), AsOf: at})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mems {
		if m.Predicate == predicate {
			out = append(out, m.Content)
		}
	}
	slices.Sort(out)
	return out
}

// chain describes the versions of one fact oldest first: each one's
// content, status, the content of what superseded it and when it stopped
// being current.
func chain(t *testing.T, s *Store, user string, contents ...string) string {
	t.Helper()
	mems := byContent(t, s, user)
	byID := map[string]memory.Memory{}
	for _, m := range mems {
		byID[m.ID] = m
	}
	var b strings.Builder
	for _, c := range contents {
		m, ok := mems[c]
		if !ok {
			fmt.Fprintf(&b, "%s: missing; ", c)
			continue
		}
		fmt.Fprintf(&b, "%s: %s", c, m.Status)
		if m.SupersededBy != "" {
			fmt.Fprintf(&b, " by %s", byID[m.SupersededBy].Content)
		}
		if m.Supersedes != "" {
			fmt.Fprintf(&b, " after %s", byID[m.Supersedes].Content)
		}
		if !m.ValidTo.IsZero() {
			fmt.Fprintf(&b, " until %s", m.ValidTo.UTC().Format("01-02 15:04"))
		}
		b.WriteString("; ")
	}
	return b.String()
}

// permutations returns every order of n items.
func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// Facts said in one order and extracted in every other order end with the
// newest said fact current and the others in its history, each
// superseded by the next said and current until it was said; as_of by
// said time gives the one current then. In both languages.
func TestSaidTimeDecidesCurrentWhateverTheExtractionOrder(t *testing.T) {
	t.Parallel()
	s := openTest(t) // one user per order
	seq := uint64(0)
	for _, lang := range []struct {
		name    string
		content [3]string
	}{
		{"en", [3]string{"User lives in Lisbon", "User moved to Porto", "User moved to Madrid"}},
		{"zh", [3]string{"用户住在上海", "用户搬到了北京", "用户搬到了深圳"}},
	} {
		said := []fact{
			{pred: "location", content: lang.content[0], said: hour(0)},
			{pred: "location", content: lang.content[1], said: hour(24), updates: true},
			{pred: "location", content: lang.content[2], said: hour(48), updates: true},
		}
		want := fmt.Sprintf("%s: superseded by %s until 11-02 08:00; %s: superseded by %s after %s until 11-03 08:00; %s: active after %s; ",
			lang.content[0], lang.content[1], lang.content[1], lang.content[2], lang.content[0], lang.content[2], lang.content[1])
		for _, order := range permutations(len(said)) {
			user := fmt.Sprintf("%s%v", lang.name, order)
			t.Run(user, func(t *testing.T) {
				for _, k := range order {
					seq++
					mustApply(t, s, extractedAt(seq, user, said[k]))
				}
				if got := chain(t, s, user, lang.content[:]...); got != want {
					t.Fatalf("history\n got %s\nwant %s", got, want)
				}
				for _, c := range []struct {
					at   time.Time
					want []string
				}{
					{hour(-1), nil},
					{hour(1), []string{lang.content[0]}},
					{hour(25), []string{lang.content[1]}},
					{hour(49), []string{lang.content[2]}},
				} {
					if got := asOf(t, s, user, "location", c.at); !slices.Equal(got, c.want) {
						t.Errorf("as of %s: %q, want %q", c.at.Format(time.DateTime), got, c.want)
					}
				}
			})
		}
	}
}

// A memory keeps both its times: when it was said, and when engram learned
// it (its event's time); its history says both for every change.
func TestMemoryKeepsSaidAndLearnedTimes(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	porto := extractedAt(7, "u", fact{pred: "location", content: "User moved to Porto", said: hour(24), updates: true})
	lisbon := extractedAt(9, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(0)})
	mustApply(t, s, porto, lisbon)
	mems := byContent(t, s, "u")
	for _, c := range []struct {
		content       string
		said, learned time.Time
	}{
		{"User moved to Porto", hour(24), porto.Time},
		{"User lives in Lisbon", hour(0), lisbon.Time},
	} {
		m := mems[c.content]
		if !m.SaidAt.Equal(c.said) || !m.LearnedAt.Equal(c.learned) {
			t.Errorf("%s: said %v, learned %v; want %v, %v", c.content, m.SaidAt, m.LearnedAt, c.said, c.learned)
		}
	}
	h, err := s.History(t.Context(), scopeOf("u"), mems["User lives in Lisbon"].ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range h {
		got = append(got, fmt.Sprintf("%s said %s learned %s", c.Change, c.SaidAt.Format(time.DateTime), c.Time.Format(time.DateTime)))
	}
	learned := lisbon.Time.Format(time.DateTime)
	want := []string{
		"created said " + hour(0).Format(time.DateTime) + " learned " + learned,
		"superseded said " + hour(24).Format(time.DateTime) + " learned " + learned,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history of the late fact:\n got %q\nwant %q", got, want)
	}
}

// Ties in said time are broken by the stream: the one applied later wins,
// live and in a rebuild alike.
func TestSaidTimeTieGoesToTheLaterEvent(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(0)}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Porto", said: hour(0)}))
	if got, want := activeContents(t, s, "u", "location"), []string{"User lives in Porto"}; !slices.Equal(got, want) {
		t.Fatalf("active %q, want %q", got, want)
	}
}

// A fact said again merges into the memory that says it, but a near
// duplicate never brings an old value back: said before a version in
// between, it goes into the history; said after the version before, it
// only moves the current one's start back.
func TestMergeDoesNotResurrectAnOldValue(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(10)}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Porto", said: hour(20)}),
		// Said again, before Lisbon: Porto was not current then.
		extractedAt(3, "u", fact{pred: "location", content: "User lives in Porto.", said: hour(5)}),
		// Said again between Lisbon and Porto: Porto was current since.
		extractedAt(4, "u", fact{pred: "location", content: "User lives in Porto!", said: hour(15)}),
		// Lisbon said again later: the user went back.
		extractedAt(5, "u", fact{pred: "location", content: "User lives in Lisbon.", said: hour(30)}),
	)
	want := "User lives in Porto.: superseded by User lives in Lisbon until 11-01 18:00; " +
		"User lives in Lisbon: superseded by User lives in Porto after User lives in Porto. until 11-01 23:00; " +
		"User lives in Porto: superseded by User lives in Lisbon. after User lives in Lisbon until 11-02 14:00; " +
		"User lives in Lisbon.: active after User lives in Porto; "
	if got := chain(t, s, "u", "User lives in Porto.", "User lives in Lisbon", "User lives in Porto", "User lives in Lisbon."); got != want {
		t.Fatalf("history\n got %s\nwant %s", got, want)
	}
	if got, want := asOf(t, s, "u", "location", hour(16)), []string{"User lives in Porto"}; !slices.Equal(got, want) {
		t.Fatalf("as of 16h: %q, want %q", got, want)
	}
}

// A pending fact said before the current one, confirmed or raised to
// active by being said again, goes into the history: it never displaces
// what was said after it.
func TestPendingSaidEarlierNeverDisplaces(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User moved to Porto", said: hour(24), updates: true}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(0), conf: 0.7}),
		extractedAt(3, "u", fact{pred: "location", content: "User lives in Rome", said: hour(1), conf: 0.7}),
		extractedAt(4, "u", fact{pred: "location", content: "User lives in Rome.", said: hour(2), conf: 0.8}))
	lisbon := byContent(t, s, "u")["User lives in Lisbon"]
	if lisbon.Status != memory.StatusPending {
		t.Fatalf("Lisbon is %s, want pending", lisbon.Status)
	}
	mustApply(t, s, derived(5, "u", events.TypePendingConfirmed, &events.PendingDecision{MemoryID: lisbon.ID}))
	if got, want := activeContents(t, s, "u", "location"), []string{"User moved to Porto"}; !slices.Equal(got, want) {
		t.Fatalf("active %q, want %q", got, want)
	}
	want := "User lives in Lisbon: superseded by User lives in Rome until 11-01 09:00; " +
		"User lives in Rome: superseded by User moved to Porto after User lives in Lisbon until 11-02 08:00; "
	if got := chain(t, s, "u", "User lives in Lisbon", "User lives in Rome"); got != want {
		t.Fatalf("history\n got %s\nwant %s", got, want)
	}
}

// A memory written by hand may say when it was said; said before the
// current value, it goes into the history.
func TestMemoryAddedSaidEarlier(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User moved to Porto", said: hour(24), updates: true}),
		derived(2, "u", events.TypeMemoryAdded, &events.MemoryAdded{Kind: "identity", Category: "identity", Subject: "user",
			Predicate: "location", Content: "User lived in Lisbon", Importance: 0.8, Confidence: 1, SaidAt: hour(0)}),
		derived(3, "u", events.TypeMemoryAdded, &events.MemoryAdded{Kind: "identity", Category: "identity", Subject: "user",
			Predicate: "employer", Content: "User works at Acme", Importance: 0.8, Confidence: 1}))
	if got, want := activeContents(t, s, "u", "location"), []string{"User moved to Porto"}; !slices.Equal(got, want) {
		t.Fatalf("active %q, want %q", got, want)
	}
	// Without said_at, a memory is said when its event says.
	if m := byContent(t, s, "u")["User works at Acme"]; !m.SaidAt.Equal(time.Unix(3, 0)) {
		t.Fatalf("said at %v, want the event's time", m.SaidAt)
	}
}

// Events from before said_at existed still apply: a candidate without it
// was said at its event's time.
func TestCandidateWithoutSaidTimeUsesTheEventTime(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User lives in Lisbon"}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Porto"}))
	if got, want := chain(t, s, "u", "User lives in Lisbon", "User lives in Porto"),
		"User lives in Lisbon: superseded by User lives in Porto until 01-01 00:00; User lives in Porto: active after User lives in Lisbon; "; got != want {
		t.Fatalf("history\n got %s\nwant %s", got, want)
	}
	if m := byContent(t, s, "u")["User lives in Lisbon"]; !m.SaidAt.Equal(time.Unix(1, 0)) || !m.ValidTo.Equal(time.Unix(2, 0)) {
		t.Fatalf("said at %v until %v, want the events' times", m.SaidAt, m.ValidTo)
	}
}

// A preference that holds many values changes by topic: a changed habit
// replaces the values of its topic, in likes, dislikes and prefers alike,
// and leaves the others; one said before the change and learned after it
// goes into the history.
func TestChangedHabitReplacesItsTopic(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u",
			fact{pred: "likes", content: "User likes jazz", said: hour(0)},
			fact{pred: "likes", content: "User drinks coffee every morning", topic: "drinks", said: hour(0)},
			fact{pred: "dislikes", content: "User doesn't drink milk", topic: "drinks", said: hour(0)}),
		extractedAt(2, "u", fact{pred: "likes", content: "User switched to tea", topic: "drinks", said: hour(24), updates: true}),
		extractedAt(3, "u", fact{pred: "likes", content: "User drinks espresso", topic: "drinks", said: hour(12)}))
	if got, want := activeContents(t, s, "u", "likes"), []string{"User likes jazz", "User switched to tea"}; !slices.Equal(got, want) {
		t.Fatalf("active likes %q, want %q", got, want)
	}
	if got := activeContents(t, s, "u", "dislikes"); len(got) != 0 {
		t.Fatalf("active dislikes %q, want none", got)
	}
	want := "User drinks espresso: superseded by User switched to tea until 11-02 08:00; "
	if got := chain(t, s, "u", "User drinks espresso"); got != want {
		t.Fatalf("history\n got %s\nwant %s", got, want)
	}
	if got, want := asOf(t, s, "u", "likes", hour(13)), []string{"User drinks coffee every morning", "User drinks espresso", "User likes jazz"}; !slices.Equal(got, want) {
		t.Fatalf("as of 13h: %q, want %q", got, want)
	}
}

// The same events give the same read model, whatever is live and
// whatever is rebuilt: said times and their ties are decided from the
// stream alone.
func TestSaidTimeReplayIsDeterministic(t *testing.T) {
	t.Parallel()
	evs := []memory.Applied{
		extractedAt(1, "u", fact{pred: "location", content: "User moved to Porto", said: hour(24), updates: true}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(0)}),
		extractedAt(3, "u", fact{pred: "location", content: "User lives in Rome", said: hour(12)}),
		extractedAt(4, "u", fact{pred: "location", content: "User lives in Rome.", said: hour(12)}),
		extractedAt(5, "u", fact{pred: "location", content: "User lives in Oslo", said: hour(0)}),
	}
	var sums []TableSums
	for range 2 {
		s := openTest(t)
		for _, e := range evs {
			mustApply(t, s, e)
		}
		sum, _, err := s.Checksum(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	for table, sum := range sums[0] {
		if sums[1][table] != sum {
			t.Errorf("table %s differs between two replays", table)
		}
	}
}

// A fact that enters the history already superseded was never current:
// it is not a wrong write (one undone soon after it was written).
func TestLateFactIsNotAWrongWrite(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		extractedAt(1, "u", fact{pred: "location", content: "User moved to Porto", said: hour(24), updates: true}),
		extractedAt(2, "u", fact{pred: "location", content: "User lives in Lisbon", said: hour(0)}))
	st, err := s.Quality(t.Context(), "ns", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != 2 || st.WrongWrites != 0 || st.SupersededSoon != 0 {
		t.Fatalf("written %d, wrong writes %d, superseded soon %d; want 2, 0, 0", st.Written, st.WrongWrites, st.SupersededSoon)
	}
}

// A read model from before said_at (schema 10) opens with each memory
// said when it was learned, and one that superseded another marked as
// replacing; a late fact then finds its place among them.
func TestMigrationToSaidTimes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v10.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:10] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		if m.fill != nil {
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if err := m.fill(t.Context(), tx); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	lisbon, porto := hour(0).UnixNano(), hour(24).UnixNano()
	for _, stmt := range []string{
		`PRAGMA user_version = 10`,
		fmt.Sprintf(`INSERT INTO memories (id, namespace, user_id, kind, category, subject, predicate, content, importance, confidence,
			status, supersedes, superseded_by, source, source_events, created, updated, valid_to) VALUES
			('m1', 'ns', 'u', 'identity', 'identity', 'user', 'location', 'User lives in Lisbon', 0.8, 0.9, 'superseded', '', 'm2', 'rules', '[]', %d, %d, %d),
			('m2', 'ns', 'u', 'identity', 'identity', 'user', 'location', 'User moved to Porto', 0.8, 0.9, 'active', 'm1', '', 'rules', '[]', %d, %d, 0)`,
			lisbon, porto, porto, porto, porto),
		fmt.Sprintf(`INSERT INTO memory_history (memory_id, namespace, user_id, change, new, cause, time) VALUES
			('m1', 'ns', 'u', 'created', 'User lives in Lisbon', 'e1', %d)`, lisbon),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	mems := byContent(t, s, "u")
	if m := mems["User moved to Porto"]; !m.SaidAt.Equal(hour(24)) || !m.LearnedAt.Equal(hour(24)) {
		t.Fatalf("Porto said %v, learned %v; want both %v", m.SaidAt, m.LearnedAt, hour(24))
	}
	h, err := s.History(t.Context(), scopeOf("u"), "m1")
	if err != nil || len(h) != 1 || !h[0].SaidAt.Equal(hour(0)) {
		t.Fatalf("history %+v, %v: want created said at %v", h, err, hour(0))
	}
	mustApply(t, s, extractedAt(100, "u", fact{pred: "location", content: "User lives in Rome", said: hour(12)}))
	want := "User lives in Lisbon: superseded by User lives in Rome until 11-01 20:00; " +
		"User lives in Rome: superseded by User moved to Porto after User lives in Lisbon until 11-02 08:00; " +
		"User moved to Porto: active after User lives in Rome; "
	if got := chain(t, s, "u", "User lives in Lisbon", "User lives in Rome", "User moved to Porto"); got != want {
		t.Fatalf("history\n got %s\nwant %s", got, want)
	}
}
