package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The review chain is the one path every review takes: a webhook's own
// endpoint, a combined endpoint and `gatehouse check` differ only in the
// members they run and in what they do with a denial.
//
//  1. Route: each member, in order, takes the request or not (its rules and
//     matchConditions, then the namespace's labels when it depends on them,
//     read at most once per review).
//  2. Decode: the object (and old object) are decoded once, when the first
//     member runs, and shared by every member; a mutating member changes the
//     object in place, or replaces it with a copy that shares what it did
//     not change (Result.CopiedOnWrite), and the next member sees the change.
//  3. Decide: each member's evaluator returns findings; on a validating
//     UPDATE the old object's findings ratchet them; the findings become the
//     member's Decision, a value the log line, the metric and the answer read.
//  4. Answer: the first member that does not allow answers for the chain,
//     as the API server would stop at it; otherwise one patch from the object
//     as sent to the object as the members left it, with every member's
//     warnings and audit annotations.
//
// The whole review races one deadline (deadline.go).

// member is a webhook as a chain runs it: where it is placed, and its
// evaluator.
type member struct {
	route.Member
	eval adapters.Evaluator
}

// chain runs members over one review.
type chain struct {
	// name and failurePolicy are the endpoint's: they answer a review that
	// runs out of time.
	name          string
	failurePolicy admissionregistrationv1.FailurePolicyType
	members       []member
	opts          route.Options
	serves        serving
}

// serving says where a chain answers, which decides what it does with a
// request a member does not take and with a member's denial.
type serving int

const (
	// servesGroup: a combined endpoint. A member that does not take the
	// request is skipped; the first that does not allow answers.
	servesGroup serving = iota
	// servesWebhook: a webhook's own endpoint. A request its member does
	// not take is refused with a 400 naming the rule that excludes it (the
	// API server never sends one).
	servesWebhook
	// servesCheck: `gatehouse check`. Nothing selected the request yet;
	// every member decides whatever the members before it decided, and each
	// mutating member's patch is its own, from the object as the member
	// before it left it.
	servesCheck
)

// selected is what selected the requests c routes.
func (s serving) selected() route.Selected {
	if s == servesCheck {
		return route.ByNothing
	}
	return route.ByEntry
}

// Decision is what one webhook decided on one review.
type Decision struct {
	Webhook string
	// Outcome is DecisionAllowed, DecisionDenied, DecisionExcused or
	// DecisionErrored;
	// offline also DecisionUndecided (undecided.go).
	Outcome  string
	Findings []policies.Finding
	// Response is the webhook's own answer, as its own endpoint gives it.
	Response admission.Response
	// Mutated reports that a mutating webhook changed the object.
	Mutated bool
	// Mode is the webhook's mode (modes.go): Outcome and Findings are what
	// the contract decided, Response what the mode answered.
	Mode configv1alpha1.Mode
	// Withheld lists the operations ("add /spec/...") of the patch a
	// mutating webhook in Audit decided and did not apply.
	Withheld []string
	// WouldDeny is the denial a webhook in Warn or Audit did not answer
	// with: what it answers in Enforce.
	WouldDeny *metav1.Status
	// ModeDrift is set when the webhook decided in the mode of the entry
	// the request came through, not the server's (webhooks/route/drift.go).
	ModeDrift *route.ModeDrift
	// Missing names the state an offline review needed and was not given
	// (undecided.go): why the decision is DecisionUndecided, or, beside a
	// denial that stands on other findings, what else was missing.
	Missing []string
	// Excused are the denying findings exceptions excused; Expired those an
	// expired exception names, which still deny (exceptions.go).
	Excused  []Excusal
	Expired  []Excusal
	Duration time.Duration
	TimedOut bool
}

// Decisions as they appear in logs and the decision metric.
const (
	DecisionAllowed = "allowed"
	DecisionDenied  = "denied"
	DecisionErrored = "errored"
)

// verdict is a chain's answer to one review and the decisions behind it.
type verdict struct {
	resp      admission.Response
	decisions []Decision
	// object is the object as the members left it (offline only).
	object map[string]any
}

// pass is one review's way through a chain, allocated once per review.
type pass struct {
	// member is the index of the member the review is at, for the answer
	// when the deadline passes first.
	member atomic.Int32
	shared sharedReview
	ns     namespaceView
	// own holds the decision of a one-member chain, which is most reviews.
	own [1]Decision
	// What a reviewer goroutine needs to run the chain (reviewers.go).
	chain *chain
	ctx   context.Context
	req   *admission.Request
	done  chan<- outcome
}

// review runs the chain within the review's deadline. The chain runs on a
// goroutine of its own (reviewers.go), which the caller abandons when the
// deadline passes first: it ends when the hung lookup returns, and its late
// verdict is dropped. A panic in the chain is raised again here, so
// controller-runtime recovers it into a denying 500 as it does for any
// handler panic.
func (c *chain) review(ctx context.Context, req *admission.Request) verdict {
	d := deadlineOf(ctx)
	// Only the deadline ends a review: the request's context is also
	// cancelled when the server begins its graceful shutdown, and the reviews
	// in flight then must still get their real answers.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.deadline)
	defer cancel()
	p := &pass{shared: sharedReview{req: req, objects: decodedObjectsOf(ctx)}, ns: namespaceView{opts: &c.opts, namespace: req.Namespace, asManaged: c.serves == servesCheck}}
	p.member.Store(-1)
	done := make(chan outcome, 1) // buffered: a late verdict never blocks the goroutine
	start := time.Now()
	p.chain, p.ctx, p.req, p.done = c, ctx, req, done
	startReview(p)
	select {
	case got := <-done:
		if got.panicked != nil {
			panic(got.panicked)
		}
		return got.v
	case <-ctx.Done():
		name, mode := c.name, c.opts.ModeOf(c.name)
		var drift *route.ModeDrift
		if i := p.member.Load(); i >= 0 {
			m := &c.members[i]
			name, mode, drift = m.Def.Name, c.modeOf(m), m.Drift
		}
		// An Ignore endpoint's timeout admits, as the API server would.
		outcome := DecisionErrored
		if c.failurePolicy == admissionregistrationv1.Ignore {
			outcome = DecisionAllowed
		}
		resp := timedOut(name, c.failurePolicy, d.timeout)
		return verdict{resp: resp, decisions: []Decision{{
			Webhook: name, Outcome: outcome, Response: resp, Duration: time.Since(start), TimedOut: true, Mode: mode, ModeDrift: drift,
		}}}
	}
}

// outcome is what the chain's goroutine hands back: a verdict, or the
// panic it raised.
type outcome struct {
	v        verdict
	panicked any
}

// runInto runs the chain on a reviewer goroutine and sends the outcome to
// done.
func (c *chain) runInto(ctx context.Context, req *admission.Request, p *pass, done chan<- outcome) {
	defer func() {
		if r := recover(); r != nil {
			done <- outcome{panicked: r}
		}
	}()
	done <- outcome{v: c.run(ctx, req, p)}
}

// run is the chain without its deadline.
func (c *chain) run(ctx context.Context, req *admission.Request, p *pass) verdict {
	v := verdict{decisions: p.own[:0]}
	if len(c.members) > len(p.own) {
		v.decisions = make([]Decision, 0, len(c.members))
	}
	if c.opts.Exempt(req, p.ns.labels) {
		return c.exemptVerdict(req, v)
	}
	step := memberStep{req: req, p: p}
	// Offline, an exemption by namespace labels that cannot be read leaves
	// every decision open: the request may be exempt.
	step.exemptionUnknown, step.unsure = c.exemptionUnknown(req, &p.ns)
	var a answer
	for i := range c.members {
		m := &c.members[i]
		p.member.Store(int32(i))
		d, ok := c.step(ctx, m, &step)
		if !ok {
			continue
		}
		v.decisions = append(v.decisions, d)
		if c.serves != servesCheck && a.add(c.serves, m.Def.Name, d) {
			v.resp = a.denial(c.serves, d)
			return v
		}
	}
	shared := &p.shared
	switch c.serves {
	case servesCheck:
		if shared.review != nil {
			v.object = shared.review.Object
		}
	case servesWebhook:
		d := &v.decisions[0]
		if a.mutated {
			if d.Response = withPatch(d.Response, c.patch(req, shared)); !d.Response.Allowed {
				d.Outcome = DecisionErrored
			}
		}
		v.resp = d.Response
	default:
		v.resp = admission.Allowed("")
		if a.mutated {
			// The patch's own answer, as the API server would read it.
			v.resp = c.patch(req, shared)
		}
		v.resp.Warnings = a.warnings
		if len(a.annotations) > 0 {
			v.resp.AuditAnnotations = a.annotations
		}
	}
	return v
}

// memberStep is what the members of one review share besides the decoded
// object: the request, the review's pass, and, offline, the object as the
// members before left it and what the exemption check could not read.
type memberStep struct {
	req              *admission.Request
	p                *pass
	last             map[string]any // nil until read
	exemptionUnknown string
	unsure           bool
	// ex are the exceptions that match the review, read once.
	ex excuses
}

// step routes req to m and, when m takes it, has m decide in its mode;
// ok is false when m gives no decision.
func (c *chain) step(ctx context.Context, m *member, s *memberStep) (Decision, bool) {
	req, shared := s.req, &s.p.shared
	start := time.Now()
	c.takeGaps() // what the members before this one were not given is theirs
	d, taken := c.route(m, req, &s.p.ns, shared)
	if taken {
		d = s.ex.excuse(c, m, c.decide(ctx, m, req, shared), shared)
		if c.serves == servesCheck && m.Def.Type == route.Mutating && shared.review != nil {
			d = c.ownChange(d, req, shared, &s.last)
		}
	}
	if d.Webhook == "" {
		return d, false
	}
	d = inMode(d, c.modeOf(m))
	if m.Drift != nil {
		d = withModeDrift(d, *m.Drift)
	}
	if c.serves == servesCheck {
		d = withMissing(d, c.takeGaps())
		if s.unsure && d.Outcome != DecisionUndecided {
			u := undecided(d.Webhook, slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(d.Missing), s.exemptionUnknown)))))
			u.Findings, u.Mode = d.Findings, d.Mode
			d = u
		}
	}
	d.Duration = time.Since(start)
	return d, true
}

// answer gathers what a served chain answers from its members' decisions:
// the first that does not allow answers, as the API server would stop at
// it; otherwise every member's warnings and audit annotations and, when
// one mutated, a patch.
type answer struct {
	warnings    []string
	annotations map[string]string
	mutated     bool
}

// add takes d, the decision of the member named name, and reports whether
// it answers for the chain (it does not allow).
func (a *answer) add(serves serving, name string, d Decision) bool {
	if serves == servesWebhook {
		a.mutated = d.Mutated
		return !d.Response.Allowed
	}
	a.warnings = append(a.warnings, d.Response.Warnings...)
	for k, val := range d.Response.AuditAnnotations {
		if a.annotations == nil {
			a.annotations = map[string]string{}
		}
		a.annotations[name+"."+k] = val
	}
	a.mutated = a.mutated || d.Mutated
	return !d.Response.Allowed
}

// denial is the answer of the chain whose member decided d, which does not
// allow: a webhook's own endpoint answers with d's response, a combined one
// with the warnings and annotations of every member so far.
func (a *answer) denial(serves serving, d Decision) admission.Response {
	resp := d.Response
	if serves != servesWebhook {
		resp.Warnings, resp.AuditAnnotations = a.warnings, a.annotations
	}
	return resp
}

// route decides whether m runs on req. A member that is not taken gives no
// decision (an empty Webhook), except that a webhook's own endpoint refuses
// it with a 400, and a combined endpoint that cannot read the namespace a
// member depends on fails as its failure policy says.
func (c *chain) route(m *member, req *admission.Request, ns *namespaceView, shared *sharedReview) (Decision, bool) {
	if c.serves == servesWebhook {
		if err := m.Refuses(req, c.opts); err != nil {
			return errored(m.Def, http.StatusBadRequest, err), false
		}
		return Decision{}, true
	}
	if !m.SelectsRequest(req, c.opts) || !m.TakesAccount(req, c.serves.selected(), c.opts) {
		return Decision{}, false
	}
	if c.serves == servesCheck {
		if d, taken := c.acts(m, req, shared); !taken {
			return d, false
		}
	}
	if !m.NeedsNamespace(c.serves.selected()) {
		return Decision{}, true
	}
	labels, err := ns.labels()
	if what, ok := notGiven(err); ok && c.serves == servesCheck {
		return undecided(m.Def.Name, []string{what}), false
	}
	if err != nil {
		err = fmt.Errorf("combined webhook %s cannot tell whether %s applies: %w", c.name, m.Def.Name, err)
		if c.failurePolicy == admissionregistrationv1.Ignore {
			// What the API server does for a failing Ignore entry.
			resp := admission.Allowed("")
			resp.Warnings = []string{fmt.Sprintf("gatehouse %s: skipped: %v", m.Def.Name, err)}
			return Decision{Webhook: m.Def.Name, Outcome: DecisionErrored, Response: resp}, false
		}
		return errored(m.Def, http.StatusInternalServerError, err), false
	}
	return Decision{}, m.SelectsNamespace(req, labels, c.opts)
}

// acts evaluates m's content predicate offline, on the object as the
// members before it left it, as the API server evaluates the webhook's
// matchCondition: false skips the member; an error fails the request for a
// Fail webhook and skips an Ignore one. An object that does not decode is
// taken, and the member then says why it cannot decide.
func (c *chain) acts(m *member, req *admission.Request, shared *sharedReview) (Decision, bool) {
	if m.Def.Intercept.Acts == nil {
		return Decision{}, true
	}
	review, err := shared.decoded(m.Def)
	if err != nil {
		return Decision{}, true
	}
	ok, err := route.ActsOn(m.Def.Intercept, c.opts, req, review.Object, review.OldObject)
	switch {
	case err != nil && c.opts.FailurePolicy(m.Def.Name, m.Def.FailurePolicy) == admissionregistrationv1.Fail:
		return errored(m.Def, http.StatusInternalServerError,
			fmt.Errorf("webhook %s: its matchCondition gatehouse-acts failed, and the API server rejects the request: %w", m.Def.Name, err)), false
	case err != nil:
		return Decision{}, false
	}
	return Decision{}, ok
}

// decide runs m's evaluator on the shared review.
func (c *chain) decide(ctx context.Context, m *member, req *admission.Request, shared *sharedReview) Decision {
	def := m.Def
	gvr, gvk := schema.GroupVersionResource(req.Resource), schema.GroupVersionKind(req.Kind)
	if err := def.Intercept.CheckKind(gvr, req.SubResource, gvk); err != nil {
		return errored(def, http.StatusBadRequest, err)
	}
	if c.serves == servesWebhook && !def.Intercept.ObjectMatches(req.Namespace, req.Name, c.opts) {
		return errored(def, http.StatusBadRequest, fmt.Errorf("webhook %s validates only %s/%s; check the matchConditions of its webhook configuration",
			def.Name, c.opts.Overrides.Namespace, c.opts.Overrides.ConfigMapName))
	}
	review, err := shared.decoded(def)
	if err != nil {
		return errored(def, http.StatusBadRequest, err)
	}
	if def.Type == route.Mutating && c.modeOf(m) == configv1alpha1.ModeAudit {
		return c.decideWithheld(ctx, m, review)
	}
	result, err := m.eval.Evaluate(ctx, review)
	if result.Mutated && !result.CopiedOnWrite {
		shared.sentIntact = false
	}
	if err != nil {
		return errored(def, http.StatusInternalServerError, evaluationError(def, err))
	}
	findings := result.Findings
	if review.Operation == admissionregistrationv1.Update && def.Type == route.Validating {
		old := *review
		old.Object, old.OldObject = review.OldObject, nil
		oldResult, err := m.eval.Evaluate(ctx, &old)
		if err != nil {
			return errored(def, http.StatusInternalServerError, evaluationError(def, err))
		}
		findings = ratchet(findings, oldResult.Findings)
	}
	policies.Sort(findings)
	resp := respond(def.Name, review, findings)
	outcome := DecisionAllowed
	if !resp.Allowed {
		outcome = DecisionDenied
	}
	return Decision{Webhook: def.Name, Outcome: outcome, Findings: findings, Response: resp, Mutated: result.Mutated && resp.Allowed}
}

// decideWithheld runs a mutating member in Audit on a copy of the object:
// the members after it see the object as it found it, and the patch it
// would have made is kept as Decision.Withheld.
func (c *chain) decideWithheld(ctx context.Context, m *member, review *adapters.Review) Decision {
	found := review.Object
	review.Object = deepCopyJSON(found).(map[string]any)
	result, err := m.eval.Evaluate(ctx, review)
	changed := review.Object
	review.Object = found
	if err != nil {
		return errored(m.Def, http.StatusInternalServerError, evaluationError(m.Def, err))
	}
	policies.Sort(result.Findings)
	d := Decision{Webhook: m.Def.Name, Outcome: DecisionAllowed, Findings: result.Findings, Response: respond(m.Def.Name, review, result.Findings)}
	if !d.Response.Allowed {
		d.Outcome = DecisionDenied
		return d
	}
	if result.Mutated {
		for _, op := range canonicalPatch(diffJSON(found, changed)) {
			d.Withheld = append(d.Withheld, op.Operation+" "+op.Path)
		}
	}
	return d
}

// exemptVerdict answers an exempt request: a plain allow, with an exempt
// decision for every member that would have taken it.
func (c *chain) exemptVerdict(req *admission.Request, v verdict) verdict {
	for i := range c.members {
		m := &c.members[i]
		if c.serves == servesWebhook || (m.SelectsRequest(req, c.opts) && m.InScope(req)) {
			v.decisions = append(v.decisions, Decision{Webhook: m.Def.Name, Outcome: DecisionExempt,
				Response: admission.Allowed(""), Mode: c.modeOf(m)})
		}
	}
	v.resp = admission.Allowed("")
	return v
}

// patch is the answer that patches the object as sent into the shared
// object as the members left it. While every mutating member copied on
// write, the object as sent is the one decoded, and the comparison skips
// every part the members left shared; otherwise a member changed objects in
// place, and the object as sent is decoded again from the request.
func (c *chain) patch(req *admission.Request, shared *sharedReview) admission.Response {
	if shared.sentIntact {
		return patchBetween(shared.sent, shared.review.Object)
	}
	var sent map[string]any
	if err := json.Unmarshal(req.Object.Raw, &sent); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("webhook %s could not decode the object again to patch it: %w", c.name, err))
	}
	return patchBetween(sent, shared.review.Object)
}

// patchBetween is the answer that patches before into after, compared in
// memory (diffJSON, which writes the patch CreatePatch would), in the
// canonical order.
func patchBetween(before, after map[string]any) admission.Response {
	resp := admission.Response{Patches: canonicalPatch(diffJSON(before, after))}
	resp.Allowed = true
	if len(resp.Patches) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
	}
	return resp
}

// withPatch is resp carrying patched's patch, or patched when the patch
// could not be made.
func withPatch(resp, patched admission.Response) admission.Response {
	if !patched.Allowed {
		return patched
	}
	resp.Patches, resp.PatchType = patched.Patches, patched.PatchType
	return resp
}

// ownChange settles an offline mutating member's decision: an allowed change
// becomes the member's own patch, from last, the object as the members
// before it left it, and last moves on; a member that did not allow leaves
// the object as it found it for the members after it.
func (c *chain) ownChange(d Decision, req *admission.Request, shared *sharedReview, last *map[string]any) Decision {
	if *last == nil {
		if err := json.Unmarshal(req.Object.Raw, last); err != nil {
			return errored(route.Definition{Name: d.Webhook}, http.StatusInternalServerError, err)
		}
	}
	if !d.Response.Allowed {
		shared.review.Object = deepCopyJSON(*last).(map[string]any)
		return d
	}
	if d.Mutated {
		d.Response = withPatch(d.Response, patchBetween(*last, shared.review.Object))
		*last = deepCopyJSON(shared.review.Object).(map[string]any)
	}
	return d
}

// errored is the decision of a member that could not decide: the API server
// denies on it whatever the failure policy, as the answer is not an allow.
func errored(def route.Definition, code int32, err error) Decision {
	resp := admission.Errored(code, err)
	return Decision{Webhook: def.Name, Outcome: DecisionErrored, Response: resp}
}

// evaluationError says which webhook could not decide: an enforcing webhook
// that cannot decide never allows.
func evaluationError(def route.Definition, err error) error {
	return fmt.Errorf("webhook %s could not evaluate the request: %w", def.Name, err)
}

// namespaceView reads the labels of a review's namespace once, for every
// member that depends on them.
type namespaceView struct {
	opts      *route.Options
	namespace string
	// asManaged adds the labels gatehouse's selections controller
	// keeps current, when it runs (webhooks/route/selection.go): offline, where no
	// controller labelled the namespaces check is given.
	asManaged bool
	read      bool
	got       map[string]string
	err       error
}

// labels reads the labels of the namespace; none for a cluster-scoped
// object.
func (n *namespaceView) labels() (map[string]string, error) {
	if !n.read {
		n.got, n.err = n.fetch()
		n.read = true
	}
	return n.got, n.err
}

func (n *namespaceView) fetch() (map[string]string, error) {
	if n.namespace == "" {
		return nil, nil
	}
	if n.opts.Namespaces == nil {
		return nil, route.ErrNoClusterState
	}
	labels, err := n.opts.Namespaces.NamespaceLabels(n.namespace)
	if err != nil {
		return nil, err
	}
	if n.asManaged && n.opts.ManagedSelections {
		if labels, err = route.WithManagedLabels(*n.opts, n.namespace, labels); err != nil {
			return nil, err
		}
	}
	// The API server's namespaceSelector sees this label on every
	// namespace. The view's map is its own: add it to a copy.
	if _, ok := labels[corev1.LabelMetadataName]; !ok {
		withName := make(map[string]string, len(labels)+1)
		maps.Copy(withName, labels)
		withName[corev1.LabelMetadataName] = n.namespace
		labels = withName
	}
	return labels, nil
}
