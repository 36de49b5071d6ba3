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
// marshalled as application/json, subject set to the data's session, and
// time now. It returns Validate's error if the result is not valid. Set
// the agent with e.SetExtension(ExtAgent, name).
func New(source, eventType, namespace, user string, data any) (event.Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return event.Event{}, fmt.Errorf("new %s event: marshal data: %w", eventType, err)
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	contentType := event.ApplicationJSON
	ctx := &event.EventContextV1{ID: newID(), Type: eventType, DataContentType: &contentType}
	if err := ctx.SetSource(source); err != nil {
		return event.Event{}, fmt.Errorf("new %s event: %w", eventType, fieldErr("source", err.Error()))
	}
	if err := ctx.SetTime(time.Now().UTC()); err != nil {
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
	session := SessionID(decoded)
	ctx.Subject = &session
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
