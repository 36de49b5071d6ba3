package events

import "encoding/json"

// The two modes of reader, one at a time, for the tests that hold the
// scanner to encoding/json's tokenizer.

// ScanData reads data with the scanner alone.
func ScanData(eventType string, data []byte) (any, error) {
	return readOnce(newScanner(data, "data"), func(r *reader) (any, error) { return decodeData(r, eventType) })
}

// TokenData reads data with encoding/json's tokenizer alone, as DecodeData
// did before the scanner.
func TokenData(eventType string, data []byte) (any, error) {
	if err := checkText(data, "data"); err != nil {
		return nil, err
	}
	return readOnce(newReader(data, "data"), func(r *reader) (any, error) { return decodeData(r, eventType) })
}

// Structured is what DecodeStructured reads before it checks anything.
type Structured struct {
	Attrs map[string]string
	Data  json.RawMessage
}

func ScanStructured(b []byte) (Structured, error) {
	doc, err := readOnce(newScanner(b, "event"), readStructured)
	return Structured{doc.attrs, doc.data}, err
}

func TokenStructured(b []byte) (Structured, error) {
	if err := checkText(b, "event"); err != nil {
		return Structured{}, err
	}
	doc, err := readOnce(newReader(b, "event"), readStructured)
	return Structured{doc.attrs, doc.data}, err
}

func ScanBatch(b []byte) ([]json.RawMessage, error) {
	return readOnce(newScanner(b, "batch"), readBatch)
}

func TokenBatch(b []byte) ([]json.RawMessage, error) {
	if err := checkText(b, "batch"); err != nil {
		return nil, err
	}
	return readOnce(newReader(b, "batch"), readBatch)
}

// IsRFC3339 and RFC3339 are the hand-written matcher and the pattern it
// stands for.
var (
	IsRFC3339 = isRFC3339
	RFC3339   = rfc3339
)
