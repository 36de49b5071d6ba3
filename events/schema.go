package events

import (
	"embed"
	"fmt"
)

// Schemas holds the JSON Schemas (draft 2020-12) of the contract, for
// agents in other languages: schema/<type>.json for each event type's data
// and schema/cloudevent.json for the whole structured-mode event. Their
// $id is SchemaBaseURL + file name, and they refer to each other by
// relative reference.
//
//go:embed schema/*.json
var Schemas embed.FS

// SchemaBaseURL is where the schemas live in the repository, and the base
// of their $id.
const SchemaBaseURL = "https://raw.githubusercontent.com/engramhq/engram/main/events/schema/"

// SchemaEnvelope is the name Schema takes for the envelope's schema.
const SchemaEnvelope = "cloudevent"

// Schema returns the JSON Schema of an event type's data, or of the whole
// event for SchemaEnvelope.
func Schema(eventType string) ([]byte, error) {
	if eventType != SchemaEnvelope && !knownType(eventType) {
		return nil, fmt.Errorf("schema: %w", unknownType(eventType))
	}
	return Schemas.ReadFile("schema/" + eventType + ".json")
}
