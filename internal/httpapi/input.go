package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/textproto"

	"github.com/engramhq/engram/events"
)

// BusInput is the ingest path for events that arrive on the bus
// (engram.v1.<namespace>.events): the very handler of POST /v1/events,
// so an event published by an agent is validated, stamped and stored
// exactly as one posted over HTTP, and the answer comes after JetStream's
// ack. The bus has already authenticated the sender; namespace is the one
// its subject (and so its credentials) covers, and an event that names
// another is refused as a token for namespace would refuse it. An event
// that names none is in namespace.
func (s *Server) BusInput() func(ctx context.Context, namespace string, header map[string][]string, body []byte) (status int, reply []byte) {
	c := *s
	c.Tokens = nil // NATS checked who is asking
	// Not the edge's checks: they are about browsers, and NATS has none.
	h := c.InProcess()
	return func(ctx context.Context, namespace string, header map[string][]string, body []byte) (int, []byte) {
		ctx = context.WithValue(ctx, allowedNamespaceKey, namespace)
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/events", bytes.NewReader(body))
		if err != nil {
			return http.StatusInternalServerError, nil
		}
		for k, v := range header {
			r.Header[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
		binary := r.Header.Get("Ce-Specversion") != ""
		if r.Header.Get("Content-Type") == "" && !binary {
			r.Header.Set("Content-Type", ctStructured)
		}
		if binary && r.Header.Get("Ce-"+events.ExtNamespace) == "" {
			r.Header.Set("Ce-"+events.ExtNamespace, namespace)
		} else if !binary {
			body = defaultNamespace(r.Header.Get("Content-Type"), body, namespace)
			r.Body, r.ContentLength = nopCloser{bytes.NewReader(body)}, int64(len(body))
		}
		w := &bufferedResponse{header: http.Header{}}
		h.ServeHTTP(w, r)
		if w.status == 0 {
			w.status = http.StatusOK
		}
		return w.status, w.body.Bytes()
	}
}

// defaultNamespace adds "namespace": ns to each structured event that
// names none. Anything it cannot read it leaves for the validator.
func defaultNamespace(contentType string, body []byte, ns string) []byte {
	ct, _, _ := mime.ParseMediaType(contentType)
	fill := func(raw json.RawMessage) json.RawMessage {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return raw
		}
		if _, ok := obj[events.ExtNamespace]; ok {
			return raw
		}
		obj[events.ExtNamespace], _ = json.Marshal(ns)
		out, err := json.Marshal(obj)
		if err != nil {
			return raw
		}
		return out
	}
	switch ct {
	case ctStructured:
		return fill(body)
	case ctBatch:
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) != nil {
			return body
		}
		for i := range arr {
			arr[i] = fill(arr[i])
		}
		if out, err := json.Marshal(arr); err == nil {
			return out
		}
	}
	return body
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// bufferedResponse keeps what the handler writes, for the bus reply.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}
