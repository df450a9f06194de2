// Package policies holds what every contract evaluator shares: the Finding it
// reports. Each contract lives in its own sub-package and is a pure function:
// objects in, findings (and for mutating contracts a mutated object) out. No
// package under policies/ imports a Kubernetes client, a logger or the
// webhook layer.
package policies

import (
	"fmt"
	"hash/fnv"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Code is a stable, machine-readable finding identifier. Codes are public API:
// they appear in denials, audit annotations, metrics and `gatehouse check`.
type Code string

// StateUnavailable: the webhook's view of other objects (namespaces,
// OperatorHarnesses, roles, DependencyGroups, ...) could not answer a lookup
// the review needs (cache unsynced or failed, no cluster access), so the
// review cannot be completed. It is the one code every policy that reads
// that view denies with; it is never excused by ratcheting (it carries no
// evidence: policies.Unratcheted) and always denies, never allows.
const StateUnavailable Code = "StateUnavailable"

// Severity says whether a finding denies the request or only warns.
type Severity int

const (
	// Deny makes the request fail.
	Deny Severity = iota
	// Warn reaches the client as an admission warning; the request passes.
	Warn
)

// Finding is one problem found in one field of an object.
//
// Message is written by the policy and never contains a value taken from the
// object other than names, keys and field paths. Evidence identifies the
// offending value by hash, so that the webhook layer can tell on UPDATE
// whether the value changed (ratcheting) without the finding carrying the
// value itself. A finding about the review or the view rather than the
// object's content (an unreadable cluster view, an input past a limit, a
// parse failure) has NoEvidence and never ratchets: it denies an UPDATE
// exactly as a CREATE (docs/design.md, "Ratcheting").
type Finding struct {
	Code     Code
	Field    string
	Message  string
	Severity Severity
	Evidence uint64
}

// Denial builds a denying finding at path.
func Denial(code Code, path *field.Path, evidence string, format string, args ...any) Finding {
	return newFinding(Deny, code, path, evidence, format, args...)
}

// Unratcheted builds a denying finding about the review or the view rather
// than the object's content: a limit that kept the evaluator from seeing part
// of the object, a parse failure, a cluster view that cannot answer. It
// carries NoEvidence, so an UPDATE never turns it into a warning, however
// the old object fared.
func Unratcheted(code Code, path *field.Path, format string, args ...any) Finding {
	f := newFinding(Deny, code, path, "", format, args...)
	f.Evidence = NoEvidence
	return f
}

// Ratchets reports whether the finding may be downgraded to a warning on an
// UPDATE whose old object has the same finding with the same evidence.
func (f Finding) Ratchets() bool { return f.Evidence != NoEvidence }

// Warning builds a warning finding at path.
func Warning(code Code, path *field.Path, evidence string, format string, args ...any) Finding {
	return newFinding(Warn, code, path, evidence, format, args...)
}

func newFinding(sev Severity, code Code, path *field.Path, evidence string, format string, args ...any) Finding {
	return Finding{
		Code:     code,
		Field:    path.String(),
		Message:  fmt.Sprintf(format, args...),
		Severity: sev,
		Evidence: Fingerprint(evidence),
	}
}

// NoEvidence is the Evidence of a finding that never ratchets.
const NoEvidence uint64 = 0

// Fingerprint hashes an offending value for Finding.Evidence. It never
// returns NoEvidence, so every content finding can ratchet.
func Fingerprint(value string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(value))
	if sum := h.Sum64(); sum != NoEvidence {
		return sum
	}
	return 1
}

// Sort orders findings by field path, then code, then message, so that every
// rendering of them is deterministic.
func Sort(findings []Finding) {
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// Denied reports whether any finding denies.
func Denied(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == Deny {
			return true
		}
	}
	return false
}

// Plural returns word with an "s" unless n is 1; messages use it so that their
// wording is uniform.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
