package app

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports how far a long operator command (rebuild, migrate) has
// come: a bar on a terminal, plain lines anywhere else (a pipe, a file, a
// CI log), where a bar's carriage returns would print nothing useful.
type progress interface {
	Set(done int64)
	Finish()
}

// newProgress writes to w; nil w reports nothing.
func newProgress(w io.Writer, total int64, what string) progress {
	if w == nil {
		return nopProgress{}
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return barProgress{progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("events"),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())}
	}
	return &lineProgress{w: w, total: total, what: what, every: 2 * time.Second}
}

type nopProgress struct{}

func (nopProgress) Set(int64) {}
func (nopProgress) Finish()   {}

type barProgress struct{ bar *progressbar.ProgressBar }

func (b barProgress) Set(done int64) { _ = b.bar.Set64(done) }
func (b barProgress) Finish()        { _ = b.bar.Finish() }

// lineProgress prints "what: done/total events (pct%)" at most every
// interval, and once at the end.
type lineProgress struct {
	w           io.Writer
	total, done int64
	what        string
	every       time.Duration
	last        time.Time
	printed     int64
}

func (p *lineProgress) Set(done int64) {
	p.done = done
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.print()
	}
}

func (p *lineProgress) Finish() {
	if p.printed != p.done || p.last.IsZero() {
		p.print()
	}
}

func (p *lineProgress) print() {
	pct := int64(100)
	if p.total > 0 {
		pct = p.done * 100 / p.total
	}
	fmt.Fprintf(p.w, "%s: %d/%d events (%d%%)\n", p.what, p.done, p.total, pct)
	p.printed = p.done
}
