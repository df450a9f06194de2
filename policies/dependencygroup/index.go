// The kinds DG and CRDS look up, and the indexes of the cluster view that
// answer State (state.go): the groups listing a CRD, the sources providing a
// group, the sources managing a scope. Each index is the function the review
// reads claims with (claims.go), so the view and the review cannot disagree.
//
// Reads: what claims.go reads. Allows: anything.

package dependencygroup

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// GroupGVK is the cluster-scoped DependencyGroup; SourceGVK the
// CustomResourceDefinitionSource, namespaced in helmetica and
// cluster-scoped in the string shape.
var (
	GroupGVK  = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "DependencyGroup"}
	SourceGVK = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "CustomResourceDefinitionSource"}
)

// The names of the indexes, as State asks them.
const (
	// IndexListedCRD finds groups by a CRD name in their spec.crds.
	IndexListedCRD = "gatehouse.crd"
	// IndexProvidedGroup finds sources by a group they provide.
	IndexProvidedGroup = "gatehouse.provides"
	// IndexManagedScope finds sources by a scope they manage.
	IndexManagedScope = "gatehouse.manages"
)

// Indexes are the indexes State is answered from.
func Indexes() []policies.Index {
	return []policies.Index{
		{GVK: GroupGVK, Name: IndexListedCRD, Values: ListedCRDs},
		{GVK: SourceGVK, Name: IndexProvidedGroup, Values: ProvidedGroups},
		{GVK: SourceGVK, Name: IndexManagedScope, Values: ManagedScopes},
	}
}
