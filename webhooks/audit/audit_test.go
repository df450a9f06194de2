package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

func newTestScanner(t *testing.T, resources []*metav1.APIResourceList) *Scanner {
	t.Helper()
	cfg := configv1alpha1.Default()
	opts := route.OptionsFromConfig(cfg)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: resources}}
	return NewScanner(nil, disc, webhooks.Build(opts, cfg.Enabled), opts)
}

// TestTargets: the resources listed are those an enabled webhook names for
// CREATE, and the product groups; not what only a catch-all rule covers
// (harness-labels'), and the one-object webhook's ConfigMap alone.
func TestTargets(t *testing.T) {
	s := newTestScanner(t, []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"list", "get"}},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}},
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"list"}},
			{Name: "secrets", Kind: "Secret", Namespaced: true, Verbs: []string{"list"}},
			{Name: "services", Kind: "Service", Namespaced: true, Verbs: []string{"list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: []string{"list"}},
			{Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true, Verbs: []string{"list"}},
		}},
		{GroupVersion: "hdfs.kubedoop.dev/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "hdfsclusters", Kind: "HdfsCluster", Namespaced: true, Verbs: []string{"list"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: []string{"list"}},
		}},
		{GroupVersion: "helmetica.io/v1", APIResources: []metav1.APIResource{
			{Name: "dependencygroups", Kind: "DependencyGroup", Verbs: []string{"list"}},
		}},
	})
	targets, err := s.Targets()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range targets {
		name := tg.GVR.GroupResource().String()
		if tg.Name != "" {
			name += " " + tg.Namespace + "/" + tg.Name
		}
		got = append(got, name)
	}
	want := []string{"configmaps unbounded-system/unbounded-component-overrides", "pods", "deployments.apps",
		"hdfsclusters.hdfs.kubedoop.dev", "dependencygroups.helmetica.io"}
	if !slices.Equal(got, want) {
		t.Errorf("Targets() = %v, want %v", got, want)
	}
}

// TestRequestReviewsTheStoredObject: a stored object is reviewed as a
// CREATE of itself, less managedFields and status, by the audit's user.
func TestRequestReviewsTheStoredObject(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":   map[string]any{"containers": []any{}},
		"status": map[string]any{"phase": "Running"},
	}}
	tg := Target{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}
	req, ref, err := Request(tg, obj)
	if err != nil {
		t.Fatal(err)
	}
	if req.Operation != admissionv1.Create || req.UserInfo.Username != User || req.Resource.Resource != "pods" ||
		req.Kind.Kind != "Pod" || req.Namespace != "ns" || req.Name != "p" {
		t.Errorf("request %+v", req.AdmissionRequest)
	}
	raw := string(req.Object.Raw)
	if strings.Contains(raw, "managedFields") || strings.Contains(raw, "status") || !strings.Contains(raw, `"resourceVersion":"7"`) {
		t.Errorf("reviewed object %s: want it as stored, less managedFields and status", raw)
	}
	if ref.UID != "u-1" || ref.Kind != "Pod" {
		t.Errorf("object %+v", ref)
	}
	if _, ok := obj.Object["status"]; !ok {
		t.Error("Request changed the listed object")
	}
}

// TestReportResults: one result per finding (policy = webhook, rule =
// code, the path a property), a pass per webhook that found nothing, an
// error for one that could not decide.
func TestReportResults(t *testing.T) {
	r := Result{Object: Object{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "p", UID: "u-1"}, Decisions: []webhooks.Decision{
		{Webhook: "secret-scope", Outcome: webhooks.DecisionDenied, Findings: []policies.Finding{
			{Code: "ScopeEntryEmpty", Field: "spec.volumes[0]", Message: "entry 2 is empty", Severity: policies.Deny},
			{Code: "ScopeUnknownKey", Field: "spec.volumes[1]", Message: "unknown key", Severity: policies.Warn},
		}, Response: admission.Denied("x")},
		{Webhook: "service-account", Outcome: webhooks.DecisionAllowed, Response: admission.Allowed("")},
		{Webhook: "harness", Outcome: webhooks.DecisionErrored, Response: admission.Errored(500, errors.New("lookup failed"))},
	}}
	var got []string
	for _, res := range ReportResults(r) {
		got = append(got, strings.Join([]string{string(res.Result), res.Policy, res.Rule, res.Properties[PropertyField],
			res.Properties[PropertyMode], res.Resources[0].Name, string(res.Resources[0].UID)}, " "))
	}
	want := []string{
		"fail secret-scope ScopeEntryEmpty spec.volumes[0] Enforce p u-1",
		"warn secret-scope ScopeUnknownKey spec.volumes[1] Enforce p u-1",
		"pass service-account   Enforce p u-1",
		"error harness ReviewError  Enforce p u-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ReportResults() =\n  %q\nwant\n  %q", got, want)
	}
	results := ReportResults(r)
	if !Actionable(results) || Actionable(results[2:3]) {
		t.Error("Actionable: want true with a fail, false with passes only")
	}
	if s := policyreportv1alpha2.Summarize(results); s != (policyreportv1alpha2.PolicyReportSummary{Pass: 1, Fail: 1, Warn: 1, Error: 1}) {
		t.Errorf("Summarize() = %+v", s)
	}
	changed := ReportResults(r)
	changed[0].Properties[PropertyField] = "spec.volumes[9]"
	if Hash(results) == Hash(changed) || Hash(results) != Hash(ReportResults(r)) {
		t.Error("Hash: want equal for equal results, different for a changed path")
	}
	stamped := ReportResults(r)
	stamped[0].Timestamp = metav1.Timestamp{Seconds: 42}
	if Hash(stamped) != Hash(results) {
		t.Error("Hash depends on the timestamp: every pass would rewrite every report")
	}
}

// TestReportResultsExcused: a finding an exception excuses is a skip that
// keeps its rule, message and field and names the exception; the webhook's
// other findings, and the same code at another field, keep their results;
// an object whose only finding is excused still gets a report.
func TestReportResultsExcused(t *testing.T) {
	r := Result{Object: Object{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "p", UID: "u-1"}, Decisions: []webhooks.Decision{
		{Webhook: "secret-scope", Outcome: webhooks.DecisionDenied, Findings: []policies.Finding{
			{Code: "ScopeEntryEmpty", Field: "spec.volumes[0]", Message: "entry 2 is empty", Severity: policies.Deny},
			{Code: "ScopeEntryEmpty", Field: "spec.volumes[1]", Message: "entry 1 is empty", Severity: policies.Deny},
			{Code: "ScopeUnknownKey", Field: "spec.volumes[1]", Message: "unknown key", Severity: policies.Warn},
		}, Response: admission.Denied("x")},
	}, Excused: map[FindingKey]string{
		{Webhook: "secret-scope", Code: "ScopeEntryEmpty", Field: "spec.volumes[0]"}:    "ns/legacy-volumes",
		{Webhook: "service-account", Code: "ScopeEntryEmpty", Field: "spec.volumes[1]"}: "ns/other-webhook",
	}}
	var got []string
	for _, res := range ReportResults(r) {
		got = append(got, strings.Join([]string{string(res.Result), res.Rule, res.Properties[PropertyField], res.Message, res.Properties[PropertyExcusedBy]}, "|"))
	}
	want := []string{
		"skip|ScopeEntryEmpty|spec.volumes[0]|entry 2 is empty|ns/legacy-volumes",
		"fail|ScopeEntryEmpty|spec.volumes[1]|entry 1 is empty|",
		"warn|ScopeUnknownKey|spec.volumes[1]|unknown key|",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ReportResults() =\n  %q\nwant\n  %q", got, want)
	}
	if !Actionable(ReportResults(r)[:1]) {
		t.Error("an object whose one finding is excused gets no report: the excuse is invisible")
	}
}

// TestTallyPublish: the findings gauge holds the last pass's denying
// findings by webhook, code and mode, and nothing of an earlier pass.
func TestTallyPublish(t *testing.T) {
	deny := webhooks.Decision{Webhook: "secret-scope", Findings: []policies.Finding{
		{Code: "ScopeEntryEmpty", Severity: policies.Deny}, {Code: "ScopeUnknownKey", Severity: policies.Warn}}}
	old := Tally{}
	old.Add(Result{Decisions: []webhooks.Decision{{Webhook: "harness", Findings: []policies.Finding{{Code: "Gone", Severity: policies.Deny}}}}})
	old.Publish(1, 1)
	tally := Tally{}
	tally.Add(Result{Decisions: []webhooks.Decision{deny}})
	tally.Add(Result{Decisions: []webhooks.Decision{deny}})
	tally.Publish(2, 0.5)
	if n := testutil.CollectAndCount(findingsGauge); n != 1 {
		t.Errorf("%d findings series, want 1 (the earlier pass's are gone)", n)
	}
	if v := testutil.ToFloat64(findingsGauge.WithLabelValues("secret-scope", "ScopeEntryEmpty", ModeEnforce)); v != 2 {
		t.Errorf("gatehouse_audit_findings{secret-scope,ScopeEntryEmpty,Enforce} = %v, want 2", v)
	}
	if v := testutil.ToFloat64(passSeconds); v != 0.5 {
		t.Errorf("pass duration %v, want 0.5", v)
	}
}

// TestBoundKeepsAReportUnderTheLimit: an object with 12,000 findings that
// only warn (a scope of 12,000 unknown entries) and one that fails gets a
// report under MaxReportBytes, not one the API server refuses: the failing
// result first, as many warnings as fit, then one ReportTruncated result
// counting the rest; the summary counts every result. Results that fit are
// kept as they are.
func TestBoundKeepsAReportUnderTheLimit(t *testing.T) {
	ref := []corev1.ObjectReference{{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "data", UID: "u-1"}}
	var results []policyreportv1alpha2.PolicyReportResult
	for i := range 12000 {
		results = append(results, policyreportv1alpha2.PolicyReportResult{Source: Source, Policy: "secret-scope", Rule: "ScopeUnknownKey",
			Result: policyreportv1alpha2.StatusWarn, Resources: ref,
			Message:    fmt.Sprintf("entry %d of the scope has a key secret-operator does not know, so it skips the entry; known keys are node, pod, service and listener-volume", i+1),
			Properties: map[string]string{PropertyMode: ModeEnforce, PropertyField: "metadata.annotations[secrets.kubedoop.dev/scope]"}})
	}
	results = append(results, policyreportv1alpha2.PolicyReportResult{Source: Source, Policy: "secret-scope", Rule: "ScopeEntryEmpty",
		Result: policyreportv1alpha2.StatusFail, Resources: ref, Properties: map[string]string{PropertyMode: ModeEnforce}})
	if n := encodedSize(results); n < 4<<20 {
		t.Fatalf("the results encode to %d bytes: too few to need a bound", n)
	}

	b := Bound(results, MaxReportBytes)
	raw, err := json.Marshal(b.Results)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw)+len(b.Results)*timestampBytes > MaxReportBytes {
		t.Errorf("the bounded results encode to %d bytes (stamped), above %d", len(raw)+len(b.Results)*timestampBytes, MaxReportBytes)
	}
	last := b.Results[len(b.Results)-1]
	listed := len(b.Results) - 1
	if b.Results[0].Rule != "ScopeEntryEmpty" || last.Rule != RuleReportTruncated || last.Result != policyreportv1alpha2.StatusSkip ||
		last.Properties[PropertyOmitted] != strconv.Itoa(len(results)-listed) || b.Omitted != len(results)-listed || listed < 100 {
		t.Errorf("bounded: first %s, %d listed, last %+v, omitted %d", b.Results[0].Rule, listed, last, b.Omitted)
	}
	if want := (policyreportv1alpha2.PolicyReportSummary{Fail: 1, Warn: 12000, Skip: 1}); b.Summary != want {
		t.Errorf("summary %+v, want %+v (every result counted)", b.Summary, want)
	}
	if again := Bound(results, MaxReportBytes); Hash(again.Results) != Hash(b.Results) {
		t.Error("Bound is not deterministic")
	}
	if small := Bound(results[:3], MaxReportBytes); small.Omitted != 0 || !slices.EqualFunc(small.Results, results[:3], func(a, b policyreportv1alpha2.PolicyReportResult) bool {
		return Hash([]policyreportv1alpha2.PolicyReportResult{a}) == Hash([]policyreportv1alpha2.PolicyReportResult{b})
	}) {
		t.Errorf("three results were changed by the bound: %+v", small)
	}
}

// TestReportResultsFromExcusals: Excused and Expired come from the
// decisions' excusals; an expired exception's finding keeps its fail and
// names the exception, and an excused finding leaves the findings tally.
func TestReportResultsFromExcusals(t *testing.T) {
	excused := policies.Finding{Code: "ScopeEntryEmpty", Field: "spec.volumes[0]", Message: "entry 2 is empty", Severity: policies.Deny}
	lapsed := policies.Finding{Code: "ScopeEntryEmpty", Field: "spec.volumes[1]", Message: "entry 1 is empty", Severity: policies.Deny}
	decisions := []webhooks.Decision{{Webhook: "secret-scope", Outcome: webhooks.DecisionDenied, Findings: []policies.Finding{excused, lapsed},
		Excused: []webhooks.Excusal{{Finding: excused, Exception: "legacy-volumes"}},
		Expired: []webhooks.Excusal{{Finding: lapsed, Exception: "ns/lapsed"}}}}
	r := Result{Object: Object{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "p"}, Decisions: decisions,
		Excused: ExcusedIn(decisions), Expired: ExpiredIn(decisions)}
	var got []string
	for _, res := range ReportResults(r) {
		got = append(got, strings.Join([]string{string(res.Result), res.Properties[PropertyField], res.Properties[PropertyExcusedBy], res.Properties[PropertyExceptionExpired]}, "|"))
	}
	want := []string{"skip|spec.volumes[0]|legacy-volumes|", "fail|spec.volumes[1]||ns/lapsed"}
	if !slices.Equal(got, want) {
		t.Errorf("ReportResults() = %q, want %q", got, want)
	}
	tally := Tally{}
	tally.Add(r)
	if n := tally[[3]string{"secret-scope", "ScopeEntryEmpty", "Enforce"}]; n != 1 {
		t.Errorf("tally counts %d ScopeEntryEmpty, want 1: the excused one is left out", n)
	}
	if ExcusedIn([]webhooks.Decision{{Webhook: "secret-scope"}}) != nil {
		t.Error("Excused is not nil for decisions without excusals")
	}
}

// TestPublishExceptions: the gauge counts the exceptions by state, every
// state a series (zero included), and a second pass replaces the first.
func TestPublishExceptions(t *testing.T) {
	PublishExceptions([]exception.Status{
		{Name: "team-a/web", State: exception.StateUsed, Excused: 2},
		{Name: "old", State: exception.StateExpired},
		{Name: "team-b/idle", State: exception.StateUnused},
		{Name: "team-b/idle-2", State: exception.StateUnused},
	})
	want := map[exception.State]float64{exception.StateUsed: 1, exception.StateExpired: 1, exception.StateUnused: 2,
		exception.StateDisabled: 0, exception.StateInvalid: 0}
	for state, n := range want {
		if v := testutil.ToFloat64(exceptionsGauge.WithLabelValues(string(state))); v != n {
			t.Errorf("gatehouse_audit_exceptions{state=%q} = %v, want %v", state, v, n)
		}
	}
	PublishExceptions(nil)
	if v := testutil.ToFloat64(exceptionsGauge.WithLabelValues(string(exception.StateUnused))); v != 0 {
		t.Errorf("after a pass without exceptions, Unused = %v", v)
	}
	if n := testutil.CollectAndCount(exceptionsGauge); n != 5 {
		t.Errorf("%d series, want one per state", n)
	}
}
