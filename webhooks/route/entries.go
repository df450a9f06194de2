package route

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManifestOptions say where the API server reaches gatehouse.
type ManifestOptions struct {
	// Namespace and Service route requests through a Service (port 443).
	Namespace string
	Service   string
	// ServiceAccount is the ServiceAccount gatehouse runs as, in Namespace:
	// the one requester that may change the managed namespace labels
	// (webhooks/render/managed_labels.go). Empty means DefaultServiceAccount.
	ServiceAccount string
	// URL, when set, is used instead of the Service (base URL, no trailing
	// slash): for a local control plane without kube-proxy.
	URL string
	// Certificate is the cert-manager Certificate ("<namespace>/<name>")
	// whose CA cainjector writes into every caBundle.
	Certificate string
	// Layout is LayoutSeparate (one entry per webhook), LayoutCombined
	// (one entry per Group) or LayoutInProcess; empty means DefaultLayout.
	Layout string
	// DefaultsPolicy, with LayoutInProcess, also renders PSC's defaults as a
	// MutatingAdmissionPolicy (Kubernetes 1.36): Pods get their defaults,
	// and pass the guard, without gatehouse; the API server spends more on
	// the policy than on the webhook call it saves (docs/in-process.md).
	DefaultsPolicy bool
	// Options must equal the server's.
	Options
}

// The webhook configuration layouts: both are served by every gatehouse.
const (
	LayoutSeparate  = "separate"
	LayoutCombined  = "combined"
	LayoutInProcess = "in-process" // combined, less what admission policies decide (webhooks/render/inprocess.go)
	DefaultLayout   = LayoutCombined
)

// TimeoutSeconds bounds every call the API server makes to gatehouse.
const TimeoutSeconds = 5

// entry is the configuration entry of def's placement p.
func (o ManifestOptions) entry(def Definition, p Placement) admissionregistrationv1.ValidatingWebhook {
	failure := p.FailurePolicy
	equivalent := admissionregistrationv1.Equivalent
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(TimeoutSeconds)
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    def.Name + p.Suffix + ".gatehouse.dev",
		ClientConfig:            o.clientConfig(def.Path),
		Rules:                   p.rules(def, o.Options),
		FailurePolicy:           &failure,
		MatchPolicy:             &equivalent,
		SideEffects:             &none,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
		NamespaceSelector:       o.namespaceSelector(p.Namespaces, p.unharnessed, p.namespaceObjects == onlyNamespaces),
		ObjectSelector:          o.objectSelector(p.namespaceObjects == onlyNamespaces),
		MatchConditions:         append(o.ExemptionCondition(), p.matchConditions(def, o.Options)...),
	}
}

// matchConditions are the conditions of def's entry for p: the webhook's,
// and for an entry of cluster-scoped objects other than Namespaces, that
// (rules cannot leave one resource out of a wildcard).
func (p Placement) matchConditions(def Definition, opts Options) []admissionregistrationv1.MatchCondition {
	out := def.Intercept.matchConditions(opts)
	if p.namespaceObjects == withoutNamespaces {
		out = append(out, admissionregistrationv1.MatchCondition{Name: "gatehouse-not-namespaces", Expression: "!" + ResourceIs(namespaces)})
	}
	return out
}

// OptedInSelector is the namespaceSelector of the entries of the opt-in
// webhooks (the pod security defaults and guard), for what stands in for
// them in the in-process layout.
func (o ManifestOptions) OptedInSelector() *metav1.LabelSelector {
	return o.namespaceSelector(optedIn, false, false)
}

// namespaceSelector renders a selection: every namespace but the exempt
// ones (exemptions.go; the server's own namespace always), narrowed by the
// selection's label (and, with unharnessed, to namespaces without the
// harnessed-namespace label). An entry of Namespaces' own requests
// (ownNamespaces) leaves the exempting labels to its objectSelector.
func (o ManifestOptions) namespaceSelector(s selection, unharnessed, ownNamespaces bool) *metav1.LabelSelector {
	sel := o.ExemptionSelector(o.Namespace)
	if ownNamespaces {
		sel = o.exemptNamesSelector(o.Namespace)
	}
	add := func(r metav1.LabelSelectorRequirement) { sel.MatchExpressions = append(sel.MatchExpressions, r) }
	switch s {
	case optedIn:
		add(metav1.LabelSelectorRequirement{Key: o.SecurityDefaultsLabel.Key, Operator: metav1.LabelSelectorOpIn, Values: []string{o.SecurityDefaultsLabel.Value}})
	case harnessedNamespaces:
		add(metav1.LabelSelectorRequirement{Key: o.HarnessedNamespaceLabel, Operator: metav1.LabelSelectorOpExists})
	case scopedNamespaces:
		add(metav1.LabelSelectorRequirement{Key: o.ScopedNamespaceLabel, Operator: metav1.LabelSelectorOpExists})
	}
	if unharnessed {
		add(metav1.LabelSelectorRequirement{Key: o.HarnessedNamespaceLabel, Operator: metav1.LabelSelectorOpDoesNotExist})
	}
	return sel
}

// objectSelector is the objectSelector of an entry: for an entry of
// Namespaces' own requests (ownNamespaces), the negated exempting labels,
// which the API server matches against the old and the new Namespace
// (exemptions.go), rendered even when empty so that whoever renders the
// exemptions again (the chart) knows where they go; none for the others.
func (o ManifestOptions) objectSelector(ownNamespaces bool) *metav1.LabelSelector {
	if !ownNamespaces {
		return nil
	}
	return o.exemptLabelsSelector()
}

// memberPlace is one placement of a member of a combined group.
type memberPlace struct {
	m Member
	p Placement
}

// GroupEntries are the configuration entries of a combined group: the
// group's namespaces, the union of its members' rules, narrowed by a
// matchConditions expression that is true exactly for the requests some
// member's own entry would be sent. A member's narrower namespaces (the
// failing-open half of harness-proxy) are decided by the server. The
// placements that take Namespaces' own requests have an entry of their
// own, exempted by the Namespace's labels (exemptions.go), on the group's
// path: named after the group when it has no other, else
// "<group>-namespaces".
func (o ManifestOptions) GroupEntries(g Group) []admissionregistrationv1.ValidatingWebhook {
	var others, own []memberPlace
	for _, m := range g.Members(o.Options) {
		for _, p := range m.Places {
			if p.namespaceObjects == onlyNamespaces {
				own = append(own, memberPlace{m, p})
			} else {
				others = append(others, memberPlace{m, p})
			}
		}
	}
	var out []admissionregistrationv1.ValidatingWebhook
	for _, part := range [][]memberPlace{others, own} {
		if len(part) == 0 {
			continue
		}
		ownNamespaces := part[0].p.namespaceObjects == onlyNamespaces
		name := g.Name
		if ownNamespaces && len(others) > 0 {
			name += NamespacesEntrySuffix
		}
		w := o.entry(part[0].m.Def, part[0].p)
		w.Name = name + ".gatehouse.dev"
		w.ClientConfig = o.clientConfig(g.Path)
		failure := g.FailurePolicy
		w.FailurePolicy = &failure
		w.NamespaceSelector = o.namespaceSelector(g.Namespaces, false, ownNamespaces)
		w.ObjectSelector = o.objectSelector(ownNamespaces)
		w.Rules = nil
		var alts []string
		for _, mp := range part {
			w.Rules = append(w.Rules, mp.p.rules(mp.m.Def, o.Options)...)
			alts = append(alts, mp.m.placeExpression(mp.p, o.Options))
		}
		w.MatchConditions = append(o.ExemptionCondition(), admissionregistrationv1.MatchCondition{
			Name: MembersCondition, Expression: strings.Join(alts, " || "),
		})
		out = append(out, w)
	}
	return out
}

// NamespacesEntrySuffix names the entry of Namespaces' own requests of a
// webhook or combined group that has other entries.
const NamespacesEntrySuffix = "-namespaces"

// EntryNames are the names of g's entries in the combined layout under
// opts (none when g has no member).
func (g Group) EntryNames(opts Options) []string {
	var out []string
	for _, w := range (ManifestOptions{Options: opts}).GroupEntries(g) {
		out = append(out, w.Name)
	}
	return out
}

// MembersCondition names the matchCondition of a combined entry that holds
// its members' expressions.
const MembersCondition = "gatehouse-members"

// Entries are the configuration entries of one webhook, one per placement.
func (o ManifestOptions) Entries(def Definition) []admissionregistrationv1.ValidatingWebhook {
	var out []admissionregistrationv1.ValidatingWebhook
	for _, p := range def.Placements(o.Options) {
		out = append(out, o.entry(def, p))
	}
	return out
}

func (o ManifestOptions) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	if o.URL != "" {
		url := o.URL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url}
	}
	port := int32(443)
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: o.Namespace, Name: o.Service, Path: &path, Port: &port,
	}}
}

// Rules groups the built-in resources by API group, version and operations
// (subresources as "<resource>/<subresource>"); Beyond adds a wildcard rule:
// for ProductResources one that the match condition narrows to product
// groups, for EveryResource one for every resource (and "*/status" for
// EveryResourceAndStatus). Every rule has scope.
func (in Intercept) Rules(scope admissionregistrationv1.ScopeType) []admissionregistrationv1.RuleWithOperations {
	allScopes := scope
	var out []admissionregistrationv1.RuleWithOperations
	index := map[string]int{}
	for _, r := range in.Resources {
		ops := r.operations(in)
		key := fmt.Sprintf("%s/%s/%v", r.GVR.Group, r.GVR.Version, ops)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, admissionregistrationv1.RuleWithOperations{
				Operations: ops,
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{r.GVR.Group}, APIVersions: []string{r.GVR.Version}, Scope: &allScopes,
				},
			})
		}
		name := r.GVR.Resource
		if r.Subresource != "" {
			name += "/" + r.Subresource
		}
		out[i].Resources = append(out[i].Resources, name)
	}
	if in.Beyond != NothingBeyond {
		resources := []string{"*"}
		if in.Beyond == EveryResourceAndStatus {
			resources = append(resources, "*/status")
		}
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: in.Operations,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: resources, Scope: &allScopes,
			},
		})
	}
	return out
}
