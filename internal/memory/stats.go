package memory

import "time"

// DefaultWrongWriteWindow is how soon after it was written a memory must be
// superseded to count as superseded soon.
const DefaultWrongWriteWindow = 7 * 24 * time.Hour

// Stats are the counts and memory-quality figures (seed 004 §9) of a
// namespace, or of one user of it, read from the read model: they come
// from events alone, so they survive restarts and a rebuild gives the
// same figures.
type Stats struct {
	Namespace string `json:"namespace"`
	User      string `json:"user,omitempty"`
	Users     int    `json:"users"`
	Turns     int    `json:"turns"`
	Episodes  int    `json:"episodes"`
	// Memories counts memories by status (active, pending, superseded,
	// rejected, archived).
	Memories map[string]int `json:"memories"`

	// Confirmed and Ignored are the pending candidates the users decided;
	// ConfirmationRate is Confirmed / (Confirmed + Ignored), 0 when none
	// was decided.
	Confirmed        int     `json:"confirmed"`
	Ignored          int     `json:"ignored"`
	ConfirmationRate float64 `json:"confirmation_rate"`

	// WrongWrites are the candidates the users rejected (ignored), and
	// WrongWriteRate is seed 004 §9's rejected / confirmed: 0.5 when one
	// was rejected for every two confirmed, above 1 when more were
	// rejected than confirmed, 0 when none was confirmed. A memory
	// replaced by a newer one (the user moved, upgraded) is an update, not
	// a wrong write.
	WrongWrites    int     `json:"wrong_writes"`
	WrongWriteRate float64 `json:"wrong_write_rate"`

	// Written are the memories written (active or pending); SupersededSoon
	// those of them replaced within WindowDays of being written: updates
	// and corrections alike, the churn of what was written.
	WindowDays     float64 `json:"window_days"`
	Written        int     `json:"written"`
	SupersededSoon int     `json:"superseded_soon"`
}

// Ratio is n/d, 0 when d is 0.
func Ratio(n, d float64) float64 {
	if d == 0 {
		return 0
	}
	return n / d
}

// UserSummary is one user of a namespace and what engram holds of them,
// for an operator's list of users.
type UserSummary struct {
	User     string    `json:"user"`
	Memories int       `json:"memories"` // active
	Pending  int       `json:"pending"`  // waiting for the user's confirmation
	Sessions int       `json:"sessions"`
	Turns    int       `json:"turns"`     // recorded
	LastSeen time.Time `json:"last_seen"` // the last turn, or the last change to a memory
}
