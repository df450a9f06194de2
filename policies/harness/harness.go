// This file is the entry point of HARNESS and checks the scope label. It
// reads metadata.name, spec.mode and spec.scopeToLabel, and allows:
//
//   - mode: unset (Enforce), Enforce or Report;
//   - scopeToLabel: a valid label key (IsQualifiedName) whose prefix
//     Kubernetes does not reserve (kubernetes.io, k8s.io and their
//     subdomains: Kubernetes sets such labels itself, kubernetes.io/metadata.name
//     on every namespace), used by no other harness
//     (State.HarnessesWithScopeLabel); required in Enforce mode,
//     where it scopes every cluster-wide grant, optional in Report mode,
//     which only discovers what the operator does.
//
// The operator's claims are in operator.go, the review of grants in
// grants.go, bindings.go, dangerous.go and acknowledgements.go.
package harness

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// Modes of a harness (spec.mode of api/harness/v1).
const (
	ModeEnforce = "Enforce"
	ModeReport  = "Report"
)

var (
	pathMode         = field.NewPath("spec", "mode")
	pathScopeToLabel = field.NewPath("spec", "scopeToLabel")
)

// review carries what the checks of one harness share.
type review struct {
	self        string
	mode        string
	scopeLabel  string
	state       State
	unavailable bool
	findings    []policies.Finding
}

// ValidateHarness checks an OperatorHarness (vshn.net/v1) against the other
// harnesses in state. It returns the findings sorted.
func ValidateHarness(obj map[string]any, state State) []policies.Finding {
	r := &review{state: state}
	r.self, _ = fields.String(obj, "metadata", "name")
	r.checkMode(obj)
	r.checkScopeLabel(obj)
	r.checkOperator(obj)
	r.checkGrants(obj)
	policies.Sort(r.findings)
	return r.findings
}

// checkMode sets r.mode. An invalid mode is denied and reviewed as Enforce.
func (r *review) checkMode(obj map[string]any) {
	r.mode = ModeEnforce
	v, set := fields.Map(obj, "spec")
	if !set || v["mode"] == nil {
		return
	}
	switch mode, _ := v["mode"].(string); mode {
	case ModeEnforce, ModeReport:
		r.mode = mode
	default:
		r.findings = append(r.findings, policies.Denial(HarnessModeInvalid, pathMode, mode,
			"mode is %s or %s (unset means %s)", ModeEnforce, ModeReport, ModeEnforce))
	}
}

func (r *review) checkScopeLabel(obj map[string]any) {
	label, set := fields.String(obj, "spec", "scopeToLabel")
	if !set || label == "" {
		if r.mode == ModeEnforce {
			r.findings = append(r.findings, policies.Denial(HarnessScopeLabelInvalid, pathScopeToLabel, "",
				"an enforcing harness needs a scopeToLabel: the label that scopes its cluster-wide grants"))
		}
		return
	}
	if len(validation.IsQualifiedName(label)) != 0 {
		r.findings = append(r.findings, policies.Denial(HarnessScopeLabelInvalid, pathScopeToLabel, label,
			"scopeToLabel is not a valid label key ([prefix/]name, the name at most 63 characters)"))
		return
	}
	if reservedLabelKey(label) {
		r.findings = append(r.findings, policies.Denial(HarnessScopeLabelReserved, pathScopeToLabel, label,
			"scopeToLabel has a prefix Kubernetes reserves (kubernetes.io, k8s.io or a subdomain of either); "+
				"Kubernetes sets such labels itself (kubernetes.io/metadata.name is on every namespace), so they scope nothing"))
		return
	}
	r.scopeLabel = label
	if r.unavailable {
		return
	}
	harnesses, err := r.state.HarnessesWithScopeLabel(label)
	if err != nil {
		r.fail(pathScopeToLabel, viewHarnesses)
		return
	}
	if claimed := others(harnesses, r.self); len(claimed) > 0 {
		r.findings = append(r.findings, policies.Denial(HarnessScopeLabelClaimed, pathScopeToLabel, label,
			"scope label %s is already used by %s %s; each harness scopes by its own label",
			label, policies.Plural(len(claimed), "OperatorHarness object"), strings.Join(claimed, ", ")))
	}
}

// reservedLabelKey reports whether a valid label key's prefix is one
// Kubernetes reserves for its own labels: kubernetes.io, k8s.io, or a
// subdomain of either (node.kubernetes.io, ...). Prefixes are lowercase DNS
// subdomains, so the comparison is exact.
func reservedLabelKey(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, reserved := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == reserved || strings.HasSuffix(prefix, "."+reserved) {
			return true
		}
	}
	return false
}

func (r *review) fail(path *field.Path, view string) {
	r.unavailable = true
	r.findings = append(r.findings, stateUnavailable(path, view))
}
