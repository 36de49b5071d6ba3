package natsapi

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/micro"
)

// maxInFlight bounds the requests a service answers at once. Past it, the
// service's subscriptions wait, and requests queue in the connection as
// they did when each was answered in turn. The read model's own pool of
// readers bounds the queries that run; this bounds the goroutines and
// the bodies held while they wait for one.
const maxInFlight = 64

// sideBySide answers a service's requests each on a goroutine of its own.
// nats.go hands a subscription's messages to its handler one at a time:
// a partition's copy that answered so made every query forwarded to it
// wait for those before it, and a front's router made every query wait
// for the round trips of those before it, while the same queries asked
// over HTTP run side by side (issue 26, the routing overhead).
type sideBySide struct {
	// stopping ends when the service stops: what a handler waits on
	// that is not its own answer (a front's round trip to a partition)
	// waits no longer.
	stopping context.Context
	stop     context.CancelFunc
	slots    chan struct{}
	// inTurn, when set and true, has a request answered in turn, on the
	// subscription's goroutine, as nats.go would.
	inTurn func() bool
	mu     sync.Mutex
	// stopped is set once the service stopped: a request its draining
	// subscriptions still deliver is answered in turn, on theirs.
	stopped bool
	running sync.WaitGroup
}

func newSideBySide() *sideBySide {
	ctx, cancel := context.WithCancel(context.Background())
	return &sideBySide{stopping: ctx, stop: cancel, slots: make(chan struct{}, maxInFlight)}
}

// handler runs h side by side with the service's other requests.
func (s *sideBySide) handler(h micro.Handler) micro.Handler {
	return micro.HandlerFunc(func(req micro.Request) {
		if s.inTurn != nil && s.inTurn() {
			h.Handle(req)
			return
		}
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			h.Handle(req)
			return
		}
		s.running.Add(1) // under mu: Stop waits for it
		s.mu.Unlock()
		s.slots <- struct{}{}
		go func() {
			defer s.running.Done()
			defer func() { <-s.slots }()
			h.Handle(req)
		}()
	})
}

// sideBySideService is a service whose Stop waits for the requests it
// answers side by side.
type sideBySideService struct {
	micro.Service
	s *sideBySide
}

// Stop ends the service's subscriptions and waits for the requests
// still being answered.
func (svc sideBySideService) Stop() error {
	err := svc.Service.Stop()
	svc.s.mu.Lock()
	svc.s.stopped = true
	svc.s.mu.Unlock()
	svc.s.stop()
	svc.s.running.Wait()
	return err
}
