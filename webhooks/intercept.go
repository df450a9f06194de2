package webhooks

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Resource is one built-in resource a webhook intercepts, with the kind the
// API server sends for it.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Intercept is what a webhook receives. The same value routes objects in
// `gatehouse check` (Matches) and renders the rules and matchConditions of the
// webhook configurations in deploy/ (manifests.go), so the two cannot differ.
type Intercept struct {
	Operations []admissionregistrationv1.OperationType
	Resources  []Resource
	// Products adds every resource in the configured product API groups
	// (rendered as a wildcard rule narrowed by a matchConditions expression,
	// since rules cannot match a group suffix).
	Products bool
}

func podResources() []Resource {
	out := make([]Resource, 0, len(workload.Kinds))
	for _, k := range workload.Kinds {
		out = append(out, Resource{GVR: k.Resource, Kind: k.Kind, Namespaced: true})
	}
	return out
}

// Matches reports whether a request for gvr (with subresource, if any) and op
// is one this webhook handles. The version is ignored: the webhook
// configurations use matchPolicy Equivalent, so the API server converts other
// versions of an intercepted resource to the one named in the rules.
func (in Intercept) Matches(op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, subresource string, products policies.ProductSelector) bool {
	if !slices.Contains(in.Operations, op) || subresource != "" {
		return false
	}
	if _, ok := in.builtin(gvr.GroupResource()); ok {
		return true
	}
	return in.Products && products.Matches(gvr.Group)
}

// builtin returns the intercepted built-in resource for gr.
func (in Intercept) builtin(gr schema.GroupResource) (Resource, bool) {
	for _, r := range in.Resources {
		if r.GVR.GroupResource() == gr {
			return r, true
		}
	}
	return Resource{}, false
}

// checkKind guards against a request whose kind and resource disagree, which
// the API server never sends but a hand-made or hostile request can.
func (in Intercept) checkKind(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) error {
	if r, ok := in.builtin(gvr.GroupResource()); ok {
		if gvk.Group != r.GVR.Group || gvk.Kind != r.Kind {
			return fmt.Errorf("resource %s is served as kind %s, not %s", gvr.GroupResource(), r.Kind, gvk.GroupKind())
		}
		return nil
	}
	if gvk.Group != gvr.Group || gvk.Kind == "" {
		return fmt.Errorf("kind %s does not belong to resource %s", gvk.GroupKind(), gvr.GroupResource())
	}
	return nil
}

// matchConditionExpression is the CEL expression that narrows the wildcard
// product rule to product groups and the listed built-in resources.
func (in Intercept) matchConditionExpression(products policies.ProductSelector) string {
	var terms []string
	for _, s := range products.GroupSuffixes {
		terms = append(terms, fmt.Sprintf("request.resource.group.endsWith(%q)", s))
	}
	byGroup := map[string][]string{}
	var groups []string
	for _, r := range in.Resources {
		g := r.GVR.Group
		if _, seen := byGroup[g]; !seen {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], fmt.Sprintf("%q", r.GVR.Resource))
	}
	for _, g := range groups {
		terms = append(terms, fmt.Sprintf("(request.resource.group == %q && request.resource.resource in [%s])", g, strings.Join(byGroup[g], ", ")))
	}
	return strings.Join(terms, " || ")
}
