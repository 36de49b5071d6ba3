package stream

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// A handler that panics on one message does not stop its worker: the
// panic is that message's failure (retried, then dead-lettered with the
// panic as the reason); the messages handed over in the same batch, and
// those published after, are handled.
func TestHandlerPanicIsContained(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "u", 4) // seq 1..4, in one batch
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{
		Stream: MemoryStream, Durable: "panics", MaxDeliver: 3,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond },
	}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	tries, handled := map[uint64]int{}, map[uint64]bool{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				tries[m.Seq]++
				if m.Seq == 2 {
					var none map[string]int
					none["boom"]++ //nolint:staticcheck // a bug on purpose: assignment to entry in nil map
				}
			}
			for _, m := range msgs {
				handled[m.Seq] = true
			}
			return nil
		})
	}()
	wait.For(t, "the panicking message to be dead-lettered", func() error { return wait.Equal(len(listDLQ(t, js, DLQFilter{})), 1) })
	publishTurns(t, js, "v", 1) // seq 5: the worker goes on
	wait.Until(t, "the message published after the panic to be handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return handled[5]
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, seq := range []uint64{1, 3, 4, 5} {
		if !handled[seq] {
			t.Errorf("seq %d was never handled", seq)
		}
	}
	if handled[2] || tries[2] < 3 {
		t.Errorf("seq 2: handled %v after %d tries, want a failure tried 3 times", handled[2], tries[2])
	}
	dl := listDLQ(t, js, DLQFilter{})[0]
	if dl.OriginalSeq != 2 || !strings.HasPrefix(dl.Reason, "panic: assignment to entry in nil map") {
		t.Fatalf("dead letter of seq %d, reason %q; want seq 2, a panic", dl.OriginalSeq, dl.Reason)
	}
}

// A reason cut to fit a header is cut between characters, not inside one.
func TestTruncateKeepsCharactersWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"无法解析事件", 4, "无…"},  // 3-byte characters: 4 bytes hold one
		{"无法解析事件", 6, "无法…"}, // on a boundary
		{"ab😀cd", 4, "ab…"},
	} {
		got := chars.ClipBytes(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("chars.ClipBytes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
