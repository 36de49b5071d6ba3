package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
)

// queueRequest is the body of the consolidator service's pending, approve
// and dismiss requests. Without a namespace and user (the operator's
// `engram rules`), every firing is in reach; with them, only that user's.
type queueRequest struct {
	ID        string `json:"id,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	User      string `json:"user,omitempty"`
}

func scoped(id string, scope *memory.Scope) queueRequest {
	q := queueRequest{ID: id}
	if scope != nil {
		q.Namespace, q.User = scope.Namespace, scope.User
	}
	return q
}

func (q queueRequest) scope() *memory.Scope {
	if q.Namespace == "" && q.User == "" {
		return nil
	}
	return &memory.Scope{Namespace: q.Namespace, User: q.User}
}

// remoteQueue is the confirm queue of a consolidator in another process,
// for a retriever run apart that serves /v1/consolidation/pending.
type remoteQueue struct {
	*sqlite.Store
	nc *stream.Conn
}

var _ httpapi.RuleQueue = remoteQueue{}

func (q remoteQueue) PendingFirings(ctx context.Context, scope *memory.Scope) ([]consolidation.Pending, error) {
	var out struct {
		Pending []consolidation.Pending `json:"pending"`
	}
	return out.Pending, q.ask(ctx, PendingSubject, scoped("", scope), &out)
}

func (q remoteQueue) Approve(ctx context.Context, id string, scope *memory.Scope) error {
	return q.ask(ctx, ApproveSubject, scoped(id, scope), nil)
}

func (q remoteQueue) Dismiss(id string, scope *memory.Scope) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return q.ask(ctx, DismissSubject, scoped(id, scope), nil)
}

// ask sends one request to the consolidator and reads its answer; its
// errors keep their codes, and no consolidator is "unavailable".
func (q remoteQueue) ask(ctx context.Context, subject string, req queueRequest, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	body, _ := json.Marshal(req)
	data, answered, err := natsapi.Request(ctx, q.nc, subject, body)
	if errors.Is(err, natsapi.ErrNoResponders) {
		return memory.Errorf(memory.EUNAVAILABLE, "no consolidator is running to answer %s", subject)
	}
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "ask the consolidator: %v", err)
	}
	if answered != nil {
		return answered
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("consolidator reply: %w", err)
	}
	return nil
}
