package webhooks

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// TestCachedStateDeniesUntilSynced: before its informers have synced the
// state answers errors (which the policies turn into StateUnavailable
// denials) and reports not ready.
func TestCachedStateDeniesUntilSynced(t *testing.T) {
	s, err := NewCachedState(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(nil); err == nil {
		t.Error("ready before the caches synced")
	}
	if _, err := s.Lookup(DependencyGroupGVK, "gatehouse.crd", "backups.k8s.mariadb.com"); err == nil {
		t.Error("a lookup answered before the caches synced")
	}
	if _, err := s.Exists(DependencyGroupGVK, "mariadb"); err == nil {
		t.Error("an existence check answered before the caches synced")
	}
	findings := policyState{s}
	if _, err := findings.HarnessesClaiming("ns", "sa"); err == nil {
		t.Error("a harness lookup answered before the caches synced")
	}
}

func TestKeepOnlyWhatIsRead(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
		"metadata": map[string]any{
			"name": "g", "creationTimestamp": "2026-11-30T12:00:00Z",
			"annotations":   map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
			"labels":        map[string]any{"a": "b"},
		},
		"spec":   map[string]any{"crds": []any{map[string]any{"name": "x.y.z"}}},
		"status": map[string]any{"state": "Accepted"},
	}}
	out, err := keepOnlyWhatIsRead(u)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	if got.GetAnnotations() != nil || got.GetManagedFields() != nil || got.GetLabels() != nil || got.Object["status"] != nil {
		t.Errorf("kept more than the lookups read: %v", got.Object)
	}
	if got.GetName() != "g" || got.GetCreationTimestamp().Time.IsZero() || IndexValues(DependencyGroupGVK, "gatehouse.crd", got.Object)[0] != "x.y.z" {
		t.Errorf("dropped what the lookups read: %v", got.Object)
	}
}

// TestKeepOnlyWhatIsReadOfRoles: RBAC roles keep their rules and
// aggregationRule (they have no spec), and ClusterRoles their labels, which
// aggregation rules select by.
func TestKeepOnlyWhatIsReadOfRoles(t *testing.T) {
	rules := []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"list"}}}
	agg := map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"x": "true"}}}}
	for _, kind := range []string{"ClusterRole", "Role"} {
		got := TrimForLookups(map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
			"metadata": map[string]any{"name": "r", "namespace": "n", "labels": map[string]any{"x": "true"},
				"annotations": map[string]any{"a": "b"}, "managedFields": []any{map[string]any{}}},
			"rules": rules, "aggregationRule": agg,
		})
		meta := got["metadata"].(map[string]any)
		if got["rules"] == nil || got["aggregationRule"] == nil || meta["annotations"] != nil || meta["managedFields"] != nil {
			t.Errorf("%s trimmed to %v", kind, got)
		}
		if (meta["labels"] != nil) != (kind == "ClusterRole") {
			t.Errorf("%s labels kept: %v", kind, meta["labels"])
		}
		if v := IndexValues(map[string]schema.GroupVersionKind{"ClusterRole": ClusterRoleGVK, "Role": RoleGVK}[kind], "gatehouse.name", got); len(v) != 1 || v[0] != "r" {
			t.Errorf("%s name index: %v", kind, v)
		}
	}
}

// TestTrimKeepsDeletionAndNarrowsHelmeticaHarnesses: a group being deleted
// is still known to be deleting after the trim (so it claims nothing), and
// of a helmetica.io OperatorHarness only scopeToLabel and operator are kept.
func TestTrimKeepsDeletionAndNarrowsHelmeticaHarnesses(t *testing.T) {
	group := TrimForLookups(map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
		"metadata": map[string]any{"name": "g", "deletionTimestamp": "2026-11-30T12:00:00Z"},
		"spec":     map[string]any{"crds": []any{map[string]any{"name": "x.y.z"}}},
	})
	if got := IndexValues(DependencyGroupGVK, "gatehouse.crd", group); len(got) != 0 {
		t.Errorf("a group being deleted is indexed under %v", got)
	}
	h := TrimForLookups(map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "OperatorHarness",
		"metadata": map[string]any{"name": "h"},
		"spec":     map[string]any{"scopeToLabel": "l", "operator": map[string]any{"namespace": "n"}, "mode": "Report"},
	})
	if spec := h["spec"].(map[string]any); len(spec) != 2 || spec["mode"] != nil {
		t.Errorf("helmetica harness spec kept %v", spec)
	}
	if got := IndexValues(HelmeticaHarnessGVK, "gatehouse.claimNamespace", h); len(got) != 1 || got[0] != "n" {
		t.Errorf("helmetica harness claimNamespace = %v", got)
	}
}

// TestSourceIndexesReadBothShapes: the view finds helmetica's list-shaped
// sources and the seed's string-shaped ones under the same values.
func TestSourceIndexesReadBothShapes(t *testing.T) {
	seed := map[string]any{"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
		"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"provides": "mariadb", "manages": "mariadb as m"}}
	upstream := map[string]any{"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
		"metadata": map[string]any{"name": "u", "namespace": "ns"}, "spec": map[string]any{
			"provides": []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb"}}},
			"manages":  []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb", "as": "m"}}},
		}}
	state := memState{objects: []map[string]any{seed, upstream}}
	for index, value := range map[string]string{"gatehouse.provides": "mariadb", "gatehouse.manages": "m"} {
		got, _ := state.Lookup(CRDSourceGVK, index, value)
		if !slices.Equal(got, []string{"s", "ns/u"}) {
			t.Errorf("%s %s: %v, want both sources by key", index, value, got)
		}
	}
}
