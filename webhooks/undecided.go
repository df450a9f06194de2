package webhooks

import (
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Undecided reviews: `gatehouse check` decides against the objects it is
// given, not against a cluster. When a member needs cluster state that check
// was not given (the Namespace of the object, a role a harness binds, the
// DependencyGroup a source requires), its view answers with *StateNotGiven,
// and the member's decision is DecisionUndecided, naming what was missing,
// instead of an allow that nothing supports (docs/design.md, "What check
// cannot decide"). The server's views never answer StateNotGiven, so a
// served review is never undecided.
//
// A member learns that its view was not given something in one of two ways:
//   - routing: the namespace's labels decide whether it applies (opt-in,
//     harnessed and scoped namespaces), and they are unknown;
//   - evaluation: its evaluator looked something up that the view did not
//     hold. The policies turn the failed lookup into a StateUnavailable
//     denial; the view remembers what it was asked for (StateGaps), so the
//     chain can tell the member it was for want of state check was not
//     given. A member whose other findings deny stays denied: those
//     findings hold whatever the missing state holds.

// DecisionUndecided is the decision of a member that could not decide
// offline for want of state check was not given (Decision.Missing).
const DecisionUndecided = "undecided"

// undecided is the decision of the member name that could not decide for
// want of missing.
func undecided(name string, missing []string) Decision {
	return Decision{Webhook: name, Outcome: DecisionUndecided, Response: admission.Allowed(""), Missing: missing}
}

// notGiven returns what err says the view was not given, if it says that.
func notGiven(err error) (string, bool) {
	var e *route.StateNotGiven
	if errors.As(err, &e) {
		return e.What, true
	}
	return "", false
}

// withMissing settles an offline decision taken while the view lacked
// missing: its StateUnavailable findings are what the view could not
// answer, so they go; a decision that other findings deny stays denied (and
// says what was missing); any other is undecided.
func withMissing(d Decision, missing []string) Decision {
	if len(missing) == 0 {
		return d
	}
	var content []policies.Finding
	denies := false
	for _, f := range d.Findings {
		if f.Code == policies.StateUnavailable {
			continue
		}
		content = append(content, f)
		denies = denies || f.Severity == policies.Deny
	}
	d.Findings, d.Missing = content, missing
	if d.Outcome == DecisionDenied && denies {
		return d
	}
	u := undecided(d.Webhook, missing)
	u.Findings, u.Mode, u.Duration = content, d.Mode, d.Duration
	return u
}

// takeGaps drains the offline view's gaps; none when it keeps none.
func (c *chain) takeGaps() []string {
	if c.opts.StateGaps == nil {
		return nil
	}
	return c.opts.StateGaps.TakeGaps()
}

// exemptionUnknown reports, offline, what the exemption check needed and
// was not given: the labels of the namespace, when an exemption names
// labels.
func (c *chain) exemptionUnknown(req *admission.Request, ns *namespaceView) (string, bool) {
	if c.serves != servesCheck || len(c.opts.Exemptions.NamespaceLabels) == 0 || !route.NamespacedRequest(req) {
		return "", false
	}
	_, err := ns.labels()
	return notGiven(err)
}
