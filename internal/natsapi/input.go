package natsapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
)

// Ingest takes the events of one message for namespace and answers as
// POST /v1/events does (httpapi.Server.BusInput).
type Ingest func(ctx context.Context, namespace string, header map[string][]string, body []byte) (status int, reply []byte)

// StatusHeader carries the HTTP status POST /v1/events would have
// answered (202 stored, 400 invalid, 503 send again, …).
const StatusHeader = "Engram-Status"

// ServeInput starts the ingest service: agents send events, structured
// (one or a batch, by Content-Type) or binary (ce-* headers), as a request
// to engram.v1.<namespace>.events and are answered once JetStream has
// stored them, with the body POST /v1/events answers. Nothing reaches the
// MEMORY stream that ingest has not validated. Several ingest processes
// share the requests (one queue group).
func ServeInput(nc *nats.Conn, ingest Ingest, version string, log *zap.Logger) (micro.Service, error) {
	svc, err := micro.AddService(nc, micro.Config{
		Name:        "engram-ingest",
		Version:     version,
		Description: "engram event input: validated, stored, then answered",
	})
	if err != nil {
		return nil, err
	}
	h := micro.HandlerFunc(func(req micro.Request) {
		ns, err := subjectNamespace(req.Subject(), "events")
		if err != nil {
			respondError(req, err, log)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		status, body := ingest(ctx, ns, req.Headers(), req.Data())
		hdr := micro.WithHeaders(micro.Headers{StatusHeader: {strconv.Itoa(status)}})
		if status < 300 {
			_ = req.Respond(body, hdr)
			return
		}
		var eb ErrorBody
		_ = json.Unmarshal(body, &eb)
		if eb.Error.Code == "" {
			eb.Error.Code, eb.Error.Message = memory.EINTERNAL, http.StatusText(status)
		}
		_ = req.Error(eb.Error.Code, eb.Error.Message, body, hdr)
	})
	if err := svc.AddEndpoint("events", Recovered("events", log, h), micro.WithEndpointSubject(SubjectPrefix+".*.events")); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return svc, nil
}
