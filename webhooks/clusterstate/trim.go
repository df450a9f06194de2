package clusterstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// keepOnlyWhatIsRead trims a cached object to what the lookups read: the
// name and creationTimestamp, and spec. Managed fields, annotations (with a
// last-applied-configuration as large as the object), labels and status are
// dropped, so the caches of a large cluster cost little memory.
func keepOnlyWhatIsRead(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		// Namespaces: the name and labels are all LABEL reads.
		m.ObjectMeta = metav1.ObjectMeta{
			Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, Labels: m.Labels,
		}
		return m, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.Object = TrimForLookups(u.Object)
	return u, nil
}

// TrimForLookups returns what the state lookups and their evaluators read of
// a cached object: apiVersion, kind, spec, and of metadata the name,
// namespace, creationTimestamp, deletionTimestamp (and uid and
// resourceVersion, which an informer needs); of RBAC roles, which have no
// spec, their rules and aggregationRule, and of ClusterRoles their labels
// too (aggregation rules select by label). The server's caches and
// `gatehouse check --state` keep the same.
//
// deletionTimestamp is kept because an object being deleted claims nothing
// (the DG and CRDS indexes skip it). Of a helmetica.io OperatorHarness only
// spec.scopeToLabel and spec.operator are kept: they are all it has, so a
// stray spec.mode never makes it a Report-mode harness.
func TrimForLookups(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, key := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"} {
		if v, ok := meta[key]; ok {
			kept[key] = v
		}
	}
	spec := obj["spec"]
	if obj["apiVersion"] == harness.HelmeticaGVK.GroupVersion().String() && obj["kind"] == harness.HelmeticaGVK.Kind {
		if m, ok := spec.(map[string]any); ok {
			only := map[string]any{}
			for _, key := range []string{"scopeToLabel", "operator"} {
				if v, ok := m[key]; ok {
					only[key] = v
				}
			}
			spec = only
		}
	}
	out := map[string]any{
		"apiVersion": obj["apiVersion"],
		"kind":       obj["kind"],
		"metadata":   kept,
		"spec":       spec,
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if gvk == harness.ClusterRoleGVK || gvk == harness.RoleGVK {
		delete(out, "spec")
		out["rules"] = obj["rules"]
		if v, ok := obj["aggregationRule"]; ok {
			out["aggregationRule"] = v
		}
		if gvk == harness.ClusterRoleGVK {
			if v, ok := meta["labels"]; ok {
				kept["labels"] = v
			}
		}
	}
	return out
}
