package rules

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Watcher keeps the rules of a directory loaded: it polls the files and
// reloads when their names or contents change. A reload that fails keeps
// the last good Set running and reports the errors through onError, once
// per broken version of the files. Current is safe from any goroutine.
//
// It polls rather than using inotify so it needs no dependency and works
// on every file system, network and container mounts included; the files
// are small, so comparing their contents each interval costs little and,
// unlike comparing modification times, misses no edit however quick.
type Watcher struct {
	dir      string
	known    []string
	interval time.Duration
	onError  func(error)
	log      *zap.Logger

	cur  atomic.Pointer[Set]
	last [sha256.Size]byte // fingerprint of the files last tried
	// waiting is true while dir has never existed and the fallback rules
	// given to NewWatcherOr are in force.
	waiting bool
}

// DefaultPollInterval is how often a Watcher looks at its files when given
// an interval ≤ 0.
const DefaultPollInterval = 2 * time.Second

// NewWatcher loads dir and returns a Watcher holding the result. A first
// load that fails is an error: there is no last good Set to fall back on,
// and a worker that ran with no rules would silently stop consolidating.
// onError may be nil; log may be nil.
func NewWatcher(dir string, knownTypes []string, interval time.Duration, onError func(error), log *zap.Logger) (*Watcher, error) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	if onError == nil {
		onError = func(error) {}
	}
	if log == nil {
		log = zap.NewNop()
	}
	w := &Watcher{dir: dir, known: knownTypes, interval: interval, onError: onError, log: log.Named("rules")}
	srcs, err := readPath(dir)
	if err != nil {
		return nil, err
	}
	set, err := build(srcs, knownTypes)
	if err != nil {
		return nil, err
	}
	w.last = fingerprint(srcs)
	w.cur.Store(set)
	w.log.Info("rules loaded", zap.String(logDir, dir), zap.Int(logRules, len(set.Rules)), zap.Int(logFiles, len(set.Files)))
	return w, nil
}

// NewWatcherOr is NewWatcher for a directory that may not exist yet:
// while it does not, fallback is in force, and the first version of it
// that loads takes over (an operator who creates the directory after
// engram started need not restart it). Once it has loaded, the directory
// is watched as NewWatcher's is.
func NewWatcherOr(dir string, knownTypes []string, interval time.Duration, fallback *Set, onError func(error), log *zap.Logger) (*Watcher, error) {
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return NewWatcher(dir, knownTypes, interval, onError, log)
	}
	if onError == nil {
		onError = func(error) {}
	}
	if log == nil {
		log = zap.NewNop()
	}
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	w := &Watcher{dir: dir, known: knownTypes, interval: interval, onError: onError, log: log.Named("rules"), waiting: true}
	w.cur.Store(fallback)
	w.log.Info("no rules directory yet; the built-in rules are in force until it is created",
		zap.String(logDir, dir), zap.Int(logRules, len(fallback.Rules)))
	return w, nil
}

// Log field keys.
const (
	logDir   = "dir"
	logRules = "rules"
	logFiles = "files"
)

// Current returns the Set in force.
func (w *Watcher) Current() *Set { return w.cur.Load() }

// Run polls until ctx ends, then returns nil. Call it once.
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.poll()
		}
	}
}

// poll reloads when the files changed since the last attempt.
func (w *Watcher) poll() {
	if w.waiting {
		if _, err := os.Stat(w.dir); errors.Is(err, fs.ErrNotExist) {
			return
		}
		w.waiting = false
	}
	srcs, readErr := readPath(w.dir)
	sum := fingerprint(srcs)
	if readErr != nil {
		// An unreadable directory fingerprints as its error, so a
		// lasting fault is reported once.
		sum = sha256.Sum256([]byte(readErr.Error()))
	}
	if sum == w.last {
		return
	}
	w.last = sum
	err := readErr
	var set *Set
	if err == nil {
		set, err = build(srcs, w.known)
	}
	if err != nil {
		var es Errors
		n := 1
		if errors.As(err, &es) {
			n = len(es)
		}
		w.log.Warn("rules not reloaded; the previous rules keep running", zap.String(logDir, w.dir), zap.Int("errors", n), zap.Error(err))
		w.onError(err)
		return
	}
	w.cur.Store(set)
	w.log.Info("rules reloaded", zap.String(logDir, w.dir), zap.Int(logRules, len(set.Rules)), zap.Int(logFiles, len(set.Files)))
}

func fingerprint(srcs []source) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range srcs {
		// Lengths first, so no two lists of files hash alike.
		var n [16]byte
		binary.LittleEndian.PutUint64(n[:8], uint64(len(s.name)))
		binary.LittleEndian.PutUint64(n[8:], uint64(len(s.data)))
		h.Write(n[:])
		h.Write([]byte(s.name))
		h.Write(s.data)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
