package migrate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
)

var testOptions = Options{Namespace: "acme", User: "yangyang"}

// migrated is what one migration emitted, each event checked by
// events.Validate and kept with its decoded data.
type migrated struct {
	events []event.Event
	data   []any
	rep    *Report
}

func (m *migrated) ofType(typ string) []any {
	var out []any
	for i, e := range m.events {
		if e.Type() == typ {
			out = append(out, m.data[i])
		}
	}
	return out
}

// migrate runs fn on dir and fails the test on an error or an invalid
// event.
func migrate(t *testing.T, fn func(string, Options, func(event.Event) error) (*Report, error), dir string) *migrated {
	t.Helper()
	m := &migrated{}
	rep, err := fn(dir, testOptions, func(e event.Event) error {
		data, err := events.Validate(e)
		if err != nil {
			t.Errorf("emitted an invalid event %s: %v", e.ID(), err)
			return nil
		}
		// What goes on the wire decodes to the same event.
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := events.DecodeStructured(b, 0); err != nil {
			t.Errorf("event %s does not decode: %v", e.ID(), err)
		}
		if got, want := events.Namespace(e), testOptions.Namespace; got != want {
			t.Errorf("namespace=%q, want %q", got, want)
		}
		if got, want := events.User(e), testOptions.User; got != want {
			t.Errorf("user=%q, want %q", got, want)
		}
		if got, want := e.Source(), DefaultSource; got != want {
			t.Errorf("source=%q, want %q", got, want)
		}
		m.events = append(m.events, e)
		m.data = append(m.data, data)
		return nil
	})
	if err != nil {
		t.Fatalf("migrate %s: %v", dir, err)
	}
	if got, want := rep.Events, len(m.events); got != want {
		t.Fatalf("Report.Events=%d, but %d were emitted", got, want)
	}
	m.rep = rep
	return m
}

// copyFixture copies testdata/name into a temporary directory, so that a
// test can add what is too big to keep in the repository.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// problemFor returns the first problem starting with prefix, or fails.
func problemFor(t *testing.T, rep *Report, prefix, contains string) string {
	t.Helper()
	for _, p := range rep.Problems {
		if strings.HasPrefix(p, prefix) && strings.Contains(p, contains) {
			return p
		}
	}
	t.Fatalf("no problem starting %q and containing %q in:\n%s", prefix, contains, strings.Join(rep.Problems, "\n"))
	return ""
}

// checkProblemsShort fails if a problem quotes more than maxExcerpt
// characters of any of the given contents.
func checkProblemsShort(t *testing.T, rep *Report, contents ...string) {
	t.Helper()
	for _, c := range contents {
		long := string([]rune(c)[:maxExcerpt+1])
		for _, p := range rep.Problems {
			if strings.Contains(p, long) {
				t.Errorf("problem quotes more than %d characters of content: %s", maxExcerpt, p)
			}
		}
	}
	for _, p := range rep.Problems {
		if strings.ContainsAny(p, "\n\r") {
			t.Errorf("problem spans lines: %q", p)
		}
	}
}

func ids(m *migrated) []string {
	out := make([]string, len(m.events))
	for i, e := range m.events {
		out[i] = e.ID()
	}
	return out
}

func TestOptions(t *testing.T) {
	t.Parallel()
	emit := func(event.Event) error { return nil }
	dir := filepath.Join("testdata", "myclaw")
	for _, c := range []struct {
		name string
		dir  string
		opt  Options
	}{
		{"no user", dir, Options{Namespace: "acme"}},
		{"user with a newline", dir, Options{User: "a\nb"}},
		{"source with a space", dir, Options{User: "u", Source: "engram migrate"}},
		{"missing directory", filepath.Join(t.TempDir(), "nope"), Options{User: "u"}},
		{"a file, not a directory", filepath.Join(dir, "MEMORY.md"), Options{User: "u"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for name, fn := range map[string]func(string, Options, func(event.Event) error) (*Report, error){"myclaw": Myclaw, "openakita": OpenAkita} {
				if rep, err := fn(c.dir, c.opt, emit); err == nil {
					t.Fatalf("%s: no error; report %+v", name, rep)
				}
			}
		})
	}
}

func TestSourceOption(t *testing.T) {
	t.Parallel()
	var got []string
	_, err := Myclaw(filepath.Join("testdata", "myclaw"), Options{User: "u", Source: "urn:engram:migrate:test"}, func(e event.Event) error {
		got = append(got, e.Source())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no events")
	}
	for _, s := range got {
		if s != "urn:engram:migrate:test" {
			t.Fatalf("source=%q, want the option's", s)
		}
	}
}

// A failing emit (the stream is down) ends the migration with its error;
// what was emitted before is counted.
func TestEmitErrorStops(t *testing.T) {
	t.Parallel()
	down := errors.New("stream down")
	for name, fn := range map[string]func(string, Options, func(event.Event) error) (*Report, error){"myclaw": Myclaw, "openakita": OpenAkita} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			rep, err := fn(filepath.Join("testdata", name), testOptions, func(event.Event) error {
				calls++
				if calls == 2 {
					return down
				}
				return nil
			})
			if !errors.Is(err, down) {
				t.Fatalf("err=%v, want %v", err, down)
			}
			if got, want := calls, 2; got != want {
				t.Fatalf("emit called %d times, want %d", got, want)
			}
			if rep == nil || rep.Events != 1 {
				t.Fatalf("report=%+v, want 1 event", rep)
			}
		})
	}
}

func TestExcerptAndRedact(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("记", 100)
	if got := excerpt(long); utf8.RuneCountInString(got) > maxExcerpt+3 {
		t.Fatalf("excerpt=%q is longer than %d characters and quotes", got, maxExcerpt)
	}
	if got, want := excerpt("short"), `"short"`; got != want {
		t.Fatalf("excerpt=%s, want %s", got, want)
	}
	msg := `data.kind: must be fact or rule, not "` + strings.Repeat("x", 64) + `"…`
	got := redact(msg)
	if strings.Contains(got, strings.Repeat("x", maxExcerpt+1)) {
		t.Fatalf("redact kept more than %d characters: %s", maxExcerpt, got)
	}
	if !strings.HasPrefix(got, "data.kind: must be fact or rule, not ") {
		t.Fatalf("redact changed the message: %s", got)
	}
}
