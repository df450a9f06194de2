// This file says what an object claims, for the indexes of the cluster view
// (the webhook's informer indexes and `check --state` apply these same
// functions) and for the review of the object itself. It reads
// metadata.name, metadata.namespace, metadata.deletionTimestamp,
// spec.crds[*].name of a DependencyGroup and spec.provides and spec.manages
// of a CustomResourceDefinitionSource in both shapes (sourceRefs).
//
// Allows: anything; values of the wrong type claim nothing. An object with a
// deletionTimestamp claims nothing, so that its successor can be created
// while it is being deleted (upstream, helmetica).
package dependencygroup

import (
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// ObjectKey identifies an object to State and in messages:
// "<namespace>/<name>" for a namespaced object (a helmetica
// CustomResourceDefinitionSource), metadata.name for a cluster-scoped one.
// An object never clashes with itself: the review drops its own key from
// every lookup.
func ObjectKey(obj map[string]any) string {
	name, _ := fields.String(obj, "metadata", "name")
	if ns, _ := fields.String(obj, "metadata", "namespace"); ns != "" {
		return ns + "/" + name
	}
	return name
}

// Deleting reports whether obj has a deletionTimestamp.
func Deleting(obj map[string]any) bool {
	meta, _ := fields.Map(obj, "metadata")
	ts, set := meta["deletionTimestamp"]
	return set && ts != nil && ts != ""
}

// ListedCRDs returns the non-empty names of a DependencyGroup's spec.crds,
// in order, each once; none for a group being deleted.
func ListedCRDs(group map[string]any) []string {
	if Deleting(group) {
		return nil
	}
	crds, _ := fields.Slice(group, "spec", "crds")
	var out []string
	seen := map[string]bool{}
	for _, item := range crds {
		entry, _ := item.(map[string]any)
		if name, _ := fields.String(entry, "name"); name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// ProvidedGroups returns the groups a source provides, in either shape; none
// for a source being deleted.
func ProvidedGroups(source map[string]any) []string {
	if Deleting(source) {
		return nil
	}
	refs, _, _ := sourceRefs(source, "provides")
	var out []string
	for _, r := range refs {
		out = appendNew(out, r.name)
	}
	return out
}

// ManagedScopes returns the scopes a source manages (the alias, else the
// group), in either shape; none for a source being deleted or whose seed
// manages does not parse.
func ManagedScopes(source map[string]any) []string {
	if Deleting(source) {
		return nil
	}
	refs, _, err := sourceRefs(source, "manages")
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range refs {
		out = appendNew(out, r.scope())
	}
	return out
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, have := range list {
		if have == s {
			return list
		}
	}
	return append(list, s)
}
