package events

// IsRFC3339 and RFC3339 are the hand-written matcher and the pattern it
// stands for.
var (
	IsRFC3339 = isRFC3339
	RFC3339   = rfc3339
)

// NewData is what DecodeData decodes the data of eventType into, with
// its defaults.
func NewData(eventType string) Data {
	r, _ := lookup(eventType)
	return r.new()
}
