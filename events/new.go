package events

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
)

// New builds a valid event for a Go agent: a random UUID id, the given
// source, type, namespace (DefaultNamespace when empty) and user, data
// marshalled as application/json, subject set to the data's session (none
// when the data has none), and time now. It returns Validate's error if
// the result is not valid. Set the agent with e.SetExtension(ExtAgent, name).
func New(source, eventType, namespace, user string, data any) (event.Event, error) {
	return build(source, eventType, newID(), namespace, user, time.Now(), data)
}

// NewDerived is New with the id and time chosen by the caller, for
// engram's workers. A worker derives both from what caused the event (the
// id from the cause's source and id, the time from the cause's time), so
// that a replay or a retried publish makes the same event, which the
// stream then drops as a duplicate, and so that time-dependent rules see
// the same time on every replay. The time must be one RFC 3339 can carry:
// not the zero time, and in the years 0000 to 9999.
func NewDerived(source, eventType string, id string, namespace, user string, t time.Time, data any) (event.Event, error) {
	if t.IsZero() {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, fieldErr("time", "required"))
	}
	// The envelope's time goes on the wire as RFC 3339 in UTC; a time that
	// would not parse back is refused here, not by the consumer.
	if _, err := parseTime(t.UTC().Format(time.RFC3339Nano)); err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, within("time", err))
	}
	return build(source, eventType, id, namespace, user, t, data)
}

func build(source, eventType, id, namespace, user string, t time.Time, data any) (event.Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return event.Event{}, fmt.Errorf("new %s event: marshal data: %w", eventType, err)
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	contentType := event.ApplicationJSON
	ctx := &event.EventContextV1{ID: id, Type: eventType, DataContentType: &contentType}
	// sdk-go stores the source parsed, so "a b" would quietly become
	// "a%20b": check it as DecodeStructured does, before it is changed.
	if err := checkURI("source", source, false); err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, err)
	}
	if err := ctx.SetSource(source); err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, fieldErr("source", err.Error()))
	}
	if err := ctx.SetTime(t.UTC()); err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, fieldErr("time", err.Error()))
	}
	for name, value := range map[string]string{ExtNamespace: namespace, ExtUser: user} {
		if err := ctx.SetExtension(name, value); err != nil {
			return event.Event{}, fmt.Errorf("new %s event: %w", eventType, fieldErr(name, err.Error()))
		}
	}
	e := event.Event{Context: ctx, DataEncoded: b}
	decoded, err := Validate(e)
	if err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, err)
	}
	if session := SessionID(decoded); session != "" {
		ctx.Subject = &session
	}
	return e, nil
}

// newID returns a random (version 4) UUID.
func newID() string {
	var u [16]byte
	rand.Read(u[:]) // never fails; see crypto/rand.Read
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
