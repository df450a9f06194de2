// Rule 2: workloads and Pods that a product controls run as the
// ServiceAccount its operator gives them.
//
// Reads: metadata.ownerReferences[*].controller, .apiVersion, .kind and .name
// of the object; serviceAccountName and deprecated serviceAccount of the pod
// spec (a Pod's spec, or the pod template spec of every workload kind in
// workload.Kinds()).
// Allows: anything when no controller ownerReference has a product API group;
// otherwise each of the two fields absent, null, "" or equal to
// Naming.ServiceAccount(owner group and kind, owner name). Any other value,
// including a non-string, is denied.

package serviceaccount

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// validateOwnedPod checks the pod inside obj, of kind gk, against the
// ServiceAccount naming gives the pods of its product controller.
//
// The API server admits at most one controller ownerReference. A client-side
// check can see more, so every controller reference with a product group is
// checked: a value must then match each of them, which fails closed.
func validateOwnedPod(gk schema.GroupKind, obj map[string]any, products policies.ProductSelector, naming Naming) []policies.Finding {
	refs, _ := fields.Slice(obj, "metadata", "ownerReferences")
	if len(refs) == 0 {
		return nil
	}
	pod, ok := workload.PodOf(gk, obj)
	if !ok {
		return nil
	}
	var findings []policies.Finding
	for _, item := range refs {
		ref, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if controller, _ := ref["controller"].(bool); !controller {
			continue
		}
		apiVersion, _ := fields.String(ref, "apiVersion")
		group := groupOf(apiVersion)
		if !products.Matches(group) {
			continue
		}
		kind, _ := fields.String(ref, "kind")
		name, _ := fields.String(ref, "name")
		want := naming.ServiceAccount(schema.GroupKind{Group: group, Kind: kind}, name)
		findings = append(findings, checkPodServiceAccount(pod, kind, name, want)...)
	}
	return findings
}

// checkPodServiceAccount reports the ServiceAccount fields of pod that differ
// from want, the name of its product owner kind/name's pods.
func checkPodServiceAccount(pod workload.Pod, kind, name, want string) []policies.Finding {
	ownerKnown := kind != "" && name != ""
	var findings []policies.Finding
	for i, f := range serviceAccountFields {
		v, set := pod.Spec[f]
		if !set || v == nil {
			continue
		}
		// The API server copies serviceAccountName into the deprecated
		// serviceAccount before admission, so the two usually hold the
		// same value: report it once, at the current field.
		if i > 0 && sameString(v, pod.Spec[serviceAccountFields[0]]) {
			continue
		}
		if s, isString := v.(string); isString && (s == "" || ownerKnown && s == want) {
			continue
		}
		path := pod.SpecPath.Child(f)
		if ownerKnown {
			findings = append(findings, policies.Denial(ServiceAccountMismatch, path, evidenceOf(v), msgMismatch, kind, name, want))
		} else {
			findings = append(findings, policies.Denial(ServiceAccountMismatch, path, evidenceOf(v), msgMismatchNoOwner))
		}
	}
	return findings
}

// sameString reports whether a and b are equal strings; values of other
// types (which may not even be comparable) never are.
func sameString(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	return aok && bok && as == bs
}

// groupOf returns the API group of an apiVersion: the part before "/", or
// the core group "" when there is no "/" (as in "v1").
func groupOf(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}
