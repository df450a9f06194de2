package dependencygroup

import (
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestSourceIndexesReadBothShapes: the view finds helmetica's list-shaped
// sources and the string-shaped ones under the same values, each by
// its own key.
func TestSourceIndexesReadBothShapes(t *testing.T) {
	seed := map[string]any{"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
		"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"provides": "mariadb", "manages": "mariadb as m"}}
	upstream := map[string]any{"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
		"metadata": map[string]any{"name": "u", "namespace": "ns"}, "spec": map[string]any{
			"provides": []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb"}}},
			"manages":  []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb", "as": "m"}}},
		}}
	for index, value := range map[string]string{IndexProvidedGroup: "mariadb", IndexManagedScope: "m"} {
		for _, src := range []map[string]any{seed, upstream} {
			if got := policies.IndexValues(Indexes(), SourceGVK, index, src); !slices.Equal(got, []string{value}) {
				t.Errorf("%s of %s: %v, want [%s]", index, ObjectKey(src), got, value)
			}
		}
	}
	if ObjectKey(seed) != "s" || ObjectKey(upstream) != "ns/u" {
		t.Errorf("keys %q and %q, want s and ns/u", ObjectKey(seed), ObjectKey(upstream))
	}
}

// TestGroupIndexSkipsGroupsBeingDeleted: a group is found under each CRD it
// lists, once, and under none while it is being deleted.
func TestGroupIndexSkipsGroupsBeingDeleted(t *testing.T) {
	group := map[string]any{"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"crds": []any{
		map[string]any{"name": "a.example.com"}, map[string]any{"name": "b.example.com"}, map[string]any{"name": "a.example.com"},
	}}}
	if got := policies.IndexValues(Indexes(), GroupGVK, IndexListedCRD, group); !slices.Equal(got, []string{"a.example.com", "b.example.com"}) {
		t.Errorf("listed CRDs %v", got)
	}
	group["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-30T12:00:00Z"
	if got := policies.IndexValues(Indexes(), GroupGVK, IndexListedCRD, group); len(got) != 0 {
		t.Errorf("a group being deleted is found under %v", got)
	}
}
