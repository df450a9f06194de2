// This file reviews helmetica's OperatorHarness (helmetica.io/v1, upstream
// chrysopoeia), which has only spec.scopeToLabel and spec.operator. It reads
// metadata.name, spec.scopeToLabel and spec.operator{namespace,
// serviceAccounts}, and allows what the vshn.net/v1 review allows of those
// fields in Enforce mode (harness.go, operator.go): a helmetica harness
// behaves as Enforce. The vshn.net-only fields (mode, roles, bindings,
// acknowledgements) do not exist there and are not read.
package harness

import (
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// HelmeticaKey is how State names a helmetica.io/v1 OperatorHarness, so that
// it and a vshn.net/v1 harness of the same name are two harnesses (a
// vshn.net harness is named by metadata.name).
func HelmeticaKey(name string) string { return "operatorharnesses.helmetica.io/" + name }

// ValidateHelmeticaHarness checks a helmetica.io/v1 OperatorHarness against
// the other harnesses of both groups in state. It returns the findings
// sorted.
func ValidateHelmeticaHarness(obj map[string]any, state State) []policies.Finding {
	r := &review{state: state, mode: ModeEnforce}
	name, _ := fields.String(obj, "metadata", "name")
	r.self = HelmeticaKey(name)
	r.checkScopeLabel(obj)
	r.checkOperator(obj)
	policies.Sort(r.findings)
	return r.findings
}
