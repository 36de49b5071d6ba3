package natsapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
)

// Recovered contains a panic of h: nats.go runs a service's handler on
// its subscription's goroutine, where a panic ends the whole process
// (every worker in it, the embedded server of `engram serve`). The
// request is answered unavailable (503 in StatusHeader, as the ingest
// endpoint answers) saying the endpoint failed,
// unless h answered before it panicked, and the panic is logged with the
// subject and the stack, never the request's body; the service goes on
// serving.
func Recovered(endpoint string, log *zap.Logger, h micro.Handler) micro.Handler {
	return micro.HandlerFunc(func(req micro.Request) {
		r := &answerOnce{Request: req}
		err := memory.Recovered(func() error {
			h.Handle(r)
			return nil
		})
		if err == nil {
			return
		}
		fields := []zap.Field{zap.String("endpoint", endpoint), zap.String(stream.FieldSubject, req.Subject()), zap.Error(err)}
		var p *memory.PanicError
		if errors.As(err, &p) {
			fields = append(fields, zap.String("stack", p.Stack))
		}
		log.Error("request handler panicked", fields...)
		if r.answered {
			return
		}
		respondError(r, memory.Errorf(memory.EUNAVAILABLE, "%s failed on this request (a bug, logged with its subject); "+
			"the service goes on, try again", endpoint), log,
			micro.WithHeaders(micro.Headers{StatusHeader: {strconv.Itoa(http.StatusServiceUnavailable)}}))
	})
}

// answerOnce notes whether its request has been answered.
type answerOnce struct {
	micro.Request
	answered bool
}

func (r *answerOnce) Respond(data []byte, opts ...micro.RespondOpt) error {
	r.answered = true
	return r.Request.Respond(data, opts...)
}

func (r *answerOnce) RespondJSON(v any, opts ...micro.RespondOpt) error {
	r.answered = true
	return r.Request.RespondJSON(v, opts...)
}

func (r *answerOnce) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	r.answered = true
	return r.Request.Error(code, description, data, opts...)
}
