package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Erasure is what Erase removed.
type Erasure struct {
	// Events and DeadLetters count the messages erased from MEMORY and
	// DEADLETTER.
	Events, DeadLetters int
	// Subjects are the MEMORY subjects the user's events were on: the
	// canonical one per type, and any a client spelt otherwise.
	Subjects []string
	// Unlinked is set when MEMORY denies single deletes (a stream created
	// before engram erased users): its messages were purged, so no read
	// of the stream returns them, but their bytes stay in the store's
	// blocks until the server compacts them.
	Unlinked bool
}

// Erase removes every message of one namespace and user below the MEMORY
// sequence before (the erasure receipt, which stays) from MEMORY, and
// every dead letter of theirs from DEADLETTER. A message is erased, not
// just unlinked: the server overwrites its bytes in the store with random
// data (JetStream's secure delete). Subjects are matched by what they
// decode to, so an event published on a non-canonical spelling of the
// user ("%6Eb" for "nb") is found too.
func Erase(ctx context.Context, js jetstream.JetStream, namespace, user string, before uint64) (Erasure, error) {
	var out Erasure
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return out, fmt.Errorf("erase: %w", err)
	}
	subjects, err := subjectsOf(ctx, mem, SubjectPrefix+".>", func(subj string) bool {
		ns, u, ok := decodeScope(subj)
		return ok && ns == namespace && u == user
	})
	if err != nil {
		return out, err
	}
	out.Subjects = subjects
	info, err := mem.Info(ctx)
	if err != nil {
		return out, fmt.Errorf("erase: %w", err)
	}
	out.Unlinked = info.Config.DenyDelete
	for _, subj := range subjects {
		n, err := eraseSubject(ctx, mem, subj, before, out.Unlinked)
		out.Events += n
		if err != nil {
			return out, err
		}
	}
	dlq, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return out, fmt.Errorf("erase dead letters: %w", err)
	}
	dead, err := subjectsOf(ctx, dlq, DLQSubjectPrefix+".>", func(subj string) bool {
		// dlq.<consumer>.<original subject>
		rest, ok := strings.CutPrefix(subj, DLQSubjectPrefix+".")
		if !ok {
			return false
		}
		_, orig, _ := strings.Cut(rest, ".")
		ns, u, ok := decodeScope(orig)
		return ok && ns == namespace && u == user
	})
	if err != nil {
		return out, err
	}
	for _, subj := range dead {
		n, err := eraseSubject(ctx, dlq, subj, 0, false)
		out.DeadLetters += n
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// subjectsOf lists the subjects of s under filter that match keep.
func subjectsOf(ctx context.Context, s jetstream.Stream, filter string, keep func(string) bool) ([]string, error) {
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("erase: subjects of %s: %w", s.CachedInfo().Config.Name, err)
	}
	var out []string
	for subj := range info.State.Subjects {
		if keep(subj) {
			out = append(out, subj)
		}
	}
	return out, nil
}

// eraseSubject erases the messages on subj below before (0: all). With
// purgeOnly it purges them instead, which is all a stream that denies
// deletes allows.
func eraseSubject(ctx context.Context, s jetstream.Stream, subj string, before uint64, purgeOnly bool) (int, error) {
	if purgeOnly {
		opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject(subj)}
		if before > 0 {
			opts = append(opts, jetstream.WithPurgeSequence(before))
		}
		count := func() (int, error) {
			info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj))
			if err != nil {
				return 0, fmt.Errorf("erase %s: %w", subj, err)
			}
			return int(info.State.Subjects[subj]), nil
		}
		before, err := count()
		if err != nil {
			return 0, err
		}
		if err := s.Purge(ctx, opts...); err != nil {
			return 0, fmt.Errorf("purge %s: %w", subj, err)
		}
		after, err := count()
		return before - after, err
	}
	return eraseWhere(ctx, s, subj, func(raw *jetstream.RawStreamMsg) (erase, more bool) {
		if before > 0 && raw.Sequence >= before {
			return false, false
		}
		return true, true
	})
}

// eraseWhere erases the messages on subj, in order, that which says to
// erase, until it says there are no more to look at, and reports how many
// went.
func eraseWhere(ctx context.Context, s jetstream.Stream, subj string, which func(*jetstream.RawStreamMsg) (erase, more bool)) (int, error) {
	n := 0
	for seq := uint64(1); ; {
		raw, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("erase %s from seq %d: %w", subj, seq, err)
		}
		erase, more := which(raw)
		seq = raw.Sequence + 1
		if erase {
			if err := s.SecureDeleteMsg(ctx, raw.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				return n, fmt.Errorf("erase %s seq %d: %w", subj, raw.Sequence, err)
			}
			n++
		}
		if !more {
			return n, nil
		}
	}
}

// decodeScope reads namespace and user from a mem.> subject, however the
// client encoded them.
func decodeScope(subject string) (namespace, user string, ok bool) {
	parts := strings.SplitN(subject, ".", 4)
	if len(parts) != 4 || parts[0] != SubjectPrefix {
		return "", "", false
	}
	ns, err1 := DecodeToken(parts[1])
	u, err2 := DecodeToken(parts[2])
	return ns, u, err1 == nil && err2 == nil
}
