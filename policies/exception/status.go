package exception

import "time"

// State is what an exception did, as reports show it.
type State string

// The states, in the order Statuses decides them: the first that holds.
const (
	// StateDisabled: an Exception while the configuration does not let
	// namespaces hold their own; it excuses nothing.
	StateDisabled State = "Disabled"
	// StateInvalid: it breaks a rule of what an exception may say (a
	// match that selects everything or cannot be evaluated, no reason),
	// or its expiry lies further away than the maximum duration; it
	// excuses nothing.
	StateInvalid State = "Invalid"
	// StateExpired: the expiry has passed; it excuses nothing.
	StateExpired State = "Expired"
	// StateUsed: it excused at least one finding in the period counted.
	StateUsed State = "Used"
	// StateUnused: in force, but it excused nothing in the period counted:
	// it matches no object, or none with a finding it names.
	StateUnused State = "Unused"
)

// Status is one exception's line in a report.
type Status struct {
	// Name is the exception's Key.
	Name    string
	State   State
	Expires time.Time
	// Excused is the number of findings it excused in the period counted.
	Excused int
}

// Statuses returns, for every exception of the index in key order, its
// state at now. excused counts, by key, the findings that Excuse named an
// exception for over the period reported (an audit pass): an exception is
// Used when it excused something there, and matching an object whose
// findings it does not name is not use. An expired exception is Expired
// even if it excused findings earlier in the period; Excused still counts
// them.
func (ix *Index) Statuses(now time.Time, excused map[string]int) []Status {
	if ix == nil {
		return nil
	}
	out := make([]Status, len(ix.entries))
	for i := range ix.entries {
		c := &ix.entries[i]
		s := Status{Name: c.key, Expires: c.expires, Excused: excused[c.key]}
		switch {
		case c.state != "":
			s.State = c.state
		case !now.Before(c.expires):
			s.State = StateExpired
		case ix.tooFar(c.expires, now):
			s.State = StateInvalid
		case s.Excused > 0:
			s.State = StateUsed
		default:
			s.State = StateUnused
		}
		out[i] = s
	}
	return out
}
