package route

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
)

// Exemptions (docs/rollout.md) are requests no webhook judges. Each is
// rendered where the API server can apply it, so that an exempt request is
// never sent and never waits on gatehouse:
//   - namespaces by name and by label, into every entry's
//     namespaceSelector (a selector of the namespaces that are NOT exempt:
//     each exempting label is negated, and requirements are ANDed, so a
//     namespace that matches any one exemption is left out);
//   - usernames, groups and service accounts, into the matchCondition
//     gatehouse-not-exempt.
//
// A Namespace's own requests are the exception: the API server matches a
// namespaceSelector against the labels of the Namespace as it would be
// stored (the new object of a CREATE or UPDATE), so an UPDATE that adds an
// exempting label would take itself out of every entry, and the change it
// makes with it (a stripped scope label) would be judged by nobody. No
// UPDATE may leave a contract's selection by the same change that breaks
// it (docs/contracts.md §11): a Namespace is exempt by label only when both
// the old and the new object are. The entries that take Namespaces' own
// requests take them alone (placement.namespaceObjects) and carry the
// exempting labels in their objectSelector instead, which the API server
// matches when either the old or the new object matches it: the negated
// exemptions, so such an entry is sent every Namespace request but those
// where old and new are both exempt. Exemptions by name stay in the
// namespaceSelector: a Namespace's name never changes.
//
// The server checks them again before any member decides (a configuration
// rendered by hand, or an older one, may still send them): an exempt request
// is answered with a plain allow and counted as decision "exempt", per
// member that would have taken it.

// ExemptionConditionName names the matchCondition of the user exemptions.
const ExemptionConditionName = "gatehouse-not-exempt"

// ExemptNamespaces are the namespaces exempt by name: the server's own
// (own; empty when unknown) and the configured ones. The audit does not
// list them.
func (o Options) ExemptNamespaces(own string) []string {
	configured := o.ConfiguredExemptNamespaces()
	out := make([]string, 0, len(configured)+1)
	if own != "" {
		out = append(out, own)
	}
	for _, ns := range configured {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// defaultExemptNamespaces are the exempt namespaces of options whose
// configuration named none (built by hand, as in tests).
var defaultExemptNamespaces = configv1alpha1.DefaultExemptNamespaces()

// ConfiguredExemptNamespaces are the namespaces the configuration exempts
// by name (not the server's own).
func (o Options) ConfiguredExemptNamespaces() []string {
	if o.Exemptions.Namespaces == nil {
		return defaultExemptNamespaces
	}
	return o.Exemptions.Namespaces
}

// ExemptionSelector is the namespaceSelector of the namespaces that are not
// exempt, to which an entry adds its own selection.
func (o Options) ExemptionSelector(own string) *metav1.LabelSelector {
	sel := o.exemptNamesSelector(own)
	sel.MatchExpressions = append(sel.MatchExpressions, o.exemptLabelsSelector().MatchExpressions...)
	return sel
}

// exemptNamesSelector selects the namespaces that are not exempt by name.
func (o Options) exemptNamesSelector(own string) *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	if names := o.ExemptNamespaces(own); len(names) > 0 {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: names,
		})
	}
	return sel
}

// exemptLabelsSelector selects the labels of namespaces that are not exempt
// by label: as a namespaceSelector, the namespaces of the objects sent; as
// the objectSelector of an entry of Namespaces' own requests, the
// Namespaces sent (the API server matches it against the old and the new
// object, and sends the request when either matches).
func (o Options) exemptLabelsSelector() *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	for _, l := range o.Exemptions.NamespaceLabels {
		r := metav1.LabelSelectorRequirement{Key: l.Key, Operator: metav1.LabelSelectorOpDoesNotExist}
		if l.Operator == configv1alpha1.LabelOpIn {
			r = metav1.LabelSelectorRequirement{Key: l.Key, Operator: metav1.LabelSelectorOpNotIn, Values: append([]string(nil), l.Values...)}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, r)
	}
	return sel
}

// exemptUsers are the exempt usernames and groups, service accounts
// written as the API server authenticates them.
func (o Options) exemptUsers() (users, groups []string) {
	e := o.Exemptions
	users = append(users, e.Usernames...)
	groups = append(groups, e.Groups...)
	for _, sa := range e.ServiceAccounts {
		ns, name, _ := strings.Cut(sa, "/")
		if name == "*" {
			groups = append(groups, "system:serviceaccounts:"+ns)
		} else {
			users = append(users, ServiceAccountUsers+ns+":"+name)
		}
	}
	return users, groups
}

// ExemptionCondition is the matchCondition that leaves out the exempt
// requesters; none when no requester is exempt.
func (o Options) ExemptionCondition() []admissionregistrationv1.MatchCondition {
	users, groups := o.exemptUsers()
	var terms []string
	if len(users) > 0 {
		terms = append(terms, "!(request.userInfo.username in ["+quoteAll(users)+"])")
	}
	if len(groups) > 0 {
		// groups is absent, not empty, for a user in none.
		terms = append(terms, "!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["+quoteAll(groups)+"]))")
	}
	if len(terms) == 0 {
		return nil
	}
	return []admissionregistrationv1.MatchCondition{{Name: ExemptionConditionName, Expression: strings.Join(terms, " && ")}}
}

func quoteAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(out, ", ")
}

// Exempt reports whether req is exempt: by its requester, or by the name or
// labels of its namespace as the API server's namespaceSelector sees them;
// a Namespace's own request (of any subresource) by the Namespace's labels,
// old and new, as the objectSelector of its entries sees them: exempt only
// when both are. namespaceLabels is called only when an exemption names
// labels; when it cannot answer the request is judged, as it was sent.
func (o Options) Exempt(req *admission.Request, namespaceLabels func() (map[string]string, error)) bool {
	if o.ExemptRequester(req) {
		return true
	}
	isNamespace := IsNamespace(req.Resource.Group, req.Resource.Resource)
	if req.Namespace == "" || (!NamespacedRequest(req) && !isNamespace) {
		return false
	}
	if slices.Contains(o.ConfiguredExemptNamespaces(), req.Namespace) {
		return true
	}
	if len(o.Exemptions.NamespaceLabels) == 0 {
		return false
	}
	if isNamespace {
		labels, oldLabels, hasOld := NamespaceObjectLabels(req)
		return o.ExemptLabels(labels) && (!hasOld || o.ExemptLabels(oldLabels))
	}
	labels, err := namespaceLabels()
	if err != nil {
		return false
	}
	return o.ExemptLabels(labels)
}

// ExemptRequester reports whether the requester of req is exempt.
func (o Options) ExemptRequester(req *admission.Request) bool {
	if e := o.Exemptions; len(e.Usernames)+len(e.Groups)+len(e.ServiceAccounts) == 0 {
		return false
	}
	users, groups := o.exemptUsers()
	if slices.Contains(users, req.UserInfo.Username) {
		return true
	}
	for _, g := range req.UserInfo.Groups {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// NamespaceExemptions answer whether the entries leave out the objects of a
// namespace (proxy.Exemptions): by name, the server's own namespace
// (Options.ServerNamespace) and the configured ones; by label, from the
// namespace's labels in the cluster view (read only when an exemption names
// labels).
type NamespaceExemptions struct{ opts *Options }

// ExemptionsOf answers for the exemptions of opts.
func ExemptionsOf(opts *Options) NamespaceExemptions { return NamespaceExemptions{opts} }

// NamespaceExempt says whether namespace is exempt, and why.
func (e NamespaceExemptions) NamespaceExempt(namespace string) (bool, string, error) {
	o := e.opts
	own := o.ServerNamespace
	if own == "" {
		own = DefaultNamespace
	}
	switch {
	case namespace == own:
		return true, "gatehouse's own namespace, by name", nil
	case slices.Contains(o.ConfiguredExemptNamespaces(), namespace):
		return true, "by name", nil
	case len(o.Exemptions.NamespaceLabels) == 0:
		return false, "", nil
	case o.Namespaces == nil:
		return false, "", ErrNoClusterState
	}
	labels, err := o.Namespaces.NamespaceLabels(namespace)
	if err != nil {
		return false, "", err
	}
	if key, ok := o.exemptingLabel(labels); ok {
		return true, "by the label " + key, nil
	}
	return false, "", nil
}

// ExemptLabels reports whether a namespace with these labels matches an
// exempting label.
func (o Options) ExemptLabels(labels map[string]string) bool {
	_, ok := o.exemptingLabel(labels)
	return ok
}

// exemptingLabel is the key of the first exempting label a namespace with
// these labels matches.
func (o Options) exemptingLabel(labels map[string]string) (string, bool) {
	for _, l := range o.Exemptions.NamespaceLabels {
		v, ok := labels[l.Key]
		if ok && (l.Operator == configv1alpha1.LabelOpExists || slices.Contains(l.Values, v)) {
			return l.Key, true
		}
	}
	return "", false
}

// NamespaceObjectLabels are the labels of the Namespace a request admits:
// the new object's (on DELETE the stored one's), and on UPDATE the old
// object's too (hasOld).
func NamespaceObjectLabels(req *admission.Request) (labels, oldLabels map[string]string, hasOld bool) {
	raw, old := req.Object.Raw, req.OldObject.Raw
	if len(raw) == 0 {
		raw, old = old, nil
	}
	return objectLabels(raw), objectLabels(old), len(old) > 0
}

// objectLabels are metadata.labels of a raw object; one that does not
// decode has none.
func objectLabels(raw []byte) map[string]string {
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &obj)
	return obj.Metadata.Labels
}
