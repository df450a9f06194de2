// This file holds the read-only view of the cluster that HARNESS needs
// (other OperatorHarnesses, and the roles bindings reference), and what a
// failed lookup reports.
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

	// ClusterRolesNamed returns the stored ClusterRole (rbac.authorization.k8s.io/v1)
	// called name: none or one, as decoded JSON with at least its name,
	// labels, rules and aggregationRule.
	ClusterRolesNamed(name string) ([]map[string]any, error)
	// ClusterRoles returns every stored ClusterRole, for aggregation rules.
	ClusterRoles() ([]map[string]any, error)
	// RolesNamed returns the Roles called name, in every namespace.
	RolesNamed(name string) ([]map[string]any, error)
}

// What a view that cannot answer was asked for.
const (
	viewHarnesses = "other OperatorHarnesses"
	viewRoles     = "roles and cluster roles"
)

func stateUnavailable(path *field.Path, view string) policies.Finding {
	return policies.Unratcheted(policies.StateUnavailable, path,
		"the webhook's view of %s is not available (cache not synced or failed), "+
			"so this harness cannot be checked against it; retry later", view)
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
