package exception

import "github.com/gatehouse-dev/gatehouse/policies"

// Excusable reports whether any exception may excuse f: only a finding
// about the object's content may. A finding about the review or the view
// (the cluster view could not answer, an input past a limit, a parse
// failure, a role that cannot be read) is reported without evidence
// (policies.Unratcheted), never ratchets and is never excused, whatever an
// exception's codes say: an exception is a decision about an object someone
// has looked at, and those findings say that gatehouse could not look.
// StateUnavailable is refused by its code as well, should it ever be built
// with evidence.
func Excusable(f policies.Finding) bool {
	return f.Ratchets() && excusableCode(f.Code)
}

// excusableCode reports whether a finding with code c can ever be excused.
func excusableCode(c policies.Code) bool {
	return c != policies.StateUnavailable
}
