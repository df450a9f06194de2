package render

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/celtext"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The in-process layout (docs/in-process.md): where the API server serves
// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, the decisions
// CEL can make with the webhook's own verdict are rendered as admission
// policies, which the API server evaluates in-process, and the webhook
// entries are narrowed to what CEL cannot decide.
//
// Each policy decides a request wholly or not at all: its predicate (the
// row's decided, which the policy's validation also reads) is true only
// where CEL gives exactly the evaluator's findings (codes and field paths)
// and no warning; elsewhere the policy admits and the webhook, whose member
// is narrowed by the negation of the same predicate (inProcessEntry),
// decides. The API server runs validating policies
// before validating webhooks and stops at the first denial, so a request
// both would judge is judged by one of them, never by two. A policy's
// message lists every finding as "<field>: <Code>: <message> (gatehouse
// <webhook>)", joined by "; ", and never a value from the object.
//
// `gatehouse check --layout in-process` evaluates these same objects with
// the API server's own admission-policy code (webhooks/admissionpolicy).

// InProcessPolicies are the admission policies of the in-process layout.
type InProcessPolicies struct {
	Validating []admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings   []admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// inProcessPolicy is one row of the in-process table: the webhook a policy
// takes requests from, and how to render both halves from the options.
type inProcessPolicy struct {
	// webhook is the registry row whose decisions the policy makes.
	webhook string
	// policy renders the ValidatingAdmissionPolicy's spec (without the
	// failure policy, which is the webhook's).
	policy func(route.Options) admissionregistrationv1.ValidatingAdmissionPolicySpec
	// decided is the CEL predicate, over request and object as a
	// matchCondition sees them, that is true exactly where the policy
	// decides; the webhook's member is narrowed by its negation.
	decided func(route.Options) string
}

// inProcessTable lists the policies of the in-process layout, in registry
// order. The API server evaluates policies in no order it promises, so a
// request two policies would deny is decided by the first of them only: a
// later row decides only where every earlier row that acts on the request
// decides it and allows (as the combined entry answers with its first
// denying member).
// InProcessWebhooks names the webhooks whose decisions the in-process
// layout's policies make for some requests, in the table's order.
func InProcessWebhooks() []string {
	out := make([]string, len(inProcessTable))
	for i, row := range inProcessTable {
		out[i] = row.webhook
	}
	return out
}

var inProcessTable = []inProcessPolicy{
	{webhook: "secret-scope", policy: secretScopePolicy, decided: secretScopeDecided},
	{webhook: "service-account", policy: serviceAccountPolicy, decided: serviceAccountDecided},
}

// PolicyName is the name of the policy (and its binding) that takes
// decisions from webhook.
func PolicyName(webhook string) string { return "gatehouse-" + webhook }

// InProcess renders the admission policies of the in-process layout from the
// registry and o.Options: one per row of the in-process table whose webhook
// is in the registry, bound with the namespaces the webhooks exclude.
func InProcess(o route.ManifestOptions) InProcessPolicies {
	var out InProcessPolicies
	for _, row := range inProcessTable {
		def, ok := route.Lookup(row.webhook)
		if !ok {
			continue
		}
		name := PolicyName(row.webhook)
		equivalent := admissionregistrationv1.Equivalent
		spec := row.policy(o.Options)
		failure := o.FailurePolicy(def.Name, def.FailurePolicy)
		spec.FailurePolicy = &failure
		// The webhook's content predicate (webhooks/route/narrowing.go) keeps the policy's
		// variables from being evaluated where the evaluator would give a
		// plain allow: most Pods and workloads.
		spec.MatchConditions = o.ExemptionCondition()
		if def.Intercept.Acts != nil {
			spec.MatchConditions = append(spec.MatchConditions, admissionregistrationv1.MatchCondition{Name: "gatehouse-acts", Expression: def.Intercept.Acts(o.Options)})
		}
		out.Validating = append(out.Validating, admissionregistrationv1.ValidatingAdmissionPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "gatehouse"}},
			Spec:       spec,
		})
		out.Bindings = append(out.Bindings, admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "gatehouse"}},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: name,
				MatchResources: &admissionregistrationv1.MatchResources{
					NamespaceSelector: o.ExemptionSelector(o.Namespace),
					ObjectSelector:    &metav1.LabelSelector{},
					MatchPolicy:       &equivalent,
				},
				ValidationActions: []admissionregistrationv1.ValidationAction{validationAction(o.ModeOf(row.webhook))},
			},
		})
	}
	return out
}

// validationAction is what a binding does with a policy's failed
// validation in a webhook's mode.
func validationAction(m configv1alpha1.Mode) admissionregistrationv1.ValidationAction {
	switch m {
	case configv1alpha1.ModeWarn:
		return admissionregistrationv1.Warn
	case configv1alpha1.ModeAudit:
		return admissionregistrationv1.Audit
	}
	return admissionregistrationv1.Deny
}

// Webhook returns the webhook whose decisions the policy named name makes.
func (p InProcessPolicies) Webhook(name string) (string, bool) {
	for _, row := range inProcessTable {
		if PolicyName(row.webhook) == name {
			return row.webhook, true
		}
	}
	return "", false
}

// inProcessEntry narrows one combined entry for the in-process layout: each
// member whose decisions a policy makes for some requests is sent only the
// others. The member's own expression within the entry's condition is
// replaced by itself and the negation of the policy's predicate.
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
						fmt.Sprintf("(%s && !(%s))", member, row.decided(o.Options)), 1)
				}
			}
		}
	}
	return w
}

// inProcessManifests renders the policies and bindings as YAML documents.
func inProcessManifests(o route.ManifestOptions) ([]byte, error) {
	p := InProcess(o)
	var out []byte
	for i := range p.Validating {
		for _, obj := range []any{&p.Validating[i], &p.Bindings[i]} {
			doc, err := marshalManifest(obj)
			if err != nil {
				return nil, err
			}
			out = append(append(out, "---\n"...), doc...)
		}
	}
	return out, nil
}

// InProcessDecides reports, for `gatehouse check`, whether the in-process
// layout narrows webhook away from req (a policy decides it instead),
// evaluating the policy's predicate on object and oldObject as the API server
// evaluates a matchCondition.
func InProcessDecides(webhook string, opts route.Options, req *admission.Request, object, oldObject map[string]any) (bool, error) {
	for _, row := range inProcessTable {
		if row.webhook != webhook {
			continue
		}
		return route.EvalCachedCondition(row.decided(opts), req, object, oldObject)
	}
	return false, nil
}

// SCOPE (docs/secret-scope.md) on CREATE of a PersistentVolumeClaim, a Pod,
// every pod template kind and a StatefulSet's volumeClaimTemplates. CEL
// decides an annotation map when the evaluator's verdict on it needs no
// duration, number or password reading and raises no warning: its
// secrets.kubedoop.dev/ keys are among class, scope, format, kerberosServiceNames
// and pod-info, the format is tls-pem or kerberos (tls-p12 warns without a
// password, any other format warns that it is served as PEM), and the scope
// is not empty and no entry of it has an unknown key (each warns). UPDATEs
// stay on the webhook: a finding on an unchanged value ratchets into a
// warning, which needs the old object's evidence. Product custom resources
// stay on the webhook: they are walked at any depth.

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

// scopeResources are the resources SCOPE's policy takes.
func scopeResources() []route.Resource {
	var out []route.Resource
	for _, l := range scope.Locations() {
		out = append(out, route.Resource{GVR: l.Resource, Kind: l.Kind})
	}
	return out
}

func secretScopeDecided(route.Options) string {
	locs := scope.Locations()
	var resources []string
	for _, l := range locs {
		resources = append(resources, celtext.ResourceIs(l.Resource))
	}
	return fmt.Sprintf("request.operation == 'CREATE' && !has(request.subResource) && (%s) && %s",
		strings.Join(resources, " || "), scope.DecidableCEL("("+byResource(locs, func(l scope.Location) string { return l.Maps }, "[]")+")"))
}

// attributionSecretScope ends each finding of SCOPE's policy, as the
// webhook's response names the webhook.
const attributionSecretScope = " (gatehouse secret-scope)"

// createsOf are a policy's match constraints: CREATE of resources. The
// selectors are stated as the API server defaults them, so that `gatehouse
// check` evaluates the very objects it stores.
func createsOf(resources []route.Resource) *admissionregistrationv1.MatchResources {
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	var rules []admissionregistrationv1.NamedRuleWithOperations
	for _, r := range (route.Intercept{Operations: create, Resources: resources}).Rules(admissionregistrationv1.AllScopes) {
		rules = append(rules, admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: r})
	}
	equivalent := admissionregistrationv1.Equivalent
	return &admissionregistrationv1.MatchResources{
		ResourceRules: rules, MatchPolicy: &equivalent,
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
	}
}

func secretScopePolicy(route.Options) admissionregistrationv1.ValidatingAdmissionPolicySpec {
	locs := scope.Locations()
	invalid := metav1.StatusReasonInvalid
	return admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: createsOf(scopeResources()),
		Variables: []admissionregistrationv1.Variable{
			{Name: "maps", Expression: byResource(locs, func(l scope.Location) string { return l.Maps }, "[]")},
			{Name: "paths", Expression: byResource(locs, func(l scope.Location) string { return l.Paths }, "[]")},
			{Name: "decidable", Expression: scope.DecidableCEL("variables.maps")},
			{Name: "findings", Expression: fmt.Sprintf("variables.maps.transformList(i, a, %s).flatten()", scope.FindingsCEL("variables.paths[i]", attributionSecretScope))},
		},
		Validations: []admissionregistrationv1.Validation{{
			Expression:        "!variables.decidable || variables.findings.size() == 0",
			MessageExpression: "variables.findings.join('; ')",
			Message:           "SCOPE: the object's secrets.kubedoop.dev/ annotations are invalid" + attributionSecretScope,
			Reason:            &invalid,
		}},
	}
}

// PolicyFinding is one finding read back from a policy's denial message.
type PolicyFinding struct {
	Webhook, Code, Field, Message string
}

// policyFindingEnd ends each finding of a policy's message.
var policyFindingEnd = regexp.MustCompile(` \(gatehouse ([a-z-]+)\)(; |$)`)

// PolicyFindings reads the findings out of the message of a denial by a
// policy of the in-process layout (the API server prefixes it with
// "ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied
// request: "); nil for any other message, a webhook's denial included.
func PolicyFindings(message string) []PolicyFinding {
	head, rest, ok := strings.Cut(message, "denied request: ")
	if !ok || !strings.Contains(head, "ValidatingAdmissionPolicy '") {
		return nil
	}
	message = rest
	var out []PolicyFinding
	start := 0
	for _, m := range policyFindingEnd.FindAllStringSubmatchIndex(message, -1) {
		text := message[start:m[0]]
		webhook := message[m[2]:m[3]]
		start = m[1]
		field, rest, ok := strings.Cut(text, ": ")
		code, msg, ok2 := strings.Cut(rest, ": ")
		if !ok || !ok2 {
			continue
		}
		out = append(out, PolicyFinding{Webhook: webhook, Code: code, Field: field, Message: msg})
	}
	return out
}

// SA (docs/service-account.md) on CREATE of a Pod or pod template kind whose
// controller ownerReference has a product API group: the pod spec's
// serviceAccountName and serviceAccount must be empty or the derived name
// <lowercase kind>-<name>. CEL decides it where the derived name needs no
// hash (at most 253 bytes) and the kind is ASCII letters and digits (so
// lowerAscii is strings.ToLower), and where SCOPE, the member before it,
// decides the same object in-process and allows it. UPDATEs stay on the
// webhook (ratcheting), and so do product custom resources (podOverrides at
// any depth, keys folded as encoding/json folds them).

// podSpecLocation is where a pod kind keeps its pod spec.
type podSpecLocation struct {
	resource   route.Resource
	spec, path string
}

func podSpecLocations() []podSpecLocation {
	var out []podSpecLocation
	for _, k := range workload.Kinds() {
		spec := k.SpecPath()
		out = append(out, podSpecLocation{
			resource: route.Resource{GVR: k.Resource, Kind: k.Kind},
			spec:     fmt.Sprintf("(%s ? object.%s : {})", route.HasPath(spec), strings.Join(spec, ".")),
			path:     fmt.Sprintf("%q", strings.Join(spec, ".")),
		})
	}
	return out
}

// productController is the CEL predicate on an ownerReference r that it is
// a controller reference with a product API group.
func productController(opts route.Options) string {
	return serviceaccount.ProductControllerCEL(opts.Products)
}

func serviceAccountDecided(opts route.Options) string {
	var resources []string
	for _, l := range podSpecLocations() {
		resources = append(resources, route.ResourceIs(l.resource))
	}
	refs := fmt.Sprintf("(!has(object.metadata) || !has(object.metadata.ownerReferences) || object.metadata.ownerReferences.all(r, !(%s) || "+
		"(has(r.kind) && has(r.name) && r.kind.matches('^[A-Za-z0-9]+$') && r.name.matches('^[ -~]+$') && r.kind.size() + r.name.size() < 253)))",
		productController(opts))
	maps := "(" + byResource(scope.Locations(), func(l scope.Location) string { return l.Maps }, "[]") + ")"
	return fmt.Sprintf("request.operation == 'CREATE' && !has(request.subResource) && (%s) && %s && %s && %s",
		strings.Join(resources, " || "), refs, scope.DecidableCEL(maps), scope.AllowsCEL(maps))
}

const attributionServiceAccount = " (gatehouse service-account)"

func serviceAccountPolicy(opts route.Options) admissionregistrationv1.ValidatingAdmissionPolicySpec {
	locs := podSpecLocations()
	pick := func(f func(podSpecLocation) string, fallback string) string {
		var b strings.Builder
		for _, l := range locs {
			fmt.Fprintf(&b, "%s ? (%s) : ", route.ResourceIs(l.resource), f(l))
		}
		b.WriteString(fallback)
		return b.String()
	}
	expected := opts.ServiceAccounts.CEL()
	field := func(name, skip string) string {
		return fmt.Sprintf("(has(variables.spec.%s) && variables.spec.%s != '' && variables.spec.%s != %s%s) ? "+
			"variables.specPath + %q + %s + %q : ''",
			name, name, name, expected, skip,
			"."+name+": "+string(serviceaccount.ServiceAccountMismatch)+": ", serviceaccount.MismatchCEL(expected), attributionServiceAccount)
	}
	var resources []route.Resource
	for _, l := range locs {
		resources = append(resources, l.resource)
	}
	invalid := metav1.StatusReasonInvalid
	return admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: createsOf(resources),
		Variables: []admissionregistrationv1.Variable{
			{Name: "decided", Expression: serviceAccountDecided(opts)},
			{Name: "refs", Expression: fmt.Sprintf("has(object.metadata) && has(object.metadata.ownerReferences) ? object.metadata.ownerReferences.filter(r, %s) : []", productController(opts))},
			{Name: "spec", Expression: pick(func(l podSpecLocation) string { return l.spec }, "{}")},
			{Name: "specPath", Expression: pick(func(l podSpecLocation) string { return l.path }, "''")},
			{Name: "findings", Expression: fmt.Sprintf("variables.refs.map(r, [%s, %s]).flatten().filter(m, m != '')",
				field("serviceAccountName", ""),
				field("serviceAccount", " && !(has(variables.spec.serviceAccountName) && variables.spec.serviceAccountName == variables.spec.serviceAccount)"))},
		},
		Validations: []admissionregistrationv1.Validation{{
			Expression:        "!variables.decided || variables.findings.size() == 0",
			MessageExpression: "variables.findings.join('; ')",
			Message:           "SA: a pod controlled by a product runs as another ServiceAccount than its derived one" + attributionServiceAccount,
			Reason:            &invalid,
		}},
	}
}
