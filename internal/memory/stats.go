package memory

import "time"

// DefaultWrongWriteWindow is how soon after it was written a memory must be
// ignored or superseded to count as a wrong write.
const DefaultWrongWriteWindow = 7 * 24 * time.Hour

// Stats are a namespace's counts and its memory-quality figures (seed 004
// §9), read from the read model: they come from events alone, so they
// survive restarts and a rebuild gives the same figures.
type Stats struct {
	Namespace string `json:"namespace"`
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

	// Written are the memories written (active or pending); WrongWrites
	// those of them ignored, rejected or superseded within WindowDays of
	// being written; WrongWriteRate is WrongWrites / Written.
	WindowDays     float64 `json:"window_days"`
	Written        int     `json:"written"`
	WrongWrites    int     `json:"wrong_writes"`
	WrongWriteRate float64 `json:"wrong_write_rate"`
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
