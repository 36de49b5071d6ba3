package stream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"
)

// conflict is nil when sent, which JetStream reported as a duplicate of
// the message at seq, says what that message says (or no message is
// there any more), and a memory.ECONFLICT error naming the stored event
// when it says something else. The two are compared by their digests
// (Digest), the stored one given by p.Conflicts.
//
// JetStream only reports duplicates within the stream's duplicate window
// (StreamsConfig.DuplicateWindow); past it the same source and id are
// stored again and the read model keeps the first it applied.
func (p *Publisher) conflict(ctx context.Context, e event.Event, sent *nats.Msg, seq uint64) error {
	if p.Conflicts == nil {
		return nil
	}
	want, err := Digest(sent.Data)
	if err != nil {
		return fmt.Errorf("compare %s with seq %d: %w", e.ID(), seq, err)
	}
	stored, found, err := p.Conflicts(ctx, events.Namespace(e), sent.Header.Get(jetstreamMsgID), seq)
	if err != nil {
		return fmt.Errorf("compare %s with seq %d: %w", e.ID(), seq, err)
	}
	if !found || stored == want {
		// Not found: erased or aged out since, and what JetStream
		// dropped is what was asked to be gone.
		return nil
	}
	return memory.Errorf(memory.ECONFLICT, "event %s from %s is stored (seq %d) with other content: "+
		"a new write needs a new id; to retry, send what was stored", e.ID(), e.Source(), seq)
}

// StoredDigest is the digest (Digest) of the event stored in MEMORY at
// seq, if that is the event of deduplication id msgID (MsgID) in
// namespace; found is false when there is no such event (erased, aged
// out, or another event), which tells nothing of another namespace.
type StoredDigest func(ctx context.Context, namespace, msgID string, seq uint64) (digest string, found bool, err error)

// ReadDigest is StoredDigest read from MEMORY through js, by a bus user
// that may read it (a retriever, or any reader kind).
func ReadDigest(js jetstream.JetStream) StoredDigest {
	var mu sync.Mutex
	var mem jetstream.Stream // looked up once: the lookup is a request as long as the read
	return func(ctx context.Context, namespace, msgID string, seq uint64) (string, bool, error) {
		mu.Lock()
		s := mem
		mu.Unlock()
		if s == nil {
			var err error
			if s, err = js.Stream(ctx, MemoryStream); err != nil {
				return "", false, fmt.Errorf("read seq %d: %w", seq, err)
			}
			mu.Lock()
			mem = s
			mu.Unlock()
		}
		raw, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("read seq %d: %w", seq, err)
		}
		ns, _, _, err := ParseSubject(raw.Subject)
		if err != nil || ns != namespace || raw.Header.Get(jetstreamMsgID) != msgID {
			return "", false, nil //nolint:nilerr // a message of another subject or id is not the stored event: no digest, no error
		}
		d, err := Digest(raw.Data)
		if err != nil {
			return "", false, fmt.Errorf("seq %d: %w", seq, err)
		}
		return d, true, nil
	}
}

// DigestSubject is where a namespace's requests for a stored event's
// digest go (served beside search by a retriever: natsapi.Serve).
func DigestSubject(namespace string) string {
	return ServicePrefix + "." + EncodeToken(namespace) + ".digest"
}

// DigestRequest asks for the digest of the event stored at Seq under
// deduplication id MsgID, in the namespace of the request's subject.
type DigestRequest struct {
	Seq   uint64 `json:"seq"`
	MsgID string `json:"msg_id"`
}

// DigestReply is the answer: the digest, or found false.
type DigestReply struct {
	Digest string `json:"digest,omitempty"`
	Found  bool   `json:"found"`
}

// AskDigest is StoredDigest asked of a retriever over nc
// (DigestSubject), for a bus user that may not read MEMORY: the ingest,
// which faces the internet and reads no tenant's events, learns only
// whether the event it was told is a duplicate says what it sent.
func AskDigest(nc *nats.Conn) StoredDigest {
	return func(ctx context.Context, namespace, msgID string, seq uint64) (string, bool, error) {
		body, _ := json.Marshal(DigestRequest{Seq: seq, MsgID: msgID})
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, digestTimeout)
			defer cancel()
		}
		subject := DigestSubject(namespace)
		msg, err := nc.RequestWithContext(ctx, subject, body)
		if errors.Is(err, nats.ErrNoResponders) {
			return "", false, memory.Errorf(memory.EUNAVAILABLE, "no retriever answers %s, which tells a retry from a reused id", subject)
		}
		if err != nil {
			return "", false, memory.Errorf(memory.EUNAVAILABLE, "ask %s: %v", subject, err)
		}
		if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
			// Whatever the retriever says went wrong, the event sent was
			// not judged: the client sends it again, it is not refused.
			return "", false, memory.Errorf(memory.EUNAVAILABLE, "%s: %s: %s", subject, code, msg.Header.Get(micro.ErrorHeader))
		}
		var r DigestReply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return "", false, fmt.Errorf("%s reply: %w", subject, err)
		}
		return r.Digest, r.Found, nil
	}
}

// digestTimeout bounds a digest request made without a deadline.
const digestTimeout = 10 * time.Second

// Digest is the digest of a stored event's content (contentOf), encoded
// canonically (keys sorted, numbers as written) and hashed: two
// encodings of an event have the same digest exactly when they say the
// same thing.
func Digest(b []byte) (string, error) {
	v, err := contentOf(b)
	if err != nil {
		return "", err
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode event: %w", err)
	}
	h := sha256.Sum256(canon)
	return hex.EncodeToString(h[:]), nil
}

// contentOf is what a stored encoding of an event says: every attribute
// and the data, as JSON values, except the time and the tracing
// extensions. A time is stamped on arrival when the sender gave none,
// and each try of a send is its own trace, so a retry differs in those
// and is still the same write.
func contentOf(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	delete(v, "time")
	delete(v, events.ExtTraceParent)
	delete(v, events.ExtTraceState)
	return v, nil
}
