package events

// RFC3339 is the pattern of a time, as the schemas write it.
var RFC3339 = rfc3339

// NewData is what DecodeData decodes the data of eventType into, with
// its defaults.
func NewData(eventType string) Data {
	r, _ := lookup(eventType)
	return r.new()
}
