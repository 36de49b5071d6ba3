package migrate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
)

// DefaultSource is the CloudEvents source of migrated events when Options
// names none.
const DefaultSource = "engram/migrate"

// Options says whose memories a migration makes.
type Options struct {
	Namespace string // events.DefaultNamespace when empty
	User      string // required
	// Source is the CloudEvents source of every event, DefaultSource when
	// empty. With the id it is the dedup key, so keep it across re-runs.
	Source string
}

// Report is what a migration did.
type Report struct {
	Files   int // files read
	Events  int // events emitted
	Skipped int // records left out; each has a problem
	// Problems are "file:line: what" (or "file: what" for a whole file),
	// the file relative to DIR. A problem may also note something done
	// that is not a skip, such as a summary cut to its limit.
	Problems []string
}

// maxExcerpt bounds the content a problem may quote, in characters.
const maxExcerpt = 40

// maxLineBytes bounds the lines read: a JSON escape shrinks at most
// threefold (\ud83d\ude00 is 4 bytes), so no longer line can make an event
// within events.DefaultMaxEventBytes, and holding it would only cost memory.
const maxLineBytes = 4 * events.DefaultMaxEventBytes

// run is one migration: where it reads, whom it writes for, and what it
// has done.
type run struct {
	dir, system string
	namespace   string
	opt         Options
	emit        func(event.Event) error
	rep         *Report
}

func newRun(system, dir string, opt Options, emit func(event.Event) error) (*run, error) {
	if opt.Source == "" {
		opt.Source = DefaultSource
	}
	ns := opt.Namespace
	if ns == "" {
		ns = events.DefaultNamespace
	}
	if emit == nil {
		return nil, errors.New("migrate: no emit function")
	}
	// One probe event checks namespace, user and source before any file is
	// read, rather than failing every record for the same reason.
	if _, err := events.NewDerived(opt.Source, events.TypeUserForgotten, "probe", ns, opt.User, time.Unix(0, 0), events.UserForgotten{}); err != nil {
		return nil, fmt.Errorf("migrate %s: options: %w", system, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", system, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("migrate %s: %s is not a directory", system, dir)
	}
	return &run{dir: dir, system: system, namespace: ns, opt: opt, emit: emit, rep: &Report{}}, nil
}

// rel names a file in problems and ids: its path under DIR, with forward
// slashes so that ids are the same on every OS.
func (r *run) rel(path string) string {
	p, err := filepath.Rel(r.dir, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(p)
}

// problem notes something about file at line (0 for the whole file).
func (r *run) problem(file string, line int, format string, args ...any) {
	where := file
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	r.rep.Problems = append(r.rep.Problems, where+": "+fmt.Sprintf(format, args...))
}

// skip notes a record left out.
func (r *run) skip(file string, line int, format string, args ...any) {
	r.rep.Skipped++
	r.problem(file, line, format, args...)
}

// id derives an event's id from whose it is, where the record is, and
// what it holds.
func (r *run) id(file, locator, record string) string {
	sum := sha256.Sum256([]byte(record))
	h := sha256.New()
	for _, part := range []string{r.namespace, r.opt.User, r.system, file, locator, string(sum[:])} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "migrate-" + r.system + "-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// publish builds an event and emits it. A record that makes no valid
// event, or one over the size limit, is skipped; only emit's error is
// returned, and it ends the migration.
func (r *run) publish(file string, line int, eventType, id string, t time.Time, data any) error {
	e, err := events.NewDerived(r.opt.Source, eventType, id, r.namespace, r.opt.User, t, data)
	if err != nil {
		msg := err.Error()
		var fe *events.FieldError
		if errors.As(err, &fe) {
			msg = fe.Error() // without NewDerived's "new <type> event: "
		}
		r.skip(file, line, "not a valid %s event: %s", eventType, redact(msg))
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		r.skip(file, line, "encode %s event: %s", eventType, redact(err.Error()))
		return nil
	}
	if len(b) > events.DefaultMaxEventBytes {
		r.skip(file, line, "the %s event would be %d bytes; the limit is %d", eventType, len(b), events.DefaultMaxEventBytes)
		return nil
	}
	if err := r.emit(e); err != nil {
		return fmt.Errorf("migrate %s: emit %s (%s:%d): %w", r.system, e.ID(), file, line, err)
	}
	r.rep.Events++
	return nil
}

// excerpt quotes at most maxExcerpt characters of s for a problem.
func excerpt(s string) string {
	if cut := chars.CutRunes(s, maxExcerpt); len(cut) < len(s) {
		return strconv.Quote(cut) + chars.Ellipsis
	}
	return strconv.Quote(s)
}

// quoted matches what events quotes in its errors: a Go-quoted string,
// maybe cut ("…").
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"…?`)

// redact cuts every quoted value in an error message to an excerpt: an
// error may quote up to 64 bytes of a value, more than a problem may show.
func redact(msg string) string {
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(strings.TrimSuffix(q, "…"))
		if err != nil {
			return `"…"`
		}
		return excerpt(s)
	})
}

// line is one line of a file, without its end of line.
type line struct {
	n       int    // 1-based
	text    []byte // nil when too long
	tooLong int    // the line's length when it was over maxLineBytes
}

// eachLine calls fn for each line of rd. A line over maxLineBytes is
// passed with text nil and its length, so that one huge line costs no
// memory and does not stop the file.
func eachLine(rd io.Reader, fn func(line) error) error {
	br := bufio.NewReaderSize(rd, 64<<10)
	for n := 1; ; n++ {
		var buf []byte
		size := 0
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			size += len(chunk)
			if size <= maxLineBytes {
				buf = append(buf, chunk...)
			} else {
				buf = nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if size == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		l := line{n: n, text: bytes.TrimRight(buf, "\r\n")}
		if size > maxLineBytes {
			l = line{n: n, tooLong: size}
		}
		if ferr := fn(l); ferr != nil {
			return ferr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// modTime is a file's modification time, the time of events whose record
// has none. A time RFC 3339 cannot carry becomes the Unix epoch.
func modTime(info os.FileInfo) time.Time {
	t := info.ModTime().UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Unix(0, 0).UTC()
	}
	return t
}

// validID says whether s follows events' identifier rules, so that an
// optional field can be left out instead of failing the record.
func validID(s string, limit int) bool {
	if s == "" || len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}

// Time layouts of other systems' timestamps: RFC 3339, and Python's
// isoformat with and without a zone (a naive one is taken as UTC).
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// parseTime reads a timestamp written as a string in one of timeLayouts,
// or as Unix seconds or milliseconds.
func parseTime(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	var t time.Time
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		s = strings.TrimSpace(s)
		ok := false
		for _, layout := range timeLayouts {
			if v, err := time.Parse(layout, s); err == nil {
				t, ok = v, true
				break
			}
		}
		if !ok {
			return time.Time{}, false
		}
	} else {
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f <= 0 {
			return time.Time{}, false
		}
		if f > 1e12 { // milliseconds
			f /= 1000
		}
		sec := int64(f)
		t = time.Unix(sec, int64((f-float64(sec))*1e9))
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 || t.IsZero() {
		return time.Time{}, false
	}
	return t, true
}
