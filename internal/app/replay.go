package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/stream"
)

// ErrWorkersRunning is a replay refused because the consumer's workers run.
var ErrWorkersRunning = errors.New("its workers are running")

// replayGroups are the worker groups (their partition leases, whose
// membership keys every live instance renews) of the consumers a replay
// may recreate.
var replayGroups = []struct {
	prefix, group string
}{
	{"batcher", "extractor"}, {extractorDurable, "extractor"}, {"embedder", "extractor"},
	{"consolidator", "consolidator"},
}

// Replay makes the worker consumer name see MEMORY again from stream
// sequence seq, or with seq 0 from time from (stream.ReplayFrom). It
// refuses, changing nothing, while an instance of the consumer's workers
// runs: a consumer deleted under them would be made again by them as at
// their start (stream.Consumer), and what they had in hand delivered
// twice. Workers stopped, they pick up from there when they start.
func Replay(ctx context.Context, js stream.JetStream, name string, seq uint64, from time.Time) error {
	for _, g := range replayGroups {
		if !strings.HasPrefix(name, g.prefix) {
			continue
		}
		live, err := stream.Members(ctx, js, g.group)
		if err != nil {
			return fmt.Errorf("replay %s: which workers run: %w", name, err)
		}
		if len(live) > 0 {
			return fmt.Errorf("replay %s: %w (%s instances %s): stop them first; one that died is counted until its lease expires (%s)",
				name, ErrWorkersRunning, g.group, strings.Join(live, ", "), stream.DefaultLeaseTTL)
		}
		break
	}
	return stream.ReplayFrom(ctx, js, name, seq, from)
}
