package clusterstate

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// indexes are every index the policies' lookups need: the one table that
// CachedState registers as field indexes and `gatehouse check` applies to
// its --state objects (through IndexNames and IndexValues).
var indexes = slices.Concat(dependencygroup.Indexes(), harness.Indexes())

// cachedKinds are the kinds CachedState caches, each with the plural of its
// resource: a kind whose CRD is not installed has no objects (deploy/default
// installs none of helmetica's CRDs). Built-in kinds, served by every API
// server, have no CRD and no plural here. Every kind of indexes is one
// (TestEveryIndexedKindIsCached).
var cachedKinds = map[schema.GroupVersionKind]string{
	dependencygroup.GroupGVK:  "dependencygroups",
	dependencygroup.SourceGVK: "customresourcedefinitionsources",
	harness.GVK:               "operatorharnesses",
	harness.HelmeticaGVK:      "operatorharnesses",
	harness.ClusterRoleGVK:    "",
	harness.RoleGVK:           "",
}

// IndexNames returns the names of the indexes of gvk's objects; none for a
// kind no policy looks up.
func IndexNames(gvk schema.GroupVersionKind) []string {
	var out []string
	for _, idx := range indexes {
		if idx.GVK == gvk {
			out = append(out, idx.Name)
		}
	}
	return out
}

// IndexValues applies index name of gvk to obj, for readers that keep
// objects in memory (`gatehouse check`).
func IndexValues(gvk schema.GroupVersionKind, name string, obj map[string]any) []string {
	return policies.IndexValues(indexes, gvk, name, obj)
}
