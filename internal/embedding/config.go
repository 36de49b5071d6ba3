package embedding

import (
	"fmt"

	"github.com/engramhq/engram/events"
)

// Config says which model the vectors are of and how the work is cut up.
// New fills zero fields from DefaultConfig; Model has no default.
type Config struct {
	// Model is the embedding model's name, recorded in every event: the
	// read model keeps vectors of different models apart. It must be the
	// model the Client asks for.
	Model string
	// Batch is the most texts sent in one request.
	Batch int
	// MaxText is the most bytes of a text that are embedded; a longer text
	// is cut at a rune boundary, and its vector is still filed under the
	// hash of the whole text, which is what the read model looks up.
	MaxText int
	// MaxEventBytes bounds one published event, envelope included; a
	// scope's vectors are split over as many events as that takes. It must
	// not exceed the consumers' limit (http.max_event_bytes).
	MaxEventBytes int
	// Remember is how many (scope, model, hash) keys already published are
	// remembered, so a redelivered batch or a repeated fact does not call
	// the model again.
	Remember int
}

// DefaultConfig returns the defaults, without a model.
func DefaultConfig() Config {
	return Config{Batch: 64, MaxText: 8000, MaxEventBytes: events.DefaultMaxEventBytes, Remember: 100_000}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Batch == 0 {
		c.Batch = d.Batch
	}
	if c.MaxText == 0 {
		c.MaxText = d.MaxText
	}
	if c.MaxEventBytes == 0 {
		c.MaxEventBytes = d.MaxEventBytes
	}
	if c.Remember == 0 {
		c.Remember = d.Remember
	}
	return c
}

// Validate names the first bad field, after zero fields take their
// defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Model == "":
		return fmt.Errorf("model: required")
	case len(c.Model) > events.MaxEmbeddingModelBytes:
		return fmt.Errorf("model: %d bytes is over %d", len(c.Model), events.MaxEmbeddingModelBytes)
	case c.Batch < 1 || c.Batch > 2048:
		return fmt.Errorf("batch: %d is outside 1..2048", c.Batch)
	case c.MaxText < 16:
		return fmt.Errorf("max_text: %d is below 16", c.MaxText)
	case c.MaxEventBytes < minEventBytes:
		return fmt.Errorf("max_event_bytes: %d is below %d", c.MaxEventBytes, minEventBytes)
	case c.Remember < 1:
		return fmt.Errorf("remember: %d is below 1", c.Remember)
	}
	return nil
}

// minEventBytes leaves room for the envelope and one small vector.
const minEventBytes = 2 * envelopeBytes
