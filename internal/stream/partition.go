package stream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// PartitionOf is the partition, of n, that holds a user's work: every
// event of one user is handled by the one instance that holds it.
func PartitionOf(namespace, user string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(user))
	return int(h.Sum32() % uint32(n))
}

// KeepPartition is a reader's filter for partition p of n: the events of
// p's users, and those that name no user. A partition's copy and its
// rebuild read with the same one, so they read the same events.
func KeepPartition(p, n int) func(subject string) bool {
	return func(subject string) bool {
		q, ok := PartitionOfSubject(subject, n)
		return !ok || q == p
	}
}

// PartitionOfSubject is the partition, of n, of the user whose event is
// on subject (mem.<namespace>.<user>.<type>), read from the subject
// alone: a reader passes over other partitions' messages without
// decoding them. ok is false for a subject that names no user.
func PartitionOfSubject(subject string, n int) (p int, ok bool) {
	rest, found := strings.CutPrefix(subject, SubjectPrefix+".")
	if !found {
		return 0, false
	}
	encNS, rest, found := strings.Cut(rest, ".")
	if !found {
		return 0, false
	}
	encUser, _, found := strings.Cut(rest, ".")
	if !found {
		return 0, false
	}
	ns, err := DecodeToken(encNS)
	if err != nil {
		return 0, false
	}
	user, err := DecodeToken(encUser)
	if err != nil {
		return 0, false
	}
	return PartitionOf(ns, user, n), true
}

// PartitionDurable is the durable consumer of partition p of n of a
// group's base consumer: the base name itself when there is one
// partition, so a single instance keeps the consumer it always had.
func PartitionDurable(base string, p, n int) string {
	if n <= 1 {
		return base
	}
	return fmt.Sprintf("%s-%dof%d", base, p+1, n)
}

// PartitionBucket is the key-value bucket of partition leases. Its keys,
// per group (extractor, consolidator): <group>.p.<i>, the instance that
// holds partition i; <group>.m.<instance>, each live instance; <group>.n,
// the number of partitions the group's instances agree on. Every key
// lives for the bucket's TTL after its last write, so a dead instance's
// partitions and membership expire by themselves.
const PartitionBucket = "engram-partitions"

// RetentionGroup is the partition group of raw-turn retention, which the
// consolidators share apart from their own.
const RetentionGroup = "retention"

// CardsGroup is the one-partition group of the consolidators' cards: its
// holder alone writes every user's cards and reads their edits back.
const CardsGroup = "cards"

// DefaultLeaseTTL is how long a dead instance's partitions wait before
// another instance takes them.
const DefaultLeaseTTL = 10 * time.Second

// LeaseConfig configures an instance's share of a group's partitions.
type LeaseConfig struct {
	Group    string
	Instance string // unique per instance (the config's instance name)
	N        int    // partitions; the same on every instance of the group
	// Probe, when set, is how often the other members are asked whether
	// they are still on the bus; one gone is evicted before its leases
	// expire (alive.go). Only for groups whose work two instances may
	// briefly share.
	Probe time.Duration
}

// Leases holds this instance's fair share of a group's partitions: the
// partitions divided by the live instances, rounded up. An instance that
// joins takes the partitions the others let go of; an instance that dies
// stops renewing, and its partitions are taken after the TTL.
type Leases struct {
	nc  *nats.Conn
	kv  jetstream.KeyValue
	cfg LeaseConfig
	ttl time.Duration // the bucket's
	log *zap.Logger
	// members are the membership keys the last round listed, and those of
	// the holders of what it could not take (holds), which the probes
	// between rounds ask (Run's goroutine alone uses it).
	members []string
}

// OpenLeases opens the lease bucket (the operator makes it: SetupStreams)
// and checks that the group's live instances agree on the number of
// partitions. A lease lives as long as the bucket's TTL says.
func OpenLeases(ctx context.Context, js jetstream.JetStream, cfg LeaseConfig, log *zap.Logger) (*Leases, error) {
	if cfg.N < 1 {
		return nil, fmt.Errorf("partitions of %s: %d, want at least 1", cfg.Group, cfg.N)
	}
	if cfg.Instance == "" {
		return nil, fmt.Errorf("partitions of %s: the instance has no name", cfg.Group)
	}
	kv, err := js.KeyValue(ctx, PartitionBucket)
	if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	ttl := st.TTL()
	if ttl <= 0 {
		return nil, fmt.Errorf("partition bucket %s has no TTL: a dead instance's partitions would never be taken over; run %s", PartitionBucket, SetupCommand)
	}
	l := &Leases{nc: js.Conn(), kv: kv, cfg: cfg, ttl: ttl, log: log.With(zap.String("group", cfg.Group), zap.String("instance", cfg.Instance))}
	n := []byte(strconv.Itoa(cfg.N))
	if _, err := kv.Create(ctx, l.key("n"), n); errors.Is(err, jetstream.ErrKeyExists) {
		e, gerr := kv.Get(ctx, l.key("n"))
		if gerr == nil && string(e.Value()) != string(n) {
			return nil, fmt.Errorf("partitions: this %s instance has %d, the running ones %s: "+
				"every instance of a group needs the same number (change it only with all of them stopped)",
				cfg.Group, cfg.N, e.Value())
		}
	} else if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	return l, nil
}

func (l *Leases) key(parts ...string) string {
	k := l.cfg.Group
	for _, p := range parts {
		k += "." + p
	}
	return k
}

func (l *Leases) partKey(p int) string { return l.key("p", strconv.Itoa(p)) }

// held is a partition this instance holds.
type held struct {
	rev     uint64
	renewed time.Time
	cancel  context.CancelFunc
	done    chan struct{}
}

// Run holds a fair share of the partitions until ctx ends, running own
// for each partition while it is held, in its own goroutine: own's
// context ends when the partition is lost or given up, and the lease is
// released only after own has returned, so two instances never work on
// one partition at once. At the end every lease is released, so the
// other instances take the partitions at once.
func (l *Leases) Run(ctx context.Context, own func(ctx context.Context, p int)) {
	owned := map[int]*held{}
	var wg sync.WaitGroup
	stop := func(p int, release bool) {
		h := owned[p]
		delete(owned, p)
		h.cancel()
		<-h.done
		if release {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := l.kv.Delete(rctx, l.partKey(p), jetstream.LastRevision(h.rev)); err != nil {
				l.log.Warn("release partition", zap.Int("partition", p), zap.Error(err))
			}
		}
		l.log.Info("partition given up", zap.Int("partition", p), zap.Bool("released", release))
	}
	start := func(p int, rev uint64) {
		pctx, cancel := context.WithCancel(ctx)
		h := &held{rev: rev, renewed: time.Now(), cancel: cancel, done: make(chan struct{})}
		owned[p] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(h.done)
			own(pctx, p)
		}()
		l.log.Info("partition taken", zap.Int("partition", p))
	}
	// Rounds come every quarter TTL; probes, when the group probes, as
	// often as it says, and a round follows an eviction at once.
	every, missed := l.ttl/4, map[string]miss{}
	if l.cfg.Probe > 0 {
		every = min(every, l.cfg.Probe)
		if unanswer, err := l.answerAlive(); err != nil {
			l.log.Warn("alive subject: if this instance dies, its partitions move only when its leases expire", zap.Error(err))
		} else {
			defer unanswer()
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var roundAt time.Time
	for {
		evicted := l.cfg.Probe > 0 && l.probe(ctx, missed)
		// By the clock, not by ticks: probes of slow members can take
		// ticks of their own. A round is due when the next tick would
		// come after a quarter TTL.
		if evicted || roundAt.IsZero() || time.Since(roundAt) > l.ttl/4-every {
			roundAt = time.Now()
			l.round(ctx, owned, start, stop)
		}
		select {
		case <-ctx.Done():
			for p := range owned {
				stop(p, true)
			}
			wg.Wait()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = l.kv.Delete(rctx, l.key("m", EncodeToken(l.cfg.Instance)))
			cancel()
			return
		case <-tick.C:
		}
	}
}

// round renews what is held, then gives up or takes partitions to hold
// the fair share.
func (l *Leases) round(ctx context.Context, owned map[int]*held, start func(int, uint64), stop func(int, bool)) {
	me := []byte(l.cfg.Instance)
	if _, err := l.kv.Put(ctx, l.key("m", EncodeToken(l.cfg.Instance)), me); err != nil && ctx.Err() == nil {
		l.log.Warn("partition membership", zap.Error(err))
	}
	if _, err := l.kv.Put(ctx, l.key("n"), []byte(strconv.Itoa(l.cfg.N))); err != nil && ctx.Err() == nil {
		l.log.Warn("partition count", zap.Error(err))
	}
	for p, h := range owned {
		rev, err := l.kv.Update(ctx, l.partKey(p), me, h.rev)
		switch {
		case err == nil:
			h.rev, h.renewed = rev, time.Now()
		case ctx.Err() != nil:
			return
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists):
			// Taken by another, or expired: someone else may work on it now.
			l.log.Warn("partition lost", zap.Int("partition", p), zap.Error(err))
			stop(p, false)
		case time.Since(h.renewed) > l.ttl/2:
			// Not renewed for half the TTL: it may expire before the next
			// try, and then another instance takes it.
			l.log.Warn("partition not renewed; giving it up", zap.Int("partition", p), zap.Error(err))
			stop(p, false)
		}
	}
	fair := l.fairShare(ctx)
	for p := l.cfg.N - 1; p >= 0 && len(owned) > fair; p-- {
		if owned[p] != nil {
			stop(p, true)
		}
	}
	// Each instance looks first where its name points, so instances that
	// start together do not all race for partition 0.
	first := PartitionOf("", l.cfg.Instance, l.cfg.N)
	for i := 0; i < l.cfg.N && len(owned) < fair && ctx.Err() == nil; i++ {
		p := (first + i) % l.cfg.N
		if owned[p] != nil {
			continue
		}
		rev, err := l.kv.Create(ctx, l.partKey(p), me)
		if errors.Is(err, jetstream.ErrKeyExists) {
			if e, gerr := l.kv.Get(ctx, l.partKey(p)); gerr == nil {
				if string(e.Value()) == l.cfg.Instance {
					// Still ours from before a restart: taken back at once.
					rev, err = l.kv.Update(ctx, l.partKey(p), me, e.Revision())
				} else {
					l.holds(string(e.Value()))
				}
			}
		}
		if err != nil {
			if !errors.Is(err, jetstream.ErrKeyExists) && ctx.Err() == nil {
				l.log.Warn("take partition", zap.Int("partition", p), zap.Error(err))
			}
			continue
		}
		start(p, rev)
	}
}

// holds notes that instance holds a partition: one that joined since the
// round listed the members would otherwise go unprobed until the next
// round, and its death be seen a round late.
func (l *Leases) holds(instance string) {
	k := l.key("m", EncodeToken(instance))
	if !slices.Contains(l.members, k) {
		l.members = append(l.members, k)
	}
}

// fairShare is the partitions divided by the live instances, rounded up.
func (l *Leases) fairShare(ctx context.Context) int {
	lister, err := l.kv.ListKeysFiltered(ctx, l.key("m", "*"))
	if err == nil {
		l.members = l.members[:0]
		for k := range lister.Keys() {
			l.members = append(l.members, k)
		}
	}
	members := max(len(l.members), 1)
	return (l.cfg.N + members - 1) / members
}

// Members are the live instances of group: those that renewed their
// membership within the lease TTL (a stopped one removes its own).
func Members(ctx context.Context, js jetstream.JetStream, group string) ([]string, error) {
	kv, err := js.KeyValue(ctx, PartitionBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	lister, err := kv.ListKeysFiltered(ctx, group+".m.*")
	if err != nil {
		return nil, fmt.Errorf("members of %s: %w", group, err)
	}
	var out []string
	for k := range lister.Keys() {
		if e, err := kv.Get(ctx, k); err == nil {
			out = append(out, string(e.Value()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Held is, per partition of group, the instance that holds it now.
func Held(ctx context.Context, js jetstream.JetStream, group string) (map[int]string, error) {
	kv, err := js.KeyValue(ctx, PartitionBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return map[int]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	lister, err := kv.ListKeysFiltered(ctx, group+".p.*")
	if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", group, err)
	}
	out := map[int]string{}
	for k := range lister.Keys() {
		p, err := strconv.Atoi(k[len(group)+3:])
		if err != nil {
			continue
		}
		if e, err := kv.Get(ctx, k); err == nil {
			out[p] = string(e.Value())
		}
	}
	return out, nil
}

// Partition states. An instance that keeps a copy of a partition (a
// retriever's read model of it) says how far the copy is under
// <group>.s.<partition>.<instance>, every round of its leases: the key
// expires with the instance, like its leases. The routers read whether
// someone serves a partition; the operators read who holds what, how far
// behind and how far a build has come (engram stats --partitions).
const (
	// StateBuilding is a copy still reading the stream up to where it
	// was when the partition was taken: it answers only when no copy
	// serves, and then says it is incomplete.
	StateBuilding = "building"
	// StateServing is a copy that has caught up with the stream.
	StateServing = "serving"
)

// PartitionState is what an instance says of its copy of a partition.
type PartitionState struct {
	Partition int    `json:"partition"`
	Instance  string `json:"instance"`
	State     string `json:"state"`
	// Held says the instance holds the partition's lease. A copy serves
	// without it while it hands the partition over: the instance that
	// took it serves once its own copy has caught up.
	Held bool `json:"held"`
	// Position is the last stream sequence the copy has applied or
	// passed over; Target, while building, the stream's last sequence
	// when the build began; Head the stream's last sequence when this
	// was written.
	Position uint64 `json:"position"`
	Target   uint64 `json:"target,omitempty"`
	Head     uint64 `json:"head"`
	// Users and Rows count what the copy holds (rows per table), Bytes
	// its size on disk.
	Users int              `json:"users"`
	Rows  map[string]int64 `json:"rows,omitempty"`
	Bytes int64            `json:"bytes"`
	// URL is the base URL at which the instance's API answers for the
	// copy (config's http.advertise_url): a front forwards the copy's
	// users' requests there; "" when the instance advertises none, and
	// the front forwards over NATS.
	URL string `json:"url,omitempty"`
}

// Lag is how many events of the stream the copy has yet to read.
func (s PartitionState) Lag() uint64 { return s.Head - min(s.Position, s.Head) }

func (l *Leases) stateKey(p int, instance string) string {
	return l.key("s", strconv.Itoa(p), EncodeToken(instance))
}

// PutState publishes this instance's state of its copy of a partition.
func (l *Leases) PutState(ctx context.Context, st PartitionState) error {
	st.Instance = l.cfg.Instance
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if _, err := l.kv.Put(ctx, l.stateKey(st.Partition, st.Instance), b); err != nil {
		return fmt.Errorf("partition %d state: %w", st.Partition, err)
	}
	return nil
}

// DropState withdraws this instance's state of partition p: it keeps no
// copy of it any more.
func (l *Leases) DropState(ctx context.Context, p int) error {
	if err := l.kv.Delete(ctx, l.stateKey(p, l.cfg.Instance)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("partition %d state: %w", p, err)
	}
	return nil
}

// States reads every instance's state of the group's partitions.
func (l *Leases) States(ctx context.Context) ([]PartitionState, error) {
	return partitionStates(ctx, l.kv, l.cfg.Group)
}

// PartitionStates reads every instance's state of group's partitions,
// by partition and then instance; none when there is no lease bucket.
func PartitionStates(ctx context.Context, js jetstream.JetStream, group string) ([]PartitionState, error) {
	kv, err := js.KeyValue(ctx, PartitionBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("partition bucket: %w", err)
	}
	return partitionStates(ctx, kv, group)
}

func partitionStates(ctx context.Context, kv jetstream.KeyValue, group string) ([]PartitionState, error) {
	lister, err := kv.ListKeysFiltered(ctx, group+".s.>")
	if err != nil {
		return nil, fmt.Errorf("partition states of %s: %w", group, err)
	}
	var out []PartitionState
	for k := range lister.Keys() {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired or dropped since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("partition state %s: %w", k, err)
		}
		var st PartitionState
		if err := json.Unmarshal(e.Value(), &st); err != nil {
			return nil, fmt.Errorf("partition state %s: %w", k, err)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b PartitionState) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Instance, b.Instance))
	})
	return out, nil
}

// CreatePartitionConsumer makes partition durable cfg.Durable (of base,
// PartitionDurable) again and returns it with its ack floor: every
// message of the stream up to floor was handled by whoever held the
// partition before, and the consumer delivers everything after it. A
// durable made for the first time starts where the group's other durables
// have all handled to (groupStart). *known is the ack floor an attempt
// read before it deleted the consumer to make it again: an attempt after
// one that failed in between starts there, not where a new durable would.
func CreatePartitionConsumer(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, base string, known **uint64, log *zap.Logger) (*Consumer, uint64, error) {
	var floor uint64
	c, err := js.Consumer(ctx, MemoryStream, cfg.Durable)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound) && *known != nil:
		floor = **known
		cfg.StartSeq = floor + 1
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		start, err := groupStart(ctx, js, base, cfg.Durable)
		if err != nil {
			return nil, 0, err
		}
		cfg.StartSeq = start
		floor = max(start, 1) - 1
	case err != nil:
		return nil, 0, err
	default:
		info, err := c.Info(ctx)
		if err != nil {
			return nil, 0, err
		}
		// The consumer starts again after what was acknowledged, always:
		// what the instance before had taken and not acknowledged would
		// come back only after the ack wait (minutes, for the consolidator),
		// after later messages; and a pull it left waiting at the server
		// (on another node, say) would still take new messages into that
		// wait. Made again, the consumer has neither.
		floor = info.AckFloor.Stream
		*known = &floor
		if err := ReplayFrom(ctx, js, cfg.Durable, floor+1, time.Time{}); err != nil {
			return nil, 0, err
		}
	}
	cons, err := NewConsumer(ctx, js, cfg, log)
	return cons, floor, err
}

// groupStart is where durable, a partition's consumer made for the first
// time, starts: after what the durables of base of another number of
// partitions (the one durable base of a single partition included) have
// all acknowledged, the layout the group had before; 0, the start of the
// stream, when there is none. The durables of the same number of
// partitions do not count: they have moved on with their own users, and
// this partition's users' events since they started would be skipped
// (a partition given up before its durable was ever made, say).
func groupStart(ctx context.Context, js jetstream.JetStream, base, durable string) (uint64, error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return 0, err
	}
	name := regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `(-[0-9]+of([0-9]+))?$`)
	mine := name.FindStringSubmatch(durable)
	var start uint64
	lister := s.ListConsumers(ctx)
	for info := range lister.Info() {
		m := name.FindStringSubmatch(info.Name)
		if m == nil || mine != nil && m[2] == mine[2] {
			continue
		}
		if next := info.AckFloor.Stream + 1; start == 0 || next < start {
			start = next
		}
	}
	return start, lister.Err()
}
