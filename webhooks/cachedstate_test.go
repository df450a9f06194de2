package webhooks

import (
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
