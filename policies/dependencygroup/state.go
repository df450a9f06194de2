// This file holds the read-only view of other objects that DG and CRDS need,
// and what a failed lookup reports. It reads nothing from the object under
// review.
package dependencygroup

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// State is the read-only view of other objects the webhook fills from
// informer caches with indexes (O(1) lookups). An error means the view cannot
// answer (unsynced or failed cache): the policy then denies with
// StateUnavailable, never allows.
//
// Lookups return ObjectKeys: metadata.name for the cluster-scoped
// DependencyGroup and a string-shaped cluster-scoped source,
// "<namespace>/<name>" for helmetica's namespaced source. Claims are
// cluster-wide whatever the namespace. Lookups may include the object under
// review (an UPDATE, or the cache echoing a CREATE); the policy excludes it
// by its key. Objects being deleted claim nothing: the indexes behind
// GroupsListingCRD, SourcesProviding and SourcesManaging are ListedCRDs,
// ProvidedGroups and ManagedScopes, which return nothing for them.
type State interface {
	// GroupsListingCRD returns the names of the DependencyGroups whose
	// spec.crds lists crdName.
	GroupsListingCRD(crdName string) ([]string, error)
	// SourcesProviding returns the keys of the sources providing group.
	SourcesProviding(group string) ([]string, error)
	// SourcesManaging returns the keys of the sources whose managed scope
	// (the alias, else the group) is scope.
	SourcesManaging(scope string) ([]string, error)
	// GroupExists reports whether a DependencyGroup named name exists.
	GroupExists(name string) (bool, error)
}

const msgStateUnavailable = "the webhook's view of other objects is not available (cache not synced or failed), " +
	"so this object cannot be checked against them; retry later"

// stateUnavailable is the one finding a review reports when a lookup fails;
// path is the field that needed the lookup.
func stateUnavailable(path *field.Path) policies.Finding {
	return policies.Unratcheted(policies.StateUnavailable, path, msgStateUnavailable)
}

// others returns names without self, sorted, without allocating when
// nothing remains.
func others(names []string, self string) []string {
	n := 0
	for _, name := range names {
		if name != self {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for _, name := range names {
		if name != self {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
