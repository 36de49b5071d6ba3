package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	MemoryStream     = "MEMORY"
	DeadLetterStream = "DEADLETTER"
)

// Key-value buckets beside the streams (PartitionBucket is the third).
const (
	// ConfirmBucket holds the consolidator's confirm queue: one key per
	// pending firing, so the queue survives a restart and every
	// consolidator instance sees it.
	ConfirmBucket = "engram-confirm"
	// ScheduleBucket is where scheduled firings are claimed: one key per
	// rule and firing time, created by the one consolidator instance that
	// runs it, and "last", the latest firing run.
	ScheduleBucket = "engram-schedule"
)

// StreamsConfig sizes the streams and buckets. The zero value is a single
// node that keeps everything forever.
type StreamsConfig struct {
	Replicas int
	// DuplicateWindow is how long JetStream remembers a Nats-Msg-Id. Apply
	// is idempotent too, so this only saves work; it costs memory per id.
	DuplicateWindow time.Duration
	// LeaseTTL is how long a partition lease lives after its last renewal
	// (the partition bucket's TTL); DefaultLeaseTTL when zero.
	LeaseTTL time.Duration
}

func (c StreamsConfig) withDefaults() StreamsConfig {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = time.Hour
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	return c
}

// streamConfigs are MEMORY and DEADLETTER as engram sets them up.
func streamConfigs(cfg StreamsConfig) []jetstream.StreamConfig {
	cfg = cfg.withDefaults()
	return []jetstream.StreamConfig{{
		Name:        MemoryStream,
		Description: "engram: every event, the source of truth",
		Subjects:    []string{SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		// Single messages are deleted only to erase a user (Erase), whose
		// messages' bytes must be overwritten, which a purge does not do.
		// A stream created when this was true keeps it (JetStream cannot
		// undo it); Erase then purges instead.
		DenyDelete: false,
	}, {
		Name:        DeadLetterStream,
		Description: "engram: events a worker could not process, with the reason",
		Subjects:    []string{DLQSubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	}}
}

// bucketConfigs are the key-value buckets as engram sets them up.
func bucketConfigs(cfg StreamsConfig) []jetstream.KeyValueConfig {
	cfg = cfg.withDefaults()
	return []jetstream.KeyValueConfig{{
		Bucket:      PartitionBucket,
		Description: "engram: which worker instance holds which partition of the users (expiring leases)",
		History:     1,
		TTL:         cfg.LeaseTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}, {
		Bucket:      ConfirmBucket,
		Description: "engram: rule firings waiting for confirmation",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}, {
		Bucket:      ScheduleBucket,
		Description: "engram: scheduled firings claimed, and the last one run",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}}
}

// SetupMode says how far SetupStreams goes with streams that exist.
type SetupMode int

const (
	// CreateMissing creates the streams and buckets that are missing and
	// changes none that exists: an operator command (rebuild, import)
	// must not put back, unseen, what an operator changed.
	CreateMissing SetupMode = iota
	// ApplySettings also sets what engram's config decides (replicas,
	// the duplicate window, the description, the buckets), and leaves a
	// difference that drops or refuses events as it is, for an operator
	// to see and decide (engram serve's start).
	ApplySettings
	// Restore sets every field engram sets back to engram's value
	// (engram streams apply).
	Restore
)

// StreamReport is what SetupStreams found and did to one stream.
type StreamReport struct {
	Name    string
	Created bool
	// Changed were set to engram's value; Left were not (they lose
	// events: see Difference.Loses) and are still there.
	Changed, Left []Difference
}

// SetupStreams makes MEMORY, DEADLETTER and the key-value buckets as engram
// wants them, as far as mode goes. It runs as the operator: no worker may
// create or update a stream. It is idempotent.
func SetupStreams(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig, mode SetupMode) ([]StreamReport, error) {
	var out []StreamReport
	for _, want := range streamConfigs(cfg) {
		rep := StreamReport{Name: want.Name}
		s, err := js.Stream(ctx, want.Name)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			if _, err := js.CreateStream(ctx, want); err != nil {
				return out, fmt.Errorf("create stream %s: %w", want.Name, err)
			}
			rep.Created = true
		case err != nil:
			return out, fmt.Errorf("stream %s: %w", want.Name, err)
		default:
			have := s.CachedInfo().Config
			next := have
			for _, d := range Differences(have, want) {
				if mode == CreateMissing || d.Loses && mode != Restore {
					rep.Left = append(rep.Left, d)
					continue
				}
				d.set(&next, want)
				rep.Changed = append(rep.Changed, d)
			}
			// A stream already as wanted is left alone: an update races
			// consumers being created by workers already running (a data
			// race inside nats-server 2.15.2's file store, seen under -race).
			if len(rep.Changed) > 0 {
				if _, err := js.UpdateStream(ctx, next); err != nil {
					return out, fmt.Errorf("update stream %s (%v): %w", want.Name, rep.Changed, err)
				}
			}
		}
		out = append(out, rep)
	}
	for _, b := range bucketConfigs(cfg) {
		if err := setupBucket(ctx, js, b, mode); err != nil {
			return out, fmt.Errorf("key-value bucket %s: %w", b.Bucket, err)
		}
	}
	return out, nil
}

// setupBucket creates bucket b, or, unless mode is CreateMissing, updates
// it when its settings differ from b's (an update of one alike would race
// the workers using it, as a stream's does).
func setupBucket(ctx context.Context, js jetstream.JetStream, b jetstream.KeyValueConfig, mode SetupMode) error {
	kv, err := js.KeyValue(ctx, b.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		_, err = js.CreateKeyValue(ctx, b)
		return err
	}
	if err != nil || mode == CreateMissing {
		return err
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return err
	}
	have := st.Config()
	if have.Description == b.Description && have.History == b.History && have.TTL == b.TTL &&
		have.Replicas == b.Replicas && have.Storage == b.Storage {
		return nil
	}
	_, err = js.UpdateKeyValue(ctx, b)
	return err
}

// EnsureStreams is SetupStreams restoring everything, for tests and tools
// that set up a server of their own.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig) error {
	_, err := SetupStreams(ctx, js, cfg, Restore)
	return err
}

// ErrNotSetUp is returned by RequireStreams when a stream or bucket is
// missing: the operator has not run `engram streams apply` yet.
var ErrNotSetUp = errors.New("not set up")

// SetupCommand is what an operator runs to set up, or put back, engram's
// streams and buckets on an external NATS.
const SetupCommand = "engram streams apply --nats-url <url> (as the operator: ENGRAM_NATS_NKEY=<dir>/operator.nk)"

// RequireStreams checks that MEMORY, DEADLETTER and the buckets named
// exist: a worker may not create them, so one that finds one missing
// stops and says what to run. What differs in their configuration is the
// business of Differences.
func RequireStreams(ctx context.Context, js jetstream.JetStream, buckets ...string) error {
	for _, name := range []string{MemoryStream, DeadLetterStream} {
		if _, err := js.Stream(ctx, name); errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("stream %s does not exist: %w: a worker may not create streams; run %s", name, ErrNotSetUp, SetupCommand)
		} else if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
	}
	for _, b := range buckets {
		if _, err := js.KeyValue(ctx, b); errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("key-value bucket %s does not exist: %w: a worker may not create buckets; run %s", b, ErrNotSetUp, SetupCommand)
		} else if err != nil {
			return fmt.Errorf("key-value bucket %s: %w", b, err)
		}
	}
	return nil
}

// LeaseTTL is the partition bucket's TTL: how long a dead instance's
// partitions wait for another. The bucket is the operator's, so it, not a
// worker's own setting, says.
func LeaseTTL(ctx context.Context, js jetstream.JetStream) (time.Duration, error) {
	kv, err := js.KeyValue(ctx, PartitionBucket)
	if err != nil {
		return 0, fmt.Errorf("key-value bucket %s: %w", PartitionBucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("key-value bucket %s: %w", PartitionBucket, err)
	}
	return st.TTL(), nil
}

// Difference is one field of a stream's configuration that is not what
// engram set.
type Difference struct {
	Stream, Field string
	Have, Want    string
	// Loses is set when the stream as it is drops events engram keeps or
	// refuses events engram accepts (a limit, a narrower subject, memory
	// storage, rollups or per-message TTLs allowed, sealed): drift, not a
	// setting. Replicas, the duplicate window and the description only
	// differ from the config.
	Loses bool
	set   func(have *jetstream.StreamConfig, want jetstream.StreamConfig)
}

func (d Difference) String() string {
	return fmt.Sprintf("%s %s %s (engram's: %s)", d.Stream, d.Field, d.Have, d.Want)
}

// StreamConfigOf is engram's configuration of stream name (MEMORY or
// DEADLETTER) under cfg.
func StreamConfigOf(name string, cfg StreamsConfig) (jetstream.StreamConfig, bool) {
	for _, sc := range streamConfigs(cfg) {
		if sc.Name == name {
			return sc, true
		}
	}
	return jetstream.StreamConfig{}, false
}

// Differences lists how have differs from want in the fields engram sets
// and in the limits it leaves unset, losing ones first.
func Differences(have, want jetstream.StreamConfig) []Difference {
	var out []Difference
	add := func(field string, differs bool, h, w string, loses bool, set func(*jetstream.StreamConfig, jetstream.StreamConfig)) {
		if differs {
			out = append(out, Difference{Stream: want.Name, Field: field, Have: h, Want: w, Loses: loses, set: set})
		}
	}
	limit := func(n int64) string {
		if n <= 0 {
			return "unlimited"
		}
		return strconv.FormatInt(n, 10)
	}
	unlimited := func(n int64) bool { return n <= 0 }
	age := func(d time.Duration) string {
		if d <= 0 {
			return "unlimited"
		}
		return d.String()
	}
	add("subjects", !slices.Equal(have.Subjects, want.Subjects), fmt.Sprint(have.Subjects), fmt.Sprint(want.Subjects), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Subjects = w.Subjects })
	add("retention", have.Retention != want.Retention, have.Retention.String(), want.Retention.String(), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Retention = w.Retention })
	add("storage", have.Storage != want.Storage, have.Storage.String(), want.Storage.String(), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Storage = w.Storage })
	add("max_msgs", unlimited(have.MaxMsgs) != unlimited(want.MaxMsgs) || have.MaxMsgs > 0 && have.MaxMsgs != want.MaxMsgs,
		limit(have.MaxMsgs), limit(want.MaxMsgs), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.MaxMsgs = w.MaxMsgs })
	add("max_bytes", unlimited(have.MaxBytes) != unlimited(want.MaxBytes) || have.MaxBytes > 0 && have.MaxBytes != want.MaxBytes,
		limit(have.MaxBytes), limit(want.MaxBytes), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.MaxBytes = w.MaxBytes })
	add("max_age", have.MaxAge != want.MaxAge, age(have.MaxAge), age(want.MaxAge), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.MaxAge = w.MaxAge })
	add("max_msgs_per_subject", unlimited(have.MaxMsgsPerSubject) != unlimited(want.MaxMsgsPerSubject) ||
		have.MaxMsgsPerSubject > 0 && have.MaxMsgsPerSubject != want.MaxMsgsPerSubject,
		limit(have.MaxMsgsPerSubject), limit(want.MaxMsgsPerSubject), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.MaxMsgsPerSubject = w.MaxMsgsPerSubject })
	add("max_msg_size", unlimited(int64(have.MaxMsgSize)) != unlimited(int64(want.MaxMsgSize)) ||
		have.MaxMsgSize > 0 && have.MaxMsgSize != want.MaxMsgSize,
		limit(int64(have.MaxMsgSize)), limit(int64(want.MaxMsgSize)), true,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.MaxMsgSize = w.MaxMsgSize })
	flag := func(field string, h, w bool, set func(*jetstream.StreamConfig, jetstream.StreamConfig)) {
		add(field, h != w, strconv.FormatBool(h), strconv.FormatBool(w), true, set)
	}
	flag("sealed", have.Sealed, want.Sealed, func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Sealed = w.Sealed })
	flag("no_ack", have.NoAck, want.NoAck, func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.NoAck = w.NoAck })
	flag("allow_rollup_hdrs", have.AllowRollup, want.AllowRollup,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.AllowRollup = w.AllowRollup })
	flag("allow_msg_ttl", have.AllowMsgTTL, want.AllowMsgTTL,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.AllowMsgTTL = w.AllowMsgTTL })
	add("description", have.Description != want.Description, strconv.Quote(have.Description), strconv.Quote(want.Description), false,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Description = w.Description })
	add("replicas", have.Replicas != want.Replicas, strconv.Itoa(have.Replicas), strconv.Itoa(want.Replicas), false,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Replicas = w.Replicas })
	add("duplicate_window", have.Duplicates != want.Duplicates, have.Duplicates.String(), want.Duplicates.String(), false,
		func(c *jetstream.StreamConfig, w jetstream.StreamConfig) { c.Duplicates = w.Duplicates })
	return out
}

// DeadLetterDifferences is how DEADLETTER, as the server last told js of
// it, differs from engram's under cfg (Differences).
func DeadLetterDifferences(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig) ([]Difference, error) {
	s, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return nil, err
	}
	want, _ := StreamConfigOf(DeadLetterStream, cfg)
	return Differences(s.CachedInfo().Config, want), nil
}
