package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// LastFiringKey is the key of ScheduleBucket, where scheduled firings are
// claimed, that holds the latest firing run: a consolidator that starts
// catches up from there on what fell due while none ran.
const LastFiringKey = "last"

// Firings claims scheduled firings across consolidator instances.
type Firings struct {
	kv  jetstream.KeyValue
	log *zap.Logger
}

// OpenFirings binds the schedule's bucket (ScheduleBucket, the
// operator's: SetupStreams).
func OpenFirings(ctx context.Context, js jetstream.JetStream, log *zap.Logger) (*Firings, error) {
	kv, err := js.KeyValue(ctx, ScheduleBucket)
	if err != nil {
		return nil, err
	}
	return &Firings{kv: kv, log: log}, nil
}

// Since is when the schedule last ran anywhere; the zero time when it
// never has (nothing to catch up on).
func (f *Firings) Since(ctx context.Context) time.Time {
	e, err := f.kv.Get(ctx, LastFiringKey)
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

// Claim reports whether this instance runs the firing of rule at at: the first to create
// its key does. When the bucket cannot be reached it runs the firing: a
// job's events have ids of the job, user and firing time, so a second run
// publishes nothing new, while a skipped one is lost.
func (f *Firings) Claim(ctx context.Context, rule string, at time.Time) bool {
	key := "fired." + firingKey(rule) + "." + strconv.FormatInt(at.Unix(), 10)
	_, err := f.kv.Create(ctx, key, []byte(at.UTC().Format(time.RFC3339Nano)))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false
	}
	if err != nil {
		f.log.Warn("claim a scheduled firing; running it", zap.String("rule", rule), zap.Error(err))
		return true
	}
	f.advance(ctx, at)
	return true
}

// advance moves "last" forward to at (never back), with compare-and-set
// so two instances do not overwrite each other.
func (f *Firings) advance(ctx context.Context, at time.Time) {
	val := []byte(at.UTC().Format(time.RFC3339Nano))
	for range 5 {
		e, err := f.kv.Get(ctx, LastFiringKey)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err = f.kv.Create(ctx, LastFiringKey, val); err == nil {
				return
			}
		case err != nil:
			f.log.Warn("record the last scheduled firing", zap.Error(err))
			return
		default:
			if prev, perr := time.Parse(time.RFC3339Nano, string(e.Value())); perr == nil && !prev.Before(at) {
				return
			}
			if _, err = f.kv.Update(ctx, LastFiringKey, val, e.Revision()); err == nil {
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
