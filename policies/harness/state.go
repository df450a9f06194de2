// This file holds the read-only view of other OperatorHarnesses that HARNESS
// needs, and what a failed lookup reports.
package harness

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// State is the read-only view of other OperatorHarnesses (cluster-scoped,
// named by metadata.name) the webhook fills from an informer cache with
// indexes. An error means the view cannot answer: the policy then denies with
// StateUnavailable, never allows. Lookups may include the harness under
// review; the policy excludes it.
type State interface {
	// HarnessesWithScopeLabel returns the harnesses whose spec.scopeToLabel
	// is label.
	HarnessesWithScopeLabel(label string) ([]string, error)
	// HarnessesClaiming returns the harnesses whose claim clashes with
	// (namespace, serviceAccount). A harness with an empty
	// spec.operator.serviceAccounts claims its whole namespace. So for a
	// service account it returns the harnesses listing that account in
	// namespace and those claiming the whole namespace; for an empty
	// serviceAccount ("the whole namespace") every harness with any claim in
	// namespace.
	HarnessesClaiming(namespace, serviceAccount string) ([]string, error)
}

const msgStateUnavailable = "the webhook's view of other OperatorHarnesses is not available (cache not synced or failed), " +
	"so this harness cannot be checked against them; retry later"

func stateUnavailable(path *field.Path) policies.Finding {
	return policies.Unratcheted(StateUnavailable, path, msgStateUnavailable)
}

// others returns names without self, sorted and unique.
func others(names []string, self string) []string {
	var out []string
	for _, name := range names {
		if name != self {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
