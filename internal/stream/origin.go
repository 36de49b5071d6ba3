package stream

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MemoryOrigin identifies this incarnation of the MEMORY stream: a stream
// deleted and recreated under the same name has another. It is the
// stream's creation time (which every replica reports alike), so a read
// model that recorded it can tell its stream from a new one whose
// sequences start over. lastSeq is the stream's last sequence.
func MemoryOrigin(ctx context.Context, js jetstream.JetStream) (origin string, lastSeq uint64, err error) {
	info, err := MemoryInfo(ctx, js)
	if err != nil {
		return "", 0, err
	}
	return OriginOf(info), info.State.LastSeq, nil
}

// MemoryInfo is MEMORY's configuration and state, read now.
func MemoryInfo(ctx context.Context, js jetstream.JetStream) (*jetstream.StreamInfo, error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", MemoryStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream %s info: %w", MemoryStream, err)
	}
	return info, nil
}

// OriginOf is the origin (see MemoryOrigin) of the stream info describes.
func OriginOf(info *jetstream.StreamInfo) string { return info.Created.UTC().Format(time.RFC3339Nano) }

// Keys of MEMORY's metadata where `engram streams accept` records what an
// operator accepted: the stream kept in its metadata, so that every read
// model, wherever it runs, learns of one decision.
const (
	metaAcceptedOrigin = "engram.accepted_origin"
	metaAcceptedFirst  = "engram.accepted_first_seq"
)

// Accepted is what an operator accepted of MEMORY as it was: the stream
// (its origin) read models may rebuild from, and its first sequence then,
// below which rows of a read model whose events the stream no longer has
// are no longer reported.
type Accepted struct {
	Origin   string
	FirstSeq uint64
}

// AcceptedOf reads what was accepted from a MEMORY configuration.
func AcceptedOf(cfg jetstream.StreamConfig) Accepted {
	first, _ := strconv.ParseUint(cfg.Metadata[metaAcceptedFirst], 10, 64)
	return Accepted{Origin: cfg.Metadata[metaAcceptedOrigin], FirstSeq: first}
}

// AcceptMemory records MEMORY as it is now as accepted (engram streams
// accept): read models built from another MEMORY rebuild from this one,
// and rows of theirs whose events were below its first sequence stop being
// reported. It changes nothing else of the stream, a configuration that
// drops events included (`engram streams apply` puts engram's back). Only
// the operator may: it updates the stream.
func AcceptMemory(ctx context.Context, js jetstream.JetStream) (Accepted, error) {
	info, err := MemoryInfo(ctx, js)
	if err != nil {
		return Accepted{}, err
	}
	acc := Accepted{Origin: OriginOf(info), FirstSeq: info.State.FirstSeq}
	cfg := info.Config
	meta := make(map[string]string, len(cfg.Metadata)+2)
	for k, v := range cfg.Metadata {
		meta[k] = v
	}
	meta[metaAcceptedOrigin] = acc.Origin
	meta[metaAcceptedFirst] = strconv.FormatUint(acc.FirstSeq, 10)
	cfg.Metadata = meta
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return acc, fmt.Errorf("record the accepted stream in %s's metadata: %w", MemoryStream, err)
	}
	return acc, nil
}
