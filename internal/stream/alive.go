package stream

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Death seen on the bus. A lease outlives its dead holder by up to its
// TTL, because a lease cannot tell a dead holder from a slow one. The bus
// can: an instance answers on a subject of its own for as long as its
// connection lives, and when the connection is gone (the process killed,
// its host lost) the server answers a request there at once that no one
// listens (nats.ErrNoResponders). A slow instance still answers, late, so
// only that answer counts, never a timeout.
//
// An instance of a group that probes (LeaseConfig.Probe) asks each other
// member every probe, and one that has no listener in two probes in a row
// is evicted: its membership, its leases and its partition states are
// deleted, each only at the revision read (a holder that renewed in
// between keeps it), and the partitions are taken in the same round. Two
// probes, not one, so that an instance whose connection moves to another
// server of the cluster is not evicted for the moment it takes; one cut
// off for longer loses its leases at its next renewal, as it would have
// at the TTL. So probing is for groups where a partition worked on by two
// instances for that moment does no harm: the retrievers' read copies,
// which only read.

// AlivePrefix is the subjects instances answer on while they live:
// engram.alive.<group>.<instance>.
const AlivePrefix = "engram.alive"

func aliveSubject(group, instanceToken string) string {
	return AlivePrefix + "." + group + "." + instanceToken
}

// answerAlive answers on this instance's alive subject until the
// returned function is called.
func (l *Leases) answerAlive() (func(), error) {
	sub, err := l.nc.Subscribe(aliveSubject(l.cfg.Group, EncodeToken(l.cfg.Instance)), func(m *nats.Msg) {
		_ = m.Respond(nil) // the asker retries next probe
	})
	if err != nil {
		return nil, err
	}
	return func() {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			l.log.Warn("alive subject", zap.Error(err))
		}
	}, nil
}

// miss is what a probe that found no listener saw of a member: its
// membership's revision, and since when it has been that.
type miss struct {
	rev   uint64
	since time.Time
}

// probe asks every other member whether it lives. One with no listener
// is evicted once its membership has also gone unrenewed for longer than
// a round (a quarter TTL) and a probe: a live member renews it every
// round, listening or not (an instance whose subscription was refused,
// or one of an older version), and keeps its partitions. missed holds,
// per member's token, what the probes that found no listener saw. It
// reports whether it evicted anyone.
func (l *Leases) probe(ctx context.Context, missed map[string]miss) bool {
	// However many members and however slow the bus, this instance's
	// own round is not held up for long.
	ctx, cancel := context.WithTimeout(ctx, l.ttl/4)
	defer cancel()
	me := EncodeToken(l.cfg.Instance)
	seen, evicted := map[string]bool{}, false
	for _, k := range l.members {
		tok := k[strings.LastIndexByte(k, '.')+1:]
		if tok == me {
			continue
		}
		seen[tok] = true
		rctx, cancel := context.WithTimeout(ctx, l.cfg.Probe)
		_, err := l.nc.RequestWithContext(rctx, aliveSubject(l.cfg.Group, tok), nil)
		cancel()
		if !errors.Is(err, nats.ErrNoResponders) {
			delete(missed, tok)
			continue
		}
		e, err := l.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		m, ok := missed[tok]
		if !ok || m.rev != e.Revision() {
			missed[tok] = miss{rev: e.Revision(), since: time.Now()}
			continue
		}
		if time.Since(m.since) <= l.ttl/4+l.cfg.Probe {
			continue
		}
		delete(missed, tok)
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl/4)
		l.evict(ectx, tok, e.Revision())
		cancel()
		evicted = true
	}
	for tok := range missed {
		if !seen[tok] {
			delete(missed, tok)
		}
	}
	return evicted
}

// evict deletes a dead member's membership (at rev, the revision its
// probes saw unchanged), leases and partition states, each at the
// revision read.
func (l *Leases) evict(ctx context.Context, tok string, rev uint64) {
	name, err := DecodeToken(tok)
	if err != nil {
		return
	}
	var gone []string
	del := func(key string, theirs func(value []byte) bool) {
		e, err := l.kv.Get(ctx, key)
		if err != nil || !theirs(e.Value()) {
			return
		}
		if err := l.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision())); err == nil {
			gone = append(gone, key)
		}
	}
	// One filter a listing: a listing of several is a consumer whose
	// subject names none, which the workers' permissions refuse.
	each := func(filter string, theirs func(value []byte) bool) {
		keys, err := l.kv.ListKeysFiltered(ctx, filter)
		if err != nil {
			return
		}
		for k := range keys.Keys() {
			del(k, theirs)
		}
	}
	each(l.key("p", "*"), func(v []byte) bool { return string(v) == name }) // the leases it holds
	each(l.key("s", "*", tok), func([]byte) bool { return true })           // its partition states

	// The membership last: an eviction cut short is probed, and done,
	// again.
	if err := l.kv.Delete(ctx, l.key("m", tok), jetstream.LastRevision(rev)); err == nil {
		gone = append(gone, l.key("m", tok))
	}
	l.log.Warn("instance gone from the bus; its partitions are taken before their leases expire",
		zap.String("gone", name), zap.Strings("deleted", gone))
}
