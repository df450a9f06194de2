package render

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/celtext"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The in-process layout (docs/in-process.md) is the combined layout with
// some members narrowed further: where CEL proves that a member's evaluator
// allows a request with nothing to say (no finding, no warning), the
// member's part of its entry's matchCondition excludes the request, and the
// API server admits it without calling gatehouse. On request it also
// renders PSC's defaults as a MutatingAdmissionPolicy (below).
//
// Only allows are proven in the API server. Every request a member could
// deny or warn about still reaches the webhook, which alone applies
// exceptions (webhooks/exceptions.go), modes, the decision metrics and the
// audit annotations: an admission policy that denied in the API server would
// deny what an exception excuses. A narrowing that holds is an answer the
// member would have given anyway, in every mode and whatever exceptions
// exist, so each layout gives every request the same verdict, codes, field
// paths and warnings (TestInProcessNarrowingIsSound).

// inProcessRow is one member the in-process layout narrows, and the CEL
// predicate, over request and object as a matchCondition sees them, that is
// true only where the member's evaluator allows with nothing to say.
type inProcessRow struct {
	webhook string
	allows  func(route.Options) string
}

var inProcessTable = []inProcessRow{
	{webhook: podSecurityDefaults, allows: podSecurityDefaultsAllows},
	{webhook: "secret-scope", allows: secretScopeAllows},
	{webhook: "service-account", allows: serviceAccountAllows},
	{webhook: "pod-security", allows: podSecurityAllows},
}

// InProcessWebhooks names the webhooks the in-process layout narrows, in
// the table's order.
func InProcessWebhooks() []string {
	out := make([]string, len(inProcessTable))
	for i, row := range inProcessTable {
		out[i] = row.webhook
	}
	return out
}

// inProcessEntry narrows one combined entry for the in-process layout: the
// expression of each member the table names, within the entry's condition,
// is replaced by itself and the negation of the member's allows predicate.
func inProcessEntry(o route.ManifestOptions, g route.Group, w admissionregistrationv1.ValidatingWebhook) admissionregistrationv1.ValidatingWebhook {
	for _, m := range g.Members(o.Options) {
		for _, row := range inProcessTable {
			if row.webhook != m.Def.Name {
				continue
			}
			member := m.MemberExpression(o.Options)
			for i, c := range w.MatchConditions {
				if c.Name == route.MembersCondition && strings.Contains(c.Expression, member) {
					w.MatchConditions[i].Expression = strings.Replace(c.Expression, member,
						fmt.Sprintf("(%s && !(%s))", member, row.allows(o.Options)), 1)
				}
			}
		}
	}
	return w
}

// InProcessNarrowing holds the in-process layout's allows predicates as
// rendered for one set of options, for `gatehouse check` to evaluate per
// request without rendering them again.
type InProcessNarrowing struct {
	allows map[string]string // by webhook
}

// NewInProcessNarrowing renders the allows predicates for opts.
func NewInProcessNarrowing(opts route.Options) InProcessNarrowing {
	n := InProcessNarrowing{allows: make(map[string]string, len(inProcessTable))}
	for _, row := range inProcessTable {
		n.allows[row.webhook] = row.allows(opts)
	}
	return n
}

// Allows reports whether the in-process layout narrows webhook away from
// req because CEL proves it allows, evaluating the predicate on object and
// oldObject as the API server evaluates a matchCondition.
func (n InProcessNarrowing) Allows(webhook string, req *admission.Request, object, oldObject map[string]any) (bool, error) {
	expr, ok := n.allows[webhook]
	if !ok {
		return false, nil
	}
	return route.EvalCachedCondition(expr, req, object, oldObject)
}

// SCOPE (docs/secret-scope.md) allows, with nothing to say, a CREATE of a
// PersistentVolumeClaim, a Pod, a pod template kind or a StatefulSet's
// volumeClaimTemplates whose secrets.kubedoop.dev/ annotation maps CEL can
// read as the evaluator does and finds valid: known keys only (class,
// scope, format, kerberosServiceNames, pod-info), a format of tls-pem or
// kerberos (tls-p12 warns without a password, any other format warns that
// it is served as PEM), a class, and a scope whose every entry is node, pod,
// service=<Service name> or listener-volume=<volume name>. UPDATEs stay on
// the webhook (a finding on an unchanged value ratchets into a warning), and
// so do product custom resources (walked at any depth).

// byResource selects, by the request's resource, one of the expressions
// (else the fallback).
func byResource(locs []scope.Location, pick func(scope.Location) string, fallback string) string {
	var b strings.Builder
	for _, l := range locs {
		fmt.Fprintf(&b, "%s ? (%s) : ", celtext.ResourceIs(l.Resource), pick(l))
	}
	b.WriteString(fallback)
	return b.String()
}

func secretScopeAllows(route.Options) string {
	locs := scope.Locations()
	var resources []string
	for _, l := range locs {
		resources = append(resources, celtext.ResourceIs(l.Resource))
	}
	maps := "(" + byResource(locs, func(l scope.Location) string { return l.Maps }, "[]") + ")"
	return fmt.Sprintf("request.operation == 'CREATE' && !has(request.subResource) && (%s) && %s && %s",
		strings.Join(resources, " || "), scope.DecidableCEL(maps), scope.AllowsCEL(maps))
}

// SA (docs/service-account.md) allows, with nothing to say, a CREATE of a
// Pod or pod template kind when, for every controller ownerReference with a
// product API group, the pod spec's serviceAccountName and serviceAccount
// are empty or the derived name <lowercase kind>-<name> (serviceAccount may
// also repeat serviceAccountName). CEL proves it where the derived name needs
// no hash (at most 253 bytes) and the kind is ASCII letters and digits (so
// lowerAscii is strings.ToLower). UPDATEs stay on the webhook (ratcheting),
// and so do product custom resources (podOverrides at any depth, keys folded
// as encoding/json folds them).

// productController is the CEL predicate on an ownerReference r that it is
// a controller reference with a product API group.
func productController(opts route.Options) string {
	return serviceaccount.ProductControllerCEL(opts.Products)
}

func serviceAccountAllows(opts route.Options) string {
	expected := opts.ServiceAccounts.CEL()
	owners := byPodKind(func(_ workload.Kind, spec string) string {
		named := func(f string) string {
			return fmt.Sprintf("(!has(%s.%s) || %s.%s == '' || %s.%s == %s)", spec, f, spec, f, spec, f, expected)
		}
		return fmt.Sprintf("!has(object.metadata) || !has(object.metadata.ownerReferences) || "+
			"object.metadata.ownerReferences.all(r, !(%s) || (%s && (%s || (has(%s.serviceAccountName) && %s.serviceAccountName == %s.serviceAccount))))",
			productController(opts), named("serviceAccountName"), named("serviceAccount"), spec, spec, spec)
	})
	refs := fmt.Sprintf("(!has(object.metadata) || !has(object.metadata.ownerReferences) || object.metadata.ownerReferences.all(r, !(%s) || "+
		"(has(r.kind) && has(r.name) && r.kind.matches('^[A-Za-z0-9]+$') && r.name.matches('^[ -~]+$') && r.kind.size() + r.name.size() < 253)))",
		productController(opts))
	return fmt.Sprintf("request.operation == 'CREATE' && !has(request.subResource) && %s && (%s)", refs, owners)
}

// byPodKind selects, by the request's resource, pred over the pod spec of
// each kind that runs pods (spec, a CEL expression; an object without one
// passes), and false for any other resource.
func byPodKind(pred func(k workload.Kind, spec string) string) string {
	var b strings.Builder
	for _, k := range workload.Kinds() {
		path := k.SpecPath()
		fmt.Fprintf(&b, "%s ? (!(%s) || (%s)) : ", route.ResourceIs(route.Resource{GVR: k.Resource, Kind: k.Kind}),
			route.HasPath(path), pred(k, "object."+strings.Join(path, ".")))
	}
	b.WriteString("false")
	return b.String()
}

// PSC's guard (docs/podsecurity.md) allows, with nothing to say, a created
// Pod that states every field of the defaults table (the mutating webhook
// ran) and no runAsUser of 0, and a workload whose pod template states no
// runAsUser of 0 (nor gets one from the defaults). The pods/ephemeralcontainers
// subresource stays on the webhook (only the new containers are judged).

func podSecurityAllows(opts route.Options) string {
	return fmt.Sprintf("!has(request.subResource) && (%s)", byPodKind(func(k workload.Kind, spec string) string {
		if len(k.Template) == 0 {
			return fmt.Sprintf("request.operation == 'CREATE' && (%s)", podsecurity.PodAllowsCEL(spec))
		}
		return podsecurity.TemplateAllowsCEL(spec, opts.PodDefaults)
	}))
}

// PSC's defaults (docs/podsecurity.md). The mutating member changes nothing
// in a created Pod that states every field of the defaults table, so the
// layout narrows it away from those. Where the API server serves
// admissionregistration.k8s.io/v1 MutatingAdmissionPolicy, the layout can
// also render the defaults as one (defaultsPolicy), which fills them
// in before the mutating webhooks run for the Pods whose defaults CEL
// computes exactly as DefaultPod does: those Pods then never reach the
// webhook.

const podSecurityDefaults = "pod-security-defaults"

func podSecurityDefaultsAllows(route.Options) string {
	return fmt.Sprintf("request.operation == 'CREATE' && !has(request.subResource) && %s && has(object.spec) && %s",
		celtext.ResourceIs(schema.GroupVersionResource{Version: "v1", Resource: "pods"}), podsecurity.StatesDefaultsCEL("object.spec"))
}

// mutatingPolicies are the mutating admission policies of the in-process
// layout and their bindings.
type mutatingPolicies struct {
	Policies []admissionregistrationv1.MutatingAdmissionPolicy
	Bindings []admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// policyName is the name of the admission policy (and its binding) that
// stands in for webhook.
func policyName(webhook string) string { return "gatehouse-" + webhook }

// defaultsPolicy renders PSC's defaults as a MutatingAdmissionPolicy
// bound to the opted-in namespaces, when o asks for it (DefaultsPolicy; it
// is called for the in-process layout only) and the defaults webhook is in
// Enforce (in Warn and Audit it withholds its patch, which a policy
// cannot). Its
// failure policy and reinvocation are the webhook's: a policy that fails
// leaves the Pod to the webhook, and a Pod a later webhook changes is
// defaulted again. A MutatingAdmissionPolicy costs the API server more
// than the webhook call it saves (docs/in-process.md); what it buys is Pods
// defaulted and admitted while gatehouse is down.
func defaultsPolicy(o route.ManifestOptions) mutatingPolicies {
	def, ok := route.Lookup(podSecurityDefaults)
	if !ok || !o.DefaultsPolicy || o.ModeOf(podSecurityDefaults) != configv1alpha1.ModeEnforce {
		return mutatingPolicies{}
	}
	name := policyName(podSecurityDefaults)
	failure := o.FailurePolicy(def.Name, def.FailurePolicy)
	equivalent := admissionregistrationv1.Equivalent
	labels := map[string]string{"app.kubernetes.io/name": "gatehouse"}
	pods := admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	return mutatingPolicies{
		Policies: []admissionregistrationv1.MutatingAdmissionPolicy{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{pods}, MatchPolicy: &equivalent,
					NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
				},
				MatchConditions: append(o.ExemptionCondition(), admissionregistrationv1.MatchCondition{
					Name: "gatehouse-decidable", Expression: podsecurity.DefaultsDecidableCEL()}),
				Mutations: []admissionregistrationv1.Mutation{{
					PatchType: admissionregistrationv1.PatchTypeJSONPatch,
					JSONPatch: &admissionregistrationv1.JSONPatch{Expression: podsecurity.DefaultsPatchCEL(o.PodDefaults)},
				}},
				FailurePolicy:      &failure,
				ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
			},
		}},
		Bindings: []admissionregistrationv1.MutatingAdmissionPolicyBinding{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
				PolicyName: name,
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: o.OptedInSelector(), ObjectSelector: &metav1.LabelSelector{}, MatchPolicy: &equivalent,
				},
			},
		}},
	}
}

// inProcessManifests renders the policies and bindings as YAML documents.
func inProcessManifests(o route.ManifestOptions) ([]byte, error) {
	m := defaultsPolicy(o)
	var out []byte
	for i := range m.Policies {
		for _, obj := range []any{&m.Policies[i], &m.Bindings[i]} {
			doc, err := marshalManifest(obj)
			if err != nil {
				return nil, err
			}
			out = append(append(out, "---\n"...), doc...)
		}
	}
	return out, nil
}
