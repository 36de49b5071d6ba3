package stream

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats.go"
)

// Header names engram sets on messages.
const (
	HeaderContentType = "Content-Type"
	ContentTypeCE     = "application/cloudevents+json"
	ceHeaderPrefix    = "ce-"
)

// Encode renders an event as a structured-mode CloudEvent message for subject.
func Encode(subject string, e event.Event) (*nats.Msg, error) {
	return encode(subject, e, false)
}

// encode is Encode; with validated, e is an event this process validated
// (events.Validate), so its data is JSON and its body is made without
// encoding/json checking it again: the same bytes as json.Marshal's, at
// about half the cost.
func encode(subject string, e event.Event, validated bool) (*nats.Msg, error) {
	var body []byte
	var err error
	if validated {
		if body, err = e.MarshalJSON(); err == nil {
			body = compactJSON(body)
		}
	} else {
		body, err = json.Marshal(e)
	}
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.ID(), err)
	}
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(HeaderContentType, ContentTypeCE)
	m.Header.Set(jetstreamMsgID, MsgID(events.Namespace(e), events.User(e), e.Source(), e.ID()))
	return m, nil
}

// compactJSON does to src, valid JSON, what json.Marshal does to the JSON
// a json.Marshaler returns: it drops the white space between tokens and
// escapes <, >, &, U+2028 and U+2029 in strings. It returns src itself
// when nothing changes.
func compactJSON(src []byte) []byte {
	const hex = "0123456789abcdef"
	var dst []byte
	start := 0
	cut := func(i, next int, with ...byte) {
		if dst == nil {
			dst = make([]byte, 0, len(src)+16)
		}
		dst = append(append(dst, src[start:i]...), with...)
		start = next
	}
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !inString {
			switch c {
			case '"':
				inString = true
			case ' ', '\t', '\n', '\r':
				cut(i, i+1)
			}
			continue
		}
		switch {
		case c == '\\':
			i++ // an escape: the next byte is never one to change
		case c == '"':
			inString = false
		case c == '<' || c == '>' || c == '&':
			cut(i, i+1, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c == 0xe2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xa8:
			cut(i, i+3, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xf])
			i += 2
		}
	}
	if dst == nil {
		return src
	}
	return append(dst, src[start:]...)
}

// Decode reads a CloudEvent from a message in structured mode (JSON body) or
// binary mode (ce-* headers, as in the CloudEvents NATS binding), validates
// it, and checks it against its subject. Agents that publish straight to NATS
// may leave namespace and user out of the event: the subject supplies them.
func Decode(subject string, hdr nats.Header, data []byte, maxBytes int) (event.Event, any, error) {
	var e event.Event
	if hdr.Get("ce-specversion") != "" {
		var err error
		if e, err = fromBinary(hdr, data, maxBytes); err != nil {
			return e, nil, err
		}
	} else {
		if len(data) > maxBytes {
			return e, nil, fmt.Errorf("event is %d bytes, over the %d byte limit", len(data), maxBytes)
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return e, nil, fmt.Errorf("structured event: %w", err)
		}
	}
	ns, user, typ, err := ParseSubject(subject)
	if err != nil {
		return e, nil, err
	}
	if _, ok := e.Extensions()[events.ExtNamespace]; !ok {
		e.SetExtension(events.ExtNamespace, ns)
	}
	if _, ok := e.Extensions()[events.ExtUser]; !ok {
		e.SetExtension(events.ExtUser, user)
	}
	data2, err := events.Validate(e)
	if err != nil {
		return e, nil, err
	}
	switch {
	case events.Namespace(e) != ns:
		return e, nil, fmt.Errorf("namespace %q does not match subject %q", events.Namespace(e), subject)
	case events.User(e) != user:
		return e, nil, fmt.Errorf("user %q does not match subject %q", events.User(e), subject)
	case e.Type() != typ:
		return e, nil, fmt.Errorf("type %q does not match subject %q", e.Type(), subject)
	}
	return e, data2, nil
}

func fromBinary(hdr nats.Header, data []byte, maxBytes int) (event.Event, error) {
	e := event.New()
	size := len(data)
	for k, vs := range hdr {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, ceHeaderPrefix) || len(vs) == 0 {
			continue
		}
		size += len(k) + len(vs[0])
		v := vs[0]
		var err error
		switch name := lk[len(ceHeaderPrefix):]; name {
		case "specversion":
			if v != event.CloudEventsVersionV1 {
				return e, fmt.Errorf("specversion: %q is not supported, want 1.0", v)
			}
		case "id":
			e.SetID(v)
		case "source":
			e.SetSource(v)
		case "type":
			e.SetType(v)
		case "subject":
			e.SetSubject(v)
		case "time":
			err = e.Context.SetTime(parseTimeAttr(v))
			if e.Time().IsZero() {
				err = fmt.Errorf("time: %q is not an RFC 3339 time", v)
			}
		case "dataschema":
			err = e.Context.SetDataSchema(v)
		case "datacontenttype":
			err = e.Context.SetDataContentType(v)
		default:
			err = e.Context.SetExtension(name, v)
		}
		if err != nil {
			return e, fmt.Errorf("%s: %w", lk[len(ceHeaderPrefix):], err)
		}
	}
	if size > maxBytes {
		return e, fmt.Errorf("event is %d bytes, over the %d byte limit", size, maxBytes)
	}
	if ct := hdr.Get(HeaderContentType); ct != "" && e.DataContentType() == "" {
		_ = e.Context.SetDataContentType(ct)
	}
	e.DataEncoded = data
	return e, nil
}
