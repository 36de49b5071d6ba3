package natsapi

import (
	"context"

	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
)

// Service is a running micro service: Stop ends it.
type Service = micro.Service

// ErrNoResponders is a request's error when no service listens on its
// subject.
var ErrNoResponders = nats.ErrNoResponders

// Endpoint is one endpoint of a service of plain functions (ServeFuncs).
type Endpoint struct {
	// Name is the endpoint's in the service; its metrics are
	// prefix_Name's.
	Name    string
	Subject string
	// Handle answers a request's body with a value sent as JSON, or with
	// an error whose code goes in the reply (memory.ErrorCode).
	Handle func(data []byte) (any, error)
}

// ServeFuncs starts micro service name on nc with endpoints, each timed
// and with its panics recovered under prefix_Name.
func ServeFuncs(nc *nats.Conn, name, version, description, prefix string, endpoints []Endpoint, log *zap.Logger) (Service, error) {
	svc, err := micro.AddService(nc, micro.Config{Name: name, Version: version, Description: description})
	if err != nil {
		return nil, err
	}
	for _, e := range endpoints {
		metric := prefix + "_" + e.Name
		h := handler(log, func(_ context.Context, _ string, data []byte) (any, error) { return e.Handle(data) })
		if err := svc.AddEndpoint(e.Name, Timed(metric, Recovered(metric, log, h)), micro.WithEndpointSubject(e.Subject)); err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	return svc, nil
}

// Request sends body to subject and returns the reply's body. answered
// is the error the service answered with, its code kept
// (memory.Errorf); err is the request's own (ErrNoResponders when nothing
// listens).
func Request(ctx context.Context, nc *nats.Conn, subject string, body []byte) (data []byte, answered, err error) {
	msg, err := nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		return nil, nil, err
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return nil, memory.Errorf(code, "%s", msg.Header.Get(micro.ErrorHeader)), nil
	}
	return msg.Data, nil, nil
}
