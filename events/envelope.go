package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/go-json-experiment/json/jsontext"
)

// These patterns are the schemas' too (the generator writes them), so
// they mean the same in Go's RE2 and in ECMA-262, the dialect of other
// JSON Schema validators.
var (
	// application/json, lower case, with optional parameters. Not
	// application/<x>+json: sdk-go encodes data of any media type it does
	// not know as JSON as a string, so such an event would not survive
	// being passed on.
	jsonMediaType = regexp.MustCompile(`^application/json(;[\x20-\x7e]*)?$`)
	// RFC 3339 with an upper-case T and Z and at most nanosecond precision;
	// time.Parse then checks the calendar.
	rfc3339 = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$`)
)

// Validate checks a whole event against the contract and returns its data
// decoded by DecodeData, by the envelope rules of the package doc. Every
// error is a *FieldError naming the attribute, or the path into the data.
func Validate(e event.Event) (Data, error) {
	if e.Context == nil {
		return nil, fieldErr("specversion", "required")
	}
	if err := checkSpecVersion(e.SpecVersion()); err != nil {
		return nil, err
	}
	ctx, ok := e.Context.(*event.EventContextV1)
	if !ok {
		return nil, fieldErr("specversion", fmt.Sprintf("has an unexpected context %T", e.Context))
	}
	if len(e.FieldErrors) > 0 {
		// sdk-go's setters park their errors here instead of returning them.
		name := slices.Min(slices.Collect(maps.Keys(e.FieldErrors)))
		return nil, fieldErr(name, e.FieldErrors[name].Error())
	}
	if err := checkID("id", ctx.ID, true); err != nil {
		return nil, err
	}
	if err := checkURI("source", ctx.Source.String(), false); err != nil {
		return nil, err
	}
	if _, ok := lookup(ctx.Type); !ok {
		return nil, unknownType(ctx.Type)
	}
	if ctx.Subject != nil {
		if err := checkID("subject", *ctx.Subject, true); err != nil {
			return nil, err
		}
	}
	if ctx.DataContentType != nil && !jsonMediaType.MatchString(*ctx.DataContentType) {
		return nil, fieldErr("datacontenttype", fmt.Sprintf(
			"must be application/json (lower case, parameters allowed), not %s", quote(*ctx.DataContentType)))
	}
	if ctx.DataSchema != nil {
		if err := checkURI("dataschema", ctx.DataSchema.String(), true); err != nil {
			return nil, err
		}
	}
	if ctx.Time != nil && ctx.Time.IsZero() {
		return nil, zeroTime("time")
	}
	if err := checkExtensions(ctx.Extensions); err != nil {
		return nil, err
	}
	if e.DataBase64 {
		return nil, noBase64()
	}
	data, err := DecodeData(ctx.Type, e.Data())
	if err != nil {
		return nil, err
	}
	if ctx.Subject != nil {
		if err := checkSubject(*ctx.Subject, SessionID(data)); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// checkSubject holds the subject to the session and nothing else, so that
// a consumer that selects a session by subject gets its events and only
// them: data without a session takes no subject.
func checkSubject(subject, session string) error {
	switch {
	case subject == session:
		return nil
	case session == "":
		return fieldErr("subject", fmt.Sprintf("is %s but the data names no session; the subject carries the session, so leave it out",
			quote(subject)))
	}
	return fieldErr("subject", fmt.Sprintf("is %s but data.session_id is %s; the subject carries the session",
		quote(subject), quote(session)))
}

// Namespace returns the event's namespace extension, or DefaultNamespace.
func Namespace(e event.Event) string {
	if ns := extension(e, ExtNamespace); ns != "" {
		return ns
	}
	return DefaultNamespace
}

// User returns the event's user extension.
func User(e event.Event) string { return extension(e, ExtUser) }

// Agent returns the event's agent extension, or "".
func Agent(e event.Event) string { return extension(e, ExtAgent) }

func extension(e event.Event, name string) string {
	switch ctx := e.Context.(type) {
	case nil:
		return ""
	case *event.EventContextV1:
		// Not Extensions(), which copies the map on every call.
		s, _ := ctx.Extensions[name].(string)
		return s
	}
	s, _ := e.Extensions()[name].(string)
	return s
}

func checkSpecVersion(v string) error {
	switch v {
	case event.CloudEventsVersionV1:
		return nil
	case "":
		return fieldErr("specversion", "required")
	case event.CloudEventsVersionV03:
		return fieldErr("specversion", `0.3 is not accepted: engram takes CloudEvents 1.0 ("specversion": "1.0")`)
	}
	return fieldErr("specversion", fmt.Sprintf(`must be "1.0", not %s`, quote(v)))
}

// checkExtensions rejects any extension engram does not know, so that a
// misspelt "namespace" or "user" is an error rather than an event filed
// under the wrong tenant.
func checkExtensions(ext map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(ext)) {
		if !isExtension(name) {
			return unknownAttribute(name)
		}
		s, ok := ext[name].(string)
		if !ok {
			return fieldErr(name, fmt.Sprintf("must be a string, not %T", ext[name]))
		}
		if err := checkExtension(name, s); err != nil {
			return err
		}
	}
	if _, ok := ext[ExtUser]; !ok {
		return fieldErr(ExtUser, "required")
	}
	return nil
}

func isExtension(name string) bool {
	switch name {
	case ExtNamespace, ExtUser, ExtAgent, ExtTraceParent, ExtTraceState:
		return true
	}
	return false
}

func checkExtension(name, s string) error {
	if name != ExtTraceParent && name != ExtTraceState {
		return checkID(name, s, true)
	}
	switch {
	case s == "":
		return fieldErr(name, "must not be empty")
	case len(s) > MaxTraceBytes:
		return fieldErr(name, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxTraceBytes))
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return fieldErr(name, "must be printable ASCII")
		}
	}
	return nil
}

func unknownAttribute(name string) error {
	return fieldErr(join("", name), "is not an attribute engram accepts (CloudEvents 1.0 attributes and the extensions namespace, user, agent, traceparent, tracestate)")
}

func noBase64() error {
	return fieldErr("data_base64", `is not accepted: send the data as a JSON object in "data"`)
}

const zeroTimeProblem = "must not be the zero time 0001-01-01T00:00:00Z"

func zeroTime(field string) error {
	return fieldErr(field, zeroTimeProblem+" (leave time out instead)")
}

// checkURI accepts a URI reference only in the form it will be stored in:
// sdk-go keeps source as a url.URL, so "HTTP://A" would silently become
// "http://A" and the dedup key (id, source) would change under the producer.
func checkURI(field, s string, absolute bool) error {
	if last := lastURI.Load(); last != nil && last.s == s && last.absolute == absolute {
		return nil
	}
	if err := checkURIOnce(field, s, absolute); err != nil {
		return err
	}
	lastURI.Store(&acceptedURI{s: s, absolute: absolute})
	return nil
}

// lastURI is the URI reference checkURI last accepted: the events of a
// producer nearly all carry the same source, and parsing it is most of
// checking it.
var lastURI atomic.Pointer[acceptedURI]

type acceptedURI struct {
	s        string
	absolute bool
}

func checkURIOnce(field, s string, absolute bool) error {
	switch {
	case s == "":
		return fieldErr(field, "required")
	case len(s) > MaxURIBytes:
		return fieldErr(field, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), MaxURIBytes))
	case !utf8.ValidString(s):
		return fieldErr(field, "is not valid UTF-8")
	}
	for _, c := range s {
		if c <= 0x20 || c >= 0x7f && c <= 0x9f {
			return fieldErr(field, "must not contain spaces or control characters")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return fieldErr(field, "is not a URI reference: "+err.Error())
	}
	if u.String() != s {
		return fieldErr(field, fmt.Sprintf("is not in canonical form: send %s", quote(u.String())))
	}
	if absolute && u.Scheme == "" {
		return fieldErr(field, "must be an absolute URI")
	}
	return nil
}

// DecodeStructured parses one structured-mode CloudEvent
// (application/cloudevents+json) and validates it. It does its own parsing
// rather than sdk-go's, which would accept a numeric id as "", drop a
// repeated attribute, lower-case extension names and trim white space.
// Every attribute must be a JSON string, data a JSON object; data_base64 is
// refused. maxBytes ≤ 0 means DefaultMaxEventBytes; a larger event's error
// matches ErrTooLarge.
func DecodeStructured(b []byte, maxBytes int) (event.Event, Data, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxEventBytes
	}
	if len(b) > maxBytes {
		return event.Event{}, nil, &FieldError{Field: "event",
			Problem: fmt.Sprintf("is %d bytes; the limit is %d", len(b), maxBytes), err: ErrTooLarge}
	}
	attrs, data, err := readStructured(b)
	if err != nil {
		return event.Event{}, nil, err
	}
	// sdk-go stores source, dataschema and time parsed: each is checked
	// in the form it was sent before it is set and can change.
	ctx := &event.EventContextV1{ID: attrs["id"], Type: attrs["type"]}
	err = firstErr(
		checkSpecVersion(attrs["specversion"]),
		checkID("id", ctx.ID, true),
		checkURI("source", attrs["source"], false),
	)
	set := func(name string, set func() error) {
		if err == nil {
			if err = set(); err != nil {
				err = fieldErr(name, err.Error())
			}
		}
	}
	set("source", func() error { return ctx.SetSource(attrs["source"]) })
	for name, s := range attrs {
		switch {
		case err != nil:
		case name == "subject":
			ctx.Subject = &s
		case name == "datacontenttype":
			ctx.DataContentType = &s
		case name == "dataschema":
			if err = checkURI(name, s, true); err == nil {
				set(name, func() error { return ctx.SetDataSchema(s) })
			}
		case name == "time":
			t, perr := parseTime(s)
			if err = within(name, perr); err == nil {
				set(name, func() error { return ctx.SetTime(t) })
			}
		case isExtension(name):
			set(name, func() error { return ctx.SetExtension(name, s) })
		}
	}
	if err != nil {
		return event.Event{}, nil, err
	}
	e := event.Event{Context: ctx, DataEncoded: data}
	v, err := Validate(e)
	if err != nil {
		return event.Event{}, nil, err
	}
	return e, v, nil
}

// readStructured reads the attributes of a structured-mode event, each a
// string, and its data, a JSON object, token by token as sdk-go does; but
// it refuses what sdk-go would coerce or drop (a numeric id, a repeated
// attribute), and names an unknown attribute.
func readStructured(b []byte) (attrs map[string]string, data json.RawMessage, err error) {
	dec, done := tokens(b)
	defer done()
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, nil, translate("event", "", err)
	}
	if tok.Kind() != '{' {
		return nil, nil, fieldErr("event", "must be an object, not "+kindName(tok.Kind()))
	}
	attrs = make(map[string]string, 12)
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, translate("event", "", err)
		}
		name := tok.String()
		switch {
		case name == "data":
			v, err := dec.ReadValue()
			if err != nil {
				return nil, nil, translate("event", "", err)
			}
			if v.Kind() != '{' {
				return nil, nil, fieldErr("data", "must be a JSON object, not "+kindName(v.Kind()))
			}
			end := int(dec.InputOffset())
			data = b[end-len(v) : end : end]
			continue
		case name == "data_base64":
			return nil, nil, noBase64()
		case !isAttribute(name):
			return nil, nil, unknownAttribute(name)
		}
		if kind := dec.PeekKind(); kind != '"' {
			return nil, nil, fieldErr(join("", name), "must be a string, not "+kindName(kind))
		}
		if tok, err = dec.ReadToken(); err != nil {
			return nil, nil, translate("event", "", err)
		}
		attrs[name] = tok.String()
	}
	if _, err := dec.ReadToken(); err != nil { // }
		return nil, nil, translate("event", "", err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, nil, fieldErr("event", "has data after the JSON value")
	}
	return attrs, data, nil
}

// tokens returns a decoder of b's tokens, and done to hand it back: a
// decoder's buffers cost more than reading an envelope.
func tokens(b []byte) (dec *jsontext.Decoder, done func()) {
	t := tokenReaders.Get().(*tokenReader)
	t.r.Reset(b)
	t.dec.Reset(&t.r)
	return t.dec, func() { tokenReaders.Put(t) }
}

type tokenReader struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var tokenReaders = sync.Pool{New: func() any {
	t := new(tokenReader)
	t.dec = jsontext.NewDecoder(&t.r)
	return t
}}

func isAttribute(name string) bool {
	switch name {
	case "specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema":
		return true
	}
	return isExtension(name)
}

// parseTime reads an RFC 3339 time: the envelope's time or a time in the
// data.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	// time.Parse also takes a comma for the point and more than nine
	// digits after it, which the pattern, and so the schema, does not.
	point := strings.IndexAny(s, ".,")
	switch {
	case err == nil && point >= 0 && (s[point] == ',' || strings.IndexAny(s[point:], "Z+-") > 10),
		err != nil && !rfc3339.MatchString(strings.Clone(s)): // a clone, so s stays on the stack
		return time.Time{}, problem(fmt.Sprintf("must be an RFC 3339 timestamp like 2025-01-02T15:04:05Z, not %s", quote(s)))
	case err != nil:
		return time.Time{}, problem(fmt.Sprintf("is not a valid time: %s", quote(s)))
	case t.IsZero():
		return time.Time{}, problem(zeroTimeProblem)
	}
	return t, nil
}

// DecodeBatch splits a batch-mode body (application/cloudevents-batch+json,
// a JSON array of structured events) into the raw events, for
// DecodeStructured to take one by one. An empty batch is an error: it is
// always a producer's mistake.
func DecodeBatch(b []byte) ([]json.RawMessage, error) {
	dec, done := tokens(b)
	defer done()
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, translate("batch", "batch", err)
	}
	if tok.Kind() != '[' {
		return nil, fieldErr("batch", "must be an array, not "+kindName(tok.Kind()))
	}
	var out []json.RawMessage
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, translate(at("batch", len(out)), "batch", err)
		}
		end := int(dec.InputOffset())
		out = append(out, b[end-len(v):end:end])
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, translate("batch", "batch", err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, fieldErr("batch", "has data after the JSON value")
	}
	if len(out) == 0 {
		return nil, fieldErr("batch", "is empty")
	}
	return out, nil
}
