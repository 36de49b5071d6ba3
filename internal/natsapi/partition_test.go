package natsapi

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
)

// busConns starts an embedded server and connects n clients to it.
func busConns(t *testing.T, n int) []*nats.Conn {
	t.Helper()
	emb, err := stream.StartEmbedded(stream.EmbeddedConfig{StoreDir: t.TempDir(), Sync: "always"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	conns := make([]*nats.Conn, n)
	for i := range conns {
		if conns[i], err = nats.Connect("", emb.ConnectOption()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conns[i].Close)
	}
	return conns
}

// catchingUp is a partition's copy that catches up while it answers.
type catchingUp struct{ serving atomic.Bool }

func (c *catchingUp) Search(context.Context, memory.SearchQuery) ([]memory.SearchResult, error) {
	c.serving.Store(true)
	return []memory.SearchResult{}, nil
}

func (c *catchingUp) Context(context.Context, retrieval.Request) (*retrieval.Response, error) {
	c.serving.Store(true)
	return &retrieval.Response{}, nil
}

func (c *catchingUp) building() string {
	if c.serving.Load() {
		return ""
	}
	return "partition 0 is being rebuilt: 3 of 9 events read"
}

// An answer over NATS read from a copy that was still being built says
// so, though the copy caught up before the answer was sent (as
// httpapi's TestAnswerOfACopyBeingBuiltSaysSo for HTTP).
func TestPartitionAnswerOfACopyBeingBuiltSaysSo(t *testing.T) {
	conns := busConns(t, 2)
	for _, op := range []string{"search", "context"} {
		t.Run(op, func(t *testing.T) {
			c := &catchingUp{}
			svc, err := ServePartition(conns[0], 0, &Partition{Searcher: c, Engine: c, Building: c.building}, "0.0.0", zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			if err := conns[0].Flush(); err != nil { // the subscriptions reach the server before the request
				t.Fatal(err)
			}
			defer func() {
				if err := svc.Stop(); err != nil {
					t.Errorf("stop: %v", err)
				}
			}()
			msg, err := conns[1].RequestWithContext(t.Context(), PartitionSubject("default", 0, op), []byte(`{"user":"ana","q":"home","query":"home"}`))
			if err != nil {
				t.Fatal(err)
			}
			if want := `"degraded":["partition 0 is being rebuilt`; !strings.Contains(string(msg.Data), want) {
				t.Errorf("answer %s, want it to say %s", msg.Data, want)
			}
		})
	}
}
