package clusterstate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
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
	if _, err := s.Lookup(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, "backups.k8s.mariadb.com"); err == nil {
		t.Error("a lookup answered before the caches synced")
	}
	if _, err := s.Exists(dependencygroup.GroupGVK, "mariadb"); err == nil {
		t.Error("an existence check answered before the caches synced")
	}
	for _, gvk := range harness.GVKs() {
		if _, err := s.Objects(gvk, harness.IndexClaim, "ns/sa"); err == nil {
			t.Errorf("a %s lookup answered before the caches synced", gvk)
		}
	}
	if _, err := s.NamespaceLabels("ns"); err == nil {
		t.Error("namespace labels answered before the caches synced")
	}
}

// TestEveryIndexedKindIsCached: CachedState watches every kind a policy
// looks up, under its CRD's name when it has one.
func TestEveryIndexedKindIsCached(t *testing.T) {
	for _, idx := range indexes {
		plural, ok := cachedKinds[idx.GVK]
		if !ok {
			t.Errorf("index %s of %s: the kind is not cached", idx.Name, idx.GVK)
		}
		if builtin := idx.GVK.Group == "" || strings.HasSuffix(idx.GVK.Group, ".k8s.io"); builtin != (plural == "") {
			t.Errorf("%s: plural %q; a kind served by a CRD needs its plural, a built-in one none", idx.GVK, plural)
		}
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
	if got.GetName() != "g" || got.GetCreationTimestamp().Time.IsZero() || IndexValues(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, got.Object)[0] != "x.y.z" {
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
		if v := IndexValues(map[string]schema.GroupVersionKind{"ClusterRole": harness.ClusterRoleGVK, "Role": harness.RoleGVK}[kind], harness.IndexName, got); len(v) != 1 || v[0] != "r" {
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
	if got := IndexValues(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, group); len(got) != 0 {
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
	if got := IndexValues(harness.HelmeticaGVK, harness.IndexClaimNamespace, h); len(got) != 1 || got[0] != "n" {
		t.Errorf("helmetica harness claimNamespace = %v", got)
	}
}
