package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// fixedExceptions is an ExceptionReader over a fixed list.
type fixedExceptions struct{ ix *exception.Index }

func (f fixedExceptions) Exceptions() *exception.Index { return f.ix }

func exceptionsOf(namespaced bool, entries ...exception.Entry) fixedExceptions {
	return fixedExceptions{exception.NewIndex(entries, exception.Options{Namespaced: namespaced})}
}

// excuseEntry excuses code of webhook on the Pod web in team-a until
// expires.
func excuseEntry(namespace, name, webhook string, expires time.Time, codes ...string) exception.Entry {
	return exception.Entry{Namespace: namespace, Name: name, Spec: exceptionsv1alpha1.ExceptionSpec{
		Match: []exceptionsv1alpha1.ObjectSelector{{Namespaces: []string{"team-a"},
			Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Pod"}}, Names: []string{"web"}}},
		Webhooks: []string{webhook}, Codes: codes, Reason: "migration, ticket OPS-1", Expires: metav1.NewTime(expires),
	}}
}

// findingsEval returns the findings it is given.
func findingsEval(findings ...policies.Finding) adapters.Evaluator {
	return adapters.EvaluatorFunc(func(context.Context, *adapters.Review) (adapters.Result, error) {
		return adapters.Result{Findings: slices.Clone(findings)}, nil
	})
}

// validatingPods is a validating webhook definition over pods.
func validatingPods(name string) route.Definition {
	return route.Definition{Name: name, Path: "/validate/" + name, Type: route.Validating, FailurePolicy: admissionregistrationv1.Fail,
		Intercept: route.Intercept{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Resources: []route.Resource{{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod"}}}}
}

var (
	findingA = policies.Denial("CodeA", field.NewPath("spec", "a"), "x", "a is wrong")
	findingB = policies.Denial("CodeB", field.NewPath("spec", "b"), "y", "b is wrong")
)

// reviewWith runs the Pod web of team-a through one validating member
// deciding findings, with the exceptions and mode given.
func reviewWith(t *testing.T, ex route.ExceptionReader, mode configv1alpha1.Mode, findings ...policies.Finding) (admission.Response, Decision) {
	t.Helper()
	def := validatingPods("probe")
	e := ownEndpoint(def, findingsEval(findings...))
	e.chain.opts.Exceptions = ex
	if mode != "" {
		e.chain.opts.Modes = map[string]configv1alpha1.Mode{"probe": mode}
	}
	req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))
	v := e.chain.review(context.Background(), &req)
	if len(v.decisions) != 1 {
		t.Fatalf("%d decisions, want 1", len(v.decisions))
	}
	return v.resp, v.decisions[0]
}

// TestExcusedDenialIsAdmittedWithAWarning: every denying finding excused,
// the member admits, decides "excused", warns once per finding naming the
// exception and its expiry, and lists the excuse in the audit annotation.
func TestExcusedDenialIsAdmittedWithAWarning(t *testing.T) {
	expires := time.Now().Add(time.Hour).Truncate(time.Second)
	ex := exceptionsOf(false, excuseEntry("", "hdfs-migration", "probe", expires, "CodeA", "CodeB"))
	resp, d := reviewWith(t, ex, "", findingA, findingB)
	if !resp.Allowed || d.Outcome != DecisionExcused {
		t.Fatalf("allowed=%v outcome=%s, want an excused allow", resp.Allowed, d.Outcome)
	}
	until := expires.UTC().Format(time.RFC3339)
	want := []string{
		"gatehouse probe: CodeA at spec.a excused by exception hdfs-migration until " + until,
		"gatehouse probe: CodeB at spec.b excused by exception hdfs-migration until " + until,
	}
	if !slices.Equal(resp.Warnings, want) {
		t.Errorf("warnings %q, want %q", resp.Warnings, want)
	}
	if got := resp.AuditAnnotations[AuditAnnotationExcused]; got != "CodeA at spec.a by hdfs-migration; CodeB at spec.b by hdfs-migration" {
		t.Errorf("audit annotation %q", got)
	}
	if len(d.Excused) != 2 || d.Excused[0].Exception != "hdfs-migration" || !d.Excused[0].Expires.Equal(expires) {
		t.Errorf("Decision.Excused = %+v", d.Excused)
	}
	if len(d.Findings) != 2 {
		t.Errorf("the findings are kept for the metric and the reports: %v", d.Findings)
	}
}

// TestPartlyExcusedDenialStillDenies: a denial stands unless every denying
// finding is excused; the excused one is a warning beside the denial, which
// names only the other.
func TestPartlyExcusedDenialStillDenies(t *testing.T) {
	ex := exceptionsOf(false, excuseEntry("", "only-a", "probe", time.Now().Add(time.Hour), "CodeA"))
	resp, d := reviewWith(t, ex, "", findingA, findingB)
	if resp.Allowed || d.Outcome != DecisionDenied {
		t.Fatalf("allowed=%v outcome=%s, want a denial", resp.Allowed, d.Outcome)
	}
	causes := resp.Result.Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.b" {
		t.Errorf("causes %+v, want spec.b only", causes)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "CodeA at spec.a excused by exception only-a") {
		t.Errorf("warnings %q", resp.Warnings)
	}
}

// TestExpiredExceptionDoesNotExcuse: past its expiry an exception excuses
// nothing, and the denial says which exception expired.
func TestExpiredExceptionDoesNotExcuse(t *testing.T) {
	ex := exceptionsOf(false, excuseEntry("", "lapsed", "probe", time.Now().Add(-time.Minute), "CodeA"))
	resp, d := reviewWith(t, ex, "", findingA)
	if resp.Allowed || d.Outcome != DecisionDenied || len(d.Excused) != 0 {
		t.Fatalf("allowed=%v outcome=%s excused=%v, want a denial", resp.Allowed, d.Outcome, d.Excused)
	}
	if len(d.Expired) != 1 || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "exception lapsed expired at") {
		t.Errorf("expired %+v, warnings %q", d.Expired, resp.Warnings)
	}
}

// TestStateUnavailableIsNeverExcused: a finding about the view, even under
// an exception of every code, denies.
func TestStateUnavailableIsNeverExcused(t *testing.T) {
	ex := exceptionsOf(false, excuseEntry("", "everything", "*", time.Now().Add(time.Hour), "*"))
	view := policies.Unratcheted(policies.StateUnavailable, nil, "the cluster view is not synced")
	resp, d := reviewWith(t, ex, "", view)
	if resp.Allowed || d.Outcome != DecisionDenied || len(d.Excused) != 0 {
		t.Fatalf("allowed=%v outcome=%s excused=%v, want a denial", resp.Allowed, d.Outcome, d.Excused)
	}
	// Beside an excused content finding, it still denies alone.
	resp, d = reviewWith(t, ex, "", findingA, view)
	if resp.Allowed || len(d.Excused) != 1 || len(resp.Result.Details.Causes) != 1 || resp.Result.Details.Causes[0].Type != metav1.CauseType(policies.StateUnavailable) {
		t.Errorf("allowed=%v excused=%v causes=%+v, want StateUnavailable denying", resp.Allowed, d.Excused, resp.Result.Details.Causes)
	}
}

// TestNamespacedExceptionStaysInItsNamespace: an Exception in another
// namespace excuses nothing in team-a, whatever its match says; one in
// team-a does, while exceptions.namespaced is on, and not when it is off.
func TestNamespacedExceptionStaysInItsNamespace(t *testing.T) {
	in := time.Now().Add(time.Hour)
	if resp, _ := reviewWith(t, exceptionsOf(true, excuseEntry("team-b", "reach", "probe", in, "CodeA")), "", findingA); resp.Allowed {
		t.Error("an Exception of team-b excused a finding in team-a")
	}
	if resp, d := reviewWith(t, exceptionsOf(true, excuseEntry("team-a", "own", "probe", in, "CodeA")), "", findingA); !resp.Allowed ||
		d.Excused[0].Exception != "team-a/own" {
		t.Errorf("team-a's own Exception did not excuse: allowed=%v %+v", resp.Allowed, d.Excused)
	}
	if resp, _ := reviewWith(t, exceptionsOf(false, excuseEntry("team-a", "own", "probe", in, "CodeA")), "", findingA); resp.Allowed {
		t.Error("an Exception excused while exceptions.namespaced is off")
	}
}

// TestLabelsGuardIsNeverExcused: harness-labels-guard holds a harness's
// scope; an exception naming it, or every webhook, excuses nothing there.
func TestLabelsGuardIsNeverExcused(t *testing.T) {
	in := time.Now().Add(time.Hour)
	for _, webhook := range []string{route.LabelsGuardWebhook, "*"} {
		e := ownEndpoint(validatingPods(route.LabelsGuardWebhook), findingsEval(findingA))
		e.chain.opts.Exceptions = exceptionsOf(false, excuseEntry("", "open-scope", webhook, in, "CodeA"))
		req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))
		if v := e.chain.review(context.Background(), &req); v.resp.Allowed || len(v.decisions[0].Excused) != 0 {
			t.Errorf("an exception of webhooks [%s] excused harness-labels-guard: allowed=%v", webhook, v.resp.Allowed)
		}
	}
	if slices.Contains(adapters.ExcusableWebhooks(), route.LabelsGuardWebhook) {
		t.Error("an exception may name harness-labels-guard")
	}
}

// TestExceptionDoesNotReachItsNamespace: the API server sends a Namespace's
// UPDATE with the namespace set to its own name; the Namespace is still in
// no namespace, so team-a's Exception does not excuse findings about the
// Namespace team-a, and a ClusterException without namespaces does.
func TestExceptionDoesNotReachItsNamespace(t *testing.T) {
	in := time.Now().Add(time.Hour)
	nsKind := [3]string{"", "v1", "Namespace"}
	nsResource := [3]string{"", "v1", "namespaces"}
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a"}}
	labelled := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a", "labels": map[string]any{"a": "b"}}}
	entry := func(namespace string, namespaces ...string) exception.Entry {
		return exception.Entry{Namespace: namespace, Name: "own-namespace", Spec: exceptionsv1alpha1.ExceptionSpec{
			Match:    []exceptionsv1alpha1.ObjectSelector{{Namespaces: namespaces, Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Namespace"}}}},
			Webhooks: []string{"probe"}, Codes: []string{"CodeA"}, Reason: "ticket OPS-2", Expires: metav1.NewTime(in),
		}}
	}
	def := validatingPods("probe")
	def.Intercept.Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
	def.Intercept.Resources = []route.Resource{{GVR: corev1.SchemeGroupVersion.WithResource("namespaces"), Kind: "Namespace"}}
	for _, tc := range []struct {
		name   string
		ex     exception.Entry
		excuse bool
	}{
		{"the Namespace's own Exception", entry("team-a"), false},
		{"the Namespace's own Exception naming it", entry("team-a", "team-a"), false},
		{"a ClusterException naming the namespace", entry("", "team-a"), false},
		{"a ClusterException of every namespace", entry(""), true},
	} {
		e := ownEndpoint(def, adapters.EvaluatorFunc(func(_ context.Context, r *adapters.Review) (adapters.Result, error) {
			// The new object alone has the finding: nothing ratchets.
			if meta, _ := r.Object["metadata"].(map[string]any); meta["labels"] == nil {
				return adapters.Result{}, nil
			}
			return adapters.Result{Findings: []policies.Finding{findingA}}, nil
		}))
		e.chain.opts.Exceptions = exceptionsOf(true, tc.ex)
		req := admissionRequest(t, admissionv1.Update, nsKind, nsResource, labelled)
		req.Namespace, req.Name = "team-a", "team-a"
		old, err := json.Marshal(ns)
		if err != nil {
			t.Fatal(err)
		}
		req.OldObject = runtime.RawExtension{Raw: old}
		if v := e.chain.review(context.Background(), &req); v.resp.Allowed != tc.excuse {
			t.Errorf("%s: allowed=%v (%s), want %v", tc.name, v.resp.Allowed, v.decisions[0].Outcome, tc.excuse)
		}
	}
}

// TestExcuseInWarnMode: in Warn nothing is denied anyway; the excuse is
// still recorded, and the excused finding is no "would deny" warning.
func TestExcuseInWarnMode(t *testing.T) {
	ex := exceptionsOf(false, excuseEntry("", "only-a", "probe", time.Now().Add(time.Hour), "CodeA"))
	resp, d := reviewWith(t, ex, configv1alpha1.ModeWarn, findingA, findingB)
	if !resp.Allowed || d.Outcome != DecisionDenied || len(d.Excused) != 1 {
		t.Fatalf("allowed=%v outcome=%s excused=%v", resp.Allowed, d.Outcome, d.Excused)
	}
	var wouldDeny []string
	for _, w := range resp.Warnings {
		if strings.Contains(w, "would deny") {
			wouldDeny = append(wouldDeny, w)
		}
	}
	if len(wouldDeny) != 1 || !strings.Contains(wouldDeny[0], "CodeB at spec.b") {
		t.Errorf("would-deny warnings %q, want CodeB only", wouldDeny)
	}
	if resp.AuditAnnotations[AuditAnnotationFindings] != "CodeB at spec.b" || resp.AuditAnnotations[AuditAnnotationExcused] == "" {
		t.Errorf("audit annotations %v", resp.AuditAnnotations)
	}
	resp, d = reviewWith(t, ex, configv1alpha1.ModeAudit, findingA)
	if !resp.Allowed || d.Outcome != DecisionExcused || len(resp.Warnings) != 0 || resp.AuditAnnotations[AuditAnnotationExcused] != "CodeA at spec.a by only-a" {
		t.Errorf("Audit: allowed=%v outcome=%s warnings=%q annotations=%v", resp.Allowed, d.Outcome, resp.Warnings, resp.AuditAnnotations)
	}
}

// TestMutatingDenialIsNotExcused: a mutating member that denies could not
// make its change; no exception admits the object without it.
func TestMutatingDenialIsNotExcused(t *testing.T) {
	def := validatingPods("probe")
	def.Type, def.Path = route.Mutating, "/mutate/probe"
	e := ownEndpoint(def, findingsEval(findingA))
	e.chain.opts.Exceptions = exceptionsOf(false, excuseEntry("", "a", "probe", time.Now().Add(time.Hour), "CodeA"))
	req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))
	if v := e.chain.review(context.Background(), &req); v.resp.Allowed {
		t.Error("a mutating member's denial was excused")
	}
}

// TestExcuseCombinedEqualsOwn: the combined endpoint excuses as the
// webhook's own endpoint does, with the same warning.
func TestExcuseCombinedEqualsOwn(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Namespaces = memState{}, memState{}
	opts.Exceptions = exceptionsOf(false, excuseEntry("", "scope-migration", "secret-scope", time.Now().Add(time.Hour), "ScopeEntryEmpty"))
	ts := startServerWith(t, opts)
	body := reviewBodyIn(t, "e1", admissionv1.Create, podKind, podResource, "team-a", "web", secretPod(scopeAnnotations("pod,,node")), nil)
	_, own := ts.post(t, "/validate/secret-scope", "application/json", body)
	_, combined := ts.post(t, "/validate/combined-fail", "application/json", body)
	if !own.Allowed || !combined.Allowed {
		t.Fatalf("own allowed=%v, combined allowed=%v, want both excused", own.Allowed, combined.Allowed)
	}
	if len(own.Warnings) != 1 || !strings.Contains(own.Warnings[0], "ScopeEntryEmpty at spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope] excused by exception scope-migration until ") {
		t.Errorf("own warnings %q", own.Warnings)
	}
	if !slices.Contains(combined.Warnings, own.Warnings[0]) {
		t.Errorf("combined warnings %q, want %q among them", combined.Warnings, own.Warnings[0])
	}
	// Without the exception both deny.
	opts.Exceptions = exceptionsOf(false)
	ts = startServerWith(t, opts)
	_, own = ts.post(t, "/validate/secret-scope", "application/json", body)
	_, combined = ts.post(t, "/validate/combined-fail", "application/json", body)
	if own.Allowed || combined.Allowed {
		t.Errorf("without an exception: own allowed=%v, combined allowed=%v", own.Allowed, combined.Allowed)
	}
}

// TestExceptionWebhook: the exception webhook holds exceptions to the
// configuration's block and to what can be excused: a valid one is
// admitted; one past the configured maxDuration, one naming a mutating
// webhook (whose denials are never excused) and one naming an unknown code
// are denied with their codes; an UPDATE that leaves an expired expiry as
// stored is warned, not denied (a finalizer can still be removed).
func TestExceptionWebhook(t *testing.T) {
	cfg := configv1alpha1.Default()
	cfg.Exceptions.MaxDuration = metav1.Duration{Duration: 2 * time.Hour}
	w := Build(route.OptionsFromConfig(cfg), func(n string) bool { return n == route.ExceptionWebhook })[0]
	kind, resource := [3]string{"gatehouse.dev", "v1alpha1", "ClusterException"}, [3]string{"gatehouse.dev", "v1alpha1", "clusterexceptions"}
	object := func(expires time.Time, webhook, code string) map[string]any {
		return map[string]any{
			"apiVersion": "gatehouse.dev/v1alpha1", "kind": "ClusterException", "metadata": map[string]any{"name": "x"},
			"spec": map[string]any{
				"match":    []any{map[string]any{"namespaces": []any{"team-a"}}},
				"webhooks": []any{webhook}, "codes": []any{code}, "reason": "r",
				"expires": expires.UTC().Format(time.RFC3339),
			},
		}
	}
	in := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name string
		obj  map[string]any
		code string // "" for an allow
	}{
		{"valid", object(in, "secret-scope", "ScopeEntryEmpty"), ""},
		{"past maxDuration", object(time.Now().Add(3*time.Hour), "secret-scope", "ScopeEntryEmpty"), "ExceptionExpiryTooFar"},
		{"a mutating webhook", object(in, "harness-proxy", "ScopeEntryEmpty"), "ExceptionUnknownWebhook"},
		{"the exception webhook", object(in, route.ExceptionWebhook, "ExceptionTooBroad"), "ExceptionUnknownWebhook"},
		{"an unknown code", object(in, "secret-scope", "NoSuchCode"), "ExceptionUnknownCode"},
	} {
		resp, _ := decide(context.Background(), w, admissionRequest(t, admissionv1.Create, kind, resource, tc.obj))
		switch {
		case tc.code == "" && !resp.Allowed:
			t.Errorf("%s: denied %v", tc.name, resp.Result)
		case tc.code != "" && (resp.Allowed || !strings.Contains(resp.Result.Message, tc.code)):
			t.Errorf("%s: allowed=%v %v, want %s", tc.name, resp.Allowed, resp.Result, tc.code)
		}
	}
	expired := object(time.Now().Add(-time.Hour), "secret-scope", "ScopeEntryEmpty")
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(reviewBody(t, "u", admissionv1.Update, kind, resource, expired, expired), &review); err != nil {
		t.Fatal(err)
	}
	resp, _ := decide(context.Background(), w, admission.Request{AdmissionRequest: *review.Request})
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "ExceptionExpired") {
		t.Errorf("UPDATE leaving the expiry: allowed=%v warnings=%q", resp.Allowed, resp.Warnings)
	}
}
