package events

import (
	"embed"
	"fmt"
)

// Schemas holds the JSON Schemas (draft 2020-12) of the contract, for
// agents in other languages: schema/<type>.json for each event type's data
// and schema/cloudevent.json for the whole structured-mode event, which
// refers to the others by relative reference. Their $id is SchemaBaseURL +
// file name. They are written from the Go types by go generate.
//
//go:embed schema/*.json
var Schemas embed.FS

//go:generate go test -run ^TestSchemaFiles$ -update

// SchemaBaseURL is where the schemas live in the repository, and the base
// of their $id.
const SchemaBaseURL = "https://raw.githubusercontent.com/engramhq/engram/main/events/schema/"

// SchemaEnvelope is the name Schema takes for the envelope's schema.
const SchemaEnvelope = "cloudevent"

// Schema returns the JSON Schema of an event type's data, or of the whole
// event for SchemaEnvelope.
func Schema(eventType string) ([]byte, error) {
	if _, ok := lookup(eventType); !ok && eventType != SchemaEnvelope {
		return nil, fmt.Errorf("schema: %w", unknownType(eventType))
	}
	return Schemas.ReadFile("schema/" + eventType + ".json")
}
