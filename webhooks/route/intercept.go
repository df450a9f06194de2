package route

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Resource is one built-in resource (or subresource) a webhook intercepts,
// with the kind the API server sends for it.
type Resource struct {
	GVR         schema.GroupVersionResource
	Subresource string
	Kind        string
	// Operations, when set, replace the Intercept's operations for this
	// resource (pods are defaulted on CREATE, pods/ephemeralcontainers on
	// UPDATE).
	Operations []admissionregistrationv1.OperationType
}

// Intercept is what a webhook receives. The same value routes objects in
// `gatehouse check` (Matches) and renders the rules, namespaceSelector and
// matchConditions of the webhook configurations in deploy/ (webhooks/render/manifests.go), so
// the two cannot differ.
type Intercept struct {
	Operations []admissionregistrationv1.OperationType
	Resources  []Resource
	// Beyond adds resources besides Resources, as a wildcard rule.
	Beyond Beyond
	// Namespaces limits the namespaced objects that reach the webhook.
	Namespaces NamespaceScope
	// Object limits the webhook to one object.
	Object ObjectScope
	// Updates limits the UPDATEs that reach the webhook.
	Updates UpdateFilter
	// Acts, when set, is the CEL predicate over request, object and
	// oldObject that is true for every request the evaluator could deny,
	// warn about or patch (narrowing.go), rendered as the matchCondition
	// "gatehouse-acts".
	Acts func(Options) string
}

// Beyond says which resources a webhook takes besides its Resources.
type Beyond int

const (
	// NothingBeyond: Resources alone.
	NothingBeyond Beyond = iota
	// ProductResources: every resource in the configured product API
	// groups, rendered as a wildcard rule narrowed by a matchConditions
	// expression, since rules cannot match a group suffix.
	ProductResources
	// EveryResource: every resource of every API group (no subresources),
	// rendered as a wildcard rule.
	EveryResource
	// EveryResourceAndStatus: EveryResource and the status subresource of
	// each, rendered as "*" and "*/status".
	EveryResourceAndStatus
)

// AllGroups reports whether b takes every resource of every API group.
func (b Beyond) AllGroups() bool { return b == EveryResource || b == EveryResourceAndStatus }

// NamespaceScope says which namespaces' objects reach a webhook.
type NamespaceScope int

const (
	// AnyNamespace: every namespace but the exempt ones.
	AnyNamespace NamespaceScope = iota
	// OptedInNamespaces: the namespaces that carry the security-defaults
	// label (Options.SecurityDefaultsLabel), rendered as a
	// namespaceSelector.
	OptedInNamespaces
	// ScopedNamespaces: the webhook acts on namespaced objects only in
	// namespaces that carry a scope label; when gatehouse keeps
	// Options.ScopedNamespaceLabel current, only those are sent
	// (Definition.placements).
	ScopedNamespaces
)

// ObjectScope says which objects of the intercepted resources reach a
// webhook.
type ObjectScope int

const (
	// AnyObject: all of them.
	AnyObject ObjectScope = iota
	// OverrideConfigMapOnly: the single object named by Options.Overrides
	// (the component-override ConfigMap), rendered as a matchConditions
	// expression so no other object is ever sent.
	OverrideConfigMapOnly
)

// UpdateFilter limits the UPDATEs that reach a webhook; filters combine
// (every one must hold), and none means every UPDATE.
type UpdateFilter uint8

const (
	// UpdatesByServiceAccounts: only UPDATEs a service account makes,
	// rendered as a matchConditions expression on request.userInfo.
	UpdatesByServiceAccounts UpdateFilter = 1 << iota
	// UpdatesChangingLabels: only UPDATEs whose object's metadata.labels
	// differ from the old object's, rendered as a matchConditions
	// expression on object and oldObject.
	UpdatesChangingLabels
)

// Has reports whether f includes every filter of x.
func (f UpdateFilter) Has(x UpdateFilter) bool { return f&x == x }

// ServiceAccountUsers is the user name prefix of every service account.
const ServiceAccountUsers = "system:serviceaccount:"

func PodResources() []Resource {
	out := make([]Resource, 0, len(workload.Kinds()))
	for _, k := range workload.Kinds() {
		out = append(out, Resource{GVR: k.Resource, Kind: k.Kind})
	}
	return out
}

// podTemplateResources are the workload kinds that carry a pod template.
func podTemplateResources() []Resource {
	var out []Resource
	for _, k := range workload.Kinds() {
		if len(k.Template) > 0 {
			out = append(out, Resource{GVR: k.Resource, Kind: k.Kind})
		}
	}
	return out
}

func (r Resource) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}
}

func (r Resource) operations(in Intercept) []admissionregistrationv1.OperationType {
	if len(r.Operations) > 0 {
		return r.Operations
	}
	return in.Operations
}

// Matches reports whether a request for gvr (with subresource, if any) and op
// is one this webhook handles. The version is ignored: the webhook
// configurations use matchPolicy Equivalent, so the API server converts other
// versions of an intercepted resource to the one named in the rules.
// Namespace opt-in is not part of this: see NamespaceMatches.
func (in Intercept) Matches(op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, subresource string, opts Options) bool {
	if r, ok := in.builtin(gvr.GroupResource(), subresource); ok {
		return slices.Contains(r.operations(in), op)
	}
	if in.Beyond.AllGroups() {
		return (subresource == "" || (in.Beyond == EveryResourceAndStatus && subresource == "status")) && slices.Contains(in.Operations, op)
	}
	return subresource == "" && in.Beyond == ProductResources && opts.Products.Matches(gvr.Group) && slices.Contains(in.Operations, op)
}

// NamespaceMatches reports whether an object in a namespace with these labels
// reaches the webhook; the API server decides it with the rendered
// namespaceSelector, `gatehouse check` with this.
func (in Intercept) NamespaceMatches(namespaceLabels map[string]string, opts Options) bool {
	return in.Namespaces != OptedInNamespaces || optedInLabels(namespaceLabels, opts)
}

// optedInLabels reports whether a namespace's labels opt it in to the pod
// security webhooks.
func optedInLabels(namespaceLabels map[string]string, opts Options) bool {
	v, ok := namespaceLabels[opts.SecurityDefaultsLabel.Key]
	return ok && v == opts.SecurityDefaultsLabel.Value
}

// UserMatches reports whether a request of op by username reaches the
// webhook: always, unless it takes UPDATEs from service accounts only.
func (in Intercept) UserMatches(op admissionregistrationv1.OperationType, username string) bool {
	return !in.Updates.Has(UpdatesByServiceAccounts) || op != admissionregistrationv1.Update || strings.HasPrefix(username, ServiceAccountUsers)
}

// ChangeMatches reports whether a request of op with these raw object and
// old object reaches the webhook: always, unless it takes only UPDATEs that
// change labels. It decides as the rendered expression does; objects it
// cannot read are sent (the webhook then judges or refuses them).
func (in Intercept) ChangeMatches(op admissionregistrationv1.OperationType, object, oldObject []byte) bool {
	if !in.Updates.Has(UpdatesChangingLabels) || op != admissionregistrationv1.Update {
		return true
	}
	labels, ok := labelsForMatch(object)
	oldLabels, oldOK := labelsForMatch(oldObject)
	return !ok || !oldOK || !reflect.DeepEqual(labels, oldLabels)
}

// labelsForMatch reads metadata.labels as labelsChangedExpression does: an
// absent metadata or labels reads as an empty map, anything else (null
// included) as itself.
func labelsForMatch(raw []byte) (any, bool) {
	var obj struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false
	}
	if labels, ok := obj.Metadata["labels"]; ok {
		return labels, true
	}
	return map[string]any{}, true
}

// ObjectMatches reports whether the object namespace/name reaches the
// webhook: always, unless the webhook watches one object only.
func (in Intercept) ObjectMatches(namespace, name string, opts Options) bool {
	return in.Object != OverrideConfigMapOnly || (namespace == opts.Overrides.Namespace && name == opts.Overrides.ConfigMapName)
}

// builtin returns the intercepted built-in resource for gr and subresource.
func (in Intercept) builtin(gr schema.GroupResource, subresource string) (Resource, bool) {
	for _, r := range in.Resources {
		if r.GVR.GroupResource() == gr && r.Subresource == subresource {
			return r, true
		}
	}
	return Resource{}, false
}

// CheckKind guards against a request whose kind and resource disagree, which
// the API server never sends but a hand-made or hostile request can.
func (in Intercept) CheckKind(gvr schema.GroupVersionResource, subresource string, gvk schema.GroupVersionKind) error {
	if r, ok := in.builtin(gvr.GroupResource(), subresource); ok {
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
