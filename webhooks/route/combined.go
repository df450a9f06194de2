package route

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Group is one combined endpoint (docs/contracts.md §10): every enabled webhook of
// one type and failure policy that is sent the same namespaces, run in
// registry order in one call. Each call the API server makes costs a TLS
// round trip and a full encode and decode of the object, and mutating
// entries run one after another; a Pod create that six entries intercept
// pays that once per group instead. A namespaceSelector belongs to a whole
// entry, so webhooks sent different namespaces cannot share one without
// every namespace being sent to both: there is one group per selection.
type Group struct {
	Name          string
	Path          string
	Type          Type
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// Namespaces is the group's namespace selection.
	Namespaces selection
	// Accounts: the group's entry is sent the requests of harnessed
	// service accounts only, once gatehouse has added their list to it
	// (selection.go).
	Accounts bool
}

// Groups are the combined endpoints (groupTable), a copy as Registry is.
func Groups() []Group { return slices.Clone(groupTable) }

// groupTable holds the combined endpoints, as few as the failure policies and
// selections require, in the order the API server calls them
// (the registry's order of their members: pod security defaults first). A group with no member in a configuration
// (mutating-ignore-scoped without managed namespace labels) is not
// rendered.
var groupTable = []Group{
	{Name: "mutating-ignore-opted-in", Path: "/mutate/combined-ignore-opted-in", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore, Namespaces: optedIn},
	{Name: "mutating-ignore", Path: "/mutate/combined-ignore", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore},
	{Name: "mutating-ignore-accounts", Path: "/mutate/combined-ignore-accounts", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore, Accounts: true},
	{Name: "mutating-ignore-scoped", Path: "/mutate/combined-ignore-scoped", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore, Namespaces: scopedNamespaces},
	{Name: "mutating-ignore-harnessed", Path: "/mutate/combined-ignore-harnessed", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore, Namespaces: harnessedNamespaces},
	{Name: "mutating-fail", Path: "/mutate/combined-fail", Type: Mutating, FailurePolicy: admissionregistrationv1.Fail, Namespaces: harnessedNamespaces},
	{Name: "validating-fail", Path: "/validate/combined-fail", Type: Validating, FailurePolicy: admissionregistrationv1.Fail},
	{Name: "validating-fail-accounts", Path: "/validate/combined-fail-accounts", Type: Validating, FailurePolicy: admissionregistrationv1.Fail, Accounts: true},
	{Name: "validating-fail-opted-in", Path: "/validate/combined-fail-opted-in", Type: Validating, FailurePolicy: admissionregistrationv1.Fail, Namespaces: optedIn},
	// The webhooks in Warn or Audit (webhooks/modes.go), which never deny and so
	// never fail closed.
	{Name: "validating-ignore", Path: "/validate/combined-ignore", Type: Validating, FailurePolicy: admissionregistrationv1.Ignore},
	{Name: "validating-ignore-accounts", Path: "/validate/combined-ignore-accounts", Type: Validating, FailurePolicy: admissionregistrationv1.Ignore, Accounts: true},
	{Name: "validating-ignore-opted-in", Path: "/validate/combined-ignore-opted-in", Type: Validating, FailurePolicy: admissionregistrationv1.Ignore, Namespaces: optedIn},
}

// Rendered reports whether g has a member under opts, and so an entry in
// the combined layout.
func (g Group) Rendered(opts Options) bool { return len(g.Members(opts)) > 0 }

// SelectsNamespace reports whether g's entry is sent the objects of a
// namespace with these labels: its namespaceSelector, the excluded
// namespaces aside.
func (g Group) SelectsNamespace(labels map[string]string, opts Options) bool {
	return Placement{Namespaces: g.Namespaces}.selects(labels, opts)
}

// selection is the set of namespaces a configuration entry is sent,
// rendered as its namespaceSelector (besides the excluded namespaces).
type selection int

const (
	allNamespaces       selection = iota
	optedIn                       // carrying Options.SecurityDefaultsLabel
	harnessedNamespaces           // carrying Options.HarnessedNamespaceLabel
	scopedNamespaces              // carrying Options.ScopedNamespaceLabel
)

// Placement is one configuration entry of a webhook: the namespaces and
// objects it is sent, and its failure policy. Most webhooks have one; see
// Definition.placements for the others.
type Placement struct {
	// Suffix names the entry after the webhook: "<name><suffix>.gatehouse.dev".
	Suffix        string
	FailurePolicy admissionregistrationv1.FailurePolicyType
	Namespaces    selection
	// unharnessed limits the entry to namespaces without
	// Options.HarnessedNamespaceLabel.
	unharnessed bool
	// scope limits the entry's rules to namespaced or cluster-scoped
	// objects ("*": both).
	scope admissionregistrationv1.ScopeType
	// Accounts limits the entry to the requests of harnessed service
	// accounts, by the matchCondition gatehouse adds (selection.go).
	Accounts bool
	// namespaceObjects limits the entry to Namespaces, or to other objects.
	namespaceObjects namespaceObjects
}

// namespaceObjects says whether an entry takes Namespaces themselves.
type namespaceObjects int

const (
	withNamespaces namespaceObjects = iota
	onlyNamespaces
	withoutNamespaces
)

// takes reports whether p is sent req as far as its scope and resources
// go.
func (p Placement) takes(req *admission.Request) bool {
	namespaced := NamespacedRequest(req)
	if p.scope != admissionregistrationv1.AllScopes && (p.scope == admissionregistrationv1.NamespacedScope) != namespaced {
		return false
	}
	switch IsNamespace(req.Resource.Group, req.Resource.Resource) {
	case true:
		return p.namespaceObjects != withoutNamespaces
	default:
		return p.namespaceObjects != onlyNamespaces
	}
}

// rules are the rules of def's entry for p.
func (p Placement) rules(def Definition, opts Options) []admissionregistrationv1.RuleWithOperations {
	in := def.Intercept
	switch p.namespaceObjects {
	case onlyNamespaces:
		return Intercept{Resources: in.namespaceResources(opts)}.Rules(p.scope)
	case withoutNamespaces:
		// The Namespaces it names are its other entry's (a wildcard
		// rule still covers them; the entry's condition leaves them out).
		in.Resources = slices.DeleteFunc(slices.Clone(in.Resources), func(r Resource) bool { return IsNamespace(r.GVR.Group, r.GVR.Resource) })
	}
	return in.Rules(p.scope)
}

// namespaceResources are the Namespace resource and the subresources that
// store a Namespace's labels, each with the operations the webhook takes
// them on.
func (in Intercept) namespaceResources(opts Options) []Resource {
	var out []Resource
	for _, sub := range []string{"", "status", "finalize"} {
		r := Resource{GVR: namespaces.GVR, Subresource: sub, Kind: namespaces.Kind}
		for _, op := range []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update} {
			if in.Matches(op, namespaces.GVR, sub, opts) {
				r.Operations = append(r.Operations, op)
			}
		}
		if len(r.Operations) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Placements are def's configuration entries under opts:
//   - an opt-in webhook is sent the opted-in namespaces;
//   - a webhook that fails closed only in harnessed namespaces has a
//     failing-closed entry there and, unless gatehouse keeps the harnessed
//     label current itself, a failing-open one, "<name>-unlabelled",
//     everywhere else;
//   - a webhook sent the objects of scoped namespaces is, when gatehouse
//     manages the selections, sent namespaced objects there, cluster-scoped
//     ones by an entry of their own, "<name>-cluster", for harnessed service
//     accounts only, and a Namespace's own CREATE and UPDATE by anyone by a
//     third, "<name>-namespaces" (webhooks/adapters/harness_labels.go); otherwise every
//     namespace;
//   - a webhook that takes the UPDATEs of service accounts only takes those
//     of harnessed service accounts, when gatehouse manages the selections;
//   - a webhook that takes Namespaces' own requests besides other objects
//     takes them by an entry of their own, "<name>-namespaces", which is
//     exempted by the Namespace's own labels, old and new (exemptions.go).
//
// A webhook that does not enforce (webhooks/modes.go) has the same entries, each
// with failurePolicy Ignore.
func (def Definition) Placements(opts Options) []Placement {
	p := Placement{FailurePolicy: opts.FailurePolicy(def.Name, def.FailurePolicy), scope: admissionregistrationv1.AllScopes,
		Accounts: def.Intercept.Updates.Has(UpdatesByServiceAccounts) && opts.ManagedSelections}
	switch {
	case def.Intercept.Namespaces == OptedInNamespaces:
		p.Namespaces = optedIn
	case def.FailClosedOnlyInHarnessed:
		p.Namespaces = harnessedNamespaces
		if !opts.ManagedSelections {
			return []Placement{p, {Suffix: "-unlabelled", FailurePolicy: admissionregistrationv1.Ignore, unharnessed: true, scope: p.scope}}
		}
	case def.Intercept.Namespaces == ScopedNamespaces && opts.ManagedSelections:
		p.Namespaces, p.scope = scopedNamespaces, admissionregistrationv1.NamespacedScope
		return []Placement{p,
			{Suffix: "-cluster", FailurePolicy: p.FailurePolicy, scope: admissionregistrationv1.ClusterScope, Accounts: true, namespaceObjects: withoutNamespaces},
			{Suffix: NamespacesEntrySuffix, FailurePolicy: p.FailurePolicy, scope: admissionregistrationv1.ClusterScope, namespaceObjects: onlyNamespaces}}
	case def.Intercept.takesNamespaces():
		ns := p
		ns.Suffix, ns.scope, ns.namespaceObjects = NamespacesEntrySuffix, admissionregistrationv1.ClusterScope, onlyNamespaces
		p.namespaceObjects = withoutNamespaces
		return []Placement{p, ns}
	}
	return []Placement{p}
}

// takesNamespaces reports whether the webhook takes requests of Namespaces
// themselves (through every resource, or by name).
func (in Intercept) takesNamespaces() bool {
	if in.Beyond.AllGroups() {
		return true
	}
	for _, r := range in.Resources {
		if IsNamespace(r.GVR.Group, r.GVR.Resource) {
			return true
		}
	}
	return false
}

// Selected says what selected a request before a member routes it.
type Selected int

const (
	// ByEntry: the API server sent it through one of the member's entries,
	// whose rules, selectors and matchConditions the member trusts.
	ByEntry Selected = iota
	// ByNothing: `gatehouse check` routes it, and nothing selected it yet.
	ByNothing
)

// Member is a webhook as an endpoint routes requests to it.
type Member struct {
	Def Definition
	// Places are the configuration entries that send the member requests:
	// one in a combined endpoint, all of the webhook's offline, where check
	// takes what any of them would send.
	Places []Placement
	// Drift is set on a member of a combined endpoint that only its
	// entry's reading of the modes holds (drift.go): it decides in Enforce.
	Drift *ModeDrift
}

// Members returns the registry's webhooks that group g runs under opts:
// each webhook with a placement of g's type, failure policy, namespaces and
// accounts, with those placements (two when it takes Namespaces' own
// requests by an entry of their own).
func (g Group) Members(opts Options) []Member {
	var out []Member
	for _, def := range registry {
		if def.Type != g.Type {
			continue
		}
		var places []Placement
		for _, p := range def.Placements(opts) {
			if p.FailurePolicy == g.FailurePolicy && p.Namespaces == g.Namespaces && p.Accounts == g.Accounts {
				places = append(places, p)
			}
		}
		if len(places) > 0 {
			out = append(out, Member{Def: def, Places: places})
		}
	}
	return out
}

// SelectsRequest is the part of selects that needs no namespace labels.
func (m Member) SelectsRequest(req *admission.Request, opts Options) bool {
	op := admissionregistrationv1.OperationType(req.Operation)
	in := m.Def.Intercept
	return in.Matches(op, schema.GroupVersionResource(req.Resource), req.SubResource, opts) &&
		in.UserMatches(op, req.UserInfo.Username) && in.ObjectMatches(req.Namespace, req.Name, opts) &&
		in.ChangeMatches(op, req.Object.Raw, req.OldObject.Raw) && m.InScope(req)
}

// InScope reports whether one of m's placements takes req's scope and
// resource.
func (m Member) InScope(req *admission.Request) bool {
	for _, p := range m.Places {
		if p.takes(req) {
			return true
		}
	}
	return false
}

// TakesAccount reports whether one of m's placements that takes req's
// scope is sent the requesting user: offline, a placement for harnessed
// service accounts only takes those a harness in the cluster view claims,
// as the condition gatehouse adds to its entry (an unreadable view takes
// every one); a server trusts its entry.
func (m Member) TakesAccount(req *admission.Request, by Selected, opts Options) bool {
	for _, p := range m.Places {
		if !p.takes(req) {
			continue
		}
		if !p.Accounts || by == ByEntry || harnessedAccount(opts, req.UserInfo.Username) {
			return true
		}
	}
	return false
}

// NamespacedRequest reports whether req is for a namespaced object. A
// Namespace is cluster-scoped, though its request names it as its
// namespace.
func NamespacedRequest(req *admission.Request) bool {
	return req.Namespace != "" && (req.Resource.Group != "" || req.Resource.Resource != "namespaces")
}

// SelectsNamespace is the part of selects that reads the namespace's labels:
// whether one of m's placements is sent this request's namespace.
func (m Member) SelectsNamespace(req *admission.Request, namespaceLabels map[string]string, opts Options) bool {
	for _, p := range m.Places {
		if !p.takes(req) {
			continue
		}
		if p.selects(namespaceLabels, opts) {
			return true
		}
	}
	return false
}

// selects reports whether p is sent an object in a namespace with these
// labels, as its namespaceSelector decides.
func (p Placement) selects(labels map[string]string, opts Options) bool {
	_, harnessed := labels[opts.HarnessedNamespaceLabel]
	if p.unharnessed && harnessed {
		return false
	}
	switch p.Namespaces {
	case optedIn:
		return optedInLabels(labels, opts)
	case harnessedNamespaces:
		return harnessed
	case scopedNamespaces:
		_, scoped := labels[opts.ScopedNamespaceLabel]
		return scoped
	}
	return true
}

// NeedsNamespace reports whether selecting m reads the namespace's labels.
// A combined endpoint trusts its entry's namespaceSelector, which is the
// member's own, and reads them only for what the selector cannot say (the
// failing-open half of harness-proxy); offline nothing selected the
// namespace yet.
func (m Member) NeedsNamespace(by Selected) bool {
	for _, p := range m.Places {
		if p.unharnessed || (by == ByNothing && (p.Namespaces != allNamespaces || m.Def.Intercept.Namespaces == OptedInNamespaces)) {
			return true
		}
	}
	return false
}

// IsNamespace reports whether group and resource are the core namespaces.
func IsNamespace(group, resource string) bool {
	return group == "" && resource == "namespaces"
}

// Refuses says why a webhook's own endpoint does not take req, in the order
// the rules of its entry exclude it; nil when it takes it.
func (m Member) Refuses(req *admission.Request, opts Options) error {
	def := m.Def
	op := admissionregistrationv1.OperationType(req.Operation)
	gvr := schema.GroupVersionResource(req.Resource)
	if !def.Intercept.Matches(op, gvr, req.SubResource, opts) {
		res := gvr.GroupResource().String()
		if req.SubResource != "" {
			res += "/" + req.SubResource
		}
		return fmt.Errorf("webhook %s does not handle %s of %s; check the rules of its webhook configuration", def.Name, op, res)
	}
	if !def.Intercept.UserMatches(op, req.UserInfo.Username) {
		return fmt.Errorf("webhook %s takes UPDATEs from service accounts only; check the matchConditions of its webhook configuration", def.Name)
	}
	if !def.Intercept.ChangeMatches(op, req.Object.Raw, req.OldObject.Raw) {
		return fmt.Errorf("webhook %s takes only UPDATEs that change labels; check the matchConditions of its webhook configuration", def.Name)
	}
	return nil
}
