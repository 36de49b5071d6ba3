package retrieval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/textseg"
)

// besideMemories is the real read model whose memories' search waits
// for the turns' to start, as it can only when the two run side by side.
type besideMemories struct {
	*sqlite.Store
	turnsStarted chan struct{}
}

func (b besideMemories) RecallTurns(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.TurnHit, error) {
	close(b.turnsStarted)
	return b.Store.RecallTurns(ctx, scope, q, limit)
}

func (b besideMemories) RecallMemories(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.MemoryHit, error) {
	select {
	case <-b.turnsStarted:
	case <-time.After(5 * time.Second):
		return nil, errors.New("the turns' search had not started 5 s into the memories'")
	}
	return b.Store.RecallMemories(ctx, scope, q, limit)
}

// The turns' text search needs nothing the memories' paths find, so it
// runs beside them rather than after: a long dialogue's two searches
// were half of its request, one after the other.
func TestTurnsSearchedBesideMemories(t *testing.T) {
	t.Parallel()
	st := openWith(t, "我们在讨论部署", "部署到了 staging")
	e := NewEngine(besideMemories{Store: st, turnsStarted: make(chan struct{})})
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "上次部署到哪里了？", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Degraded) != 0 || len(resp.Blocks.Turns) == 0 {
		t.Fatalf("degraded %v, %d turns: the searches ran one after the other", resp.Degraded, len(resp.Blocks.Turns))
	}
}

// panicsInTurns is the real read model whose turns' search panics.
type panicsInTurns struct{ *sqlite.Store }

func (panicsInTurns) RecallTurns(context.Context, memory.Scope, textseg.Query, int) ([]memory.TurnHit, error) {
	panic("turns index in pieces")
}

// A panic in the turns' search, which runs on a goroutine of its own, is
// the request's: it reaches the request's goroutine, where the API's
// recovery answers it, not the process.
func TestTurnsSearchPanicIsTheRequests(t *testing.T) {
	t.Parallel()
	st := openWith(t, "我们在讨论部署")
	e := NewEngine(panicsInTurns{st})
	err := memory.Recovered(func() error {
		_, err := e.Context(t.Context(), Request{User: "u", Query: "上次部署到哪里了？", Force: true})
		return err
	})
	var p *memory.PanicError
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "turns index in pieces") {
		t.Fatalf("a request whose turns' search panics returned %v, want its panic", err)
	}
}
