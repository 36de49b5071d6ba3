package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Scheduled firings are claimed in stream.ScheduleBucket; its key "last",
// the latest firing run, is where a consolidator that starts catches up
// from on what fell due while none ran.

const lastFiringKey = "last"

// firings claims scheduled firings across consolidator instances.
type firings struct {
	kv  jetstream.KeyValue
	log *zap.Logger
}

func (a *App) openFirings(ctx context.Context, log *zap.Logger) (*firings, error) {
	kv, err := a.bus(stream.RoleConsolidator).js.KeyValue(ctx, stream.ScheduleBucket)
	if err != nil {
		return nil, err
	}
	return &firings{kv: kv, log: log}, nil
}

// since is when the schedule last ran anywhere; the zero time when it
// never has (nothing to catch up on).
func (f *firings) since(ctx context.Context) time.Time {
	e, err := f.kv.Get(ctx, lastFiringKey)
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			f.log.Warn("read the last scheduled firing; not catching up", zap.Error(err))
		}
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, string(e.Value()))
	if err != nil {
		f.log.Warn("last scheduled firing", zap.Error(err))
		return time.Time{}
	}
	return at
}

// claim reports whether this instance runs firing fr: the first to create
// its key does. When the bucket cannot be reached it runs the firing: a
// job's events have ids of the job, user and firing time, so a second run
// publishes nothing new, while a skipped one is lost.
func (f *firings) claim(ctx context.Context, fr rules.Firing) bool {
	key := "fired." + firingKey(fr.Rule.Name) + "." + strconv.FormatInt(fr.At.Unix(), 10)
	_, err := f.kv.Create(ctx, key, []byte(fr.At.UTC().Format(time.RFC3339Nano)))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false
	}
	if err != nil {
		f.log.Warn("claim a scheduled firing; running it", zap.String("rule", fr.Rule.Name), zap.Error(err))
		return true
	}
	f.advance(ctx, fr.At)
	return true
}

// advance moves "last" forward to at (never back), with compare-and-set
// so two instances do not overwrite each other.
func (f *firings) advance(ctx context.Context, at time.Time) {
	val := []byte(at.UTC().Format(time.RFC3339Nano))
	for range 5 {
		e, err := f.kv.Get(ctx, lastFiringKey)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err = f.kv.Create(ctx, lastFiringKey, val); err == nil {
				return
			}
		case err != nil:
			f.log.Warn("record the last scheduled firing", zap.Error(err))
			return
		default:
			if prev, perr := time.Parse(time.RFC3339Nano, string(e.Value())); perr == nil && !prev.Before(at) {
				return
			}
			if _, err = f.kv.Update(ctx, lastFiringKey, val, e.Revision()); err == nil {
				return
			}
		}
	}
}

// firingKey is a rule name as a key token (rule names are plain; a hash
// covers any that is not).
func firingKey(name string) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			h := sha256.Sum256([]byte(name))
			return "h" + hex.EncodeToString(h[:8])
		}
	}
	return name
}
