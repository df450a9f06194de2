package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
)

// The namespaces of TestAuditReportsUnderFault: both sort before team-a,
// so their Pods are listed before the examples'.
const (
	endingNamespace  = "audit-ending"  // Terminating: no report can be created in it
	refusedNamespace = "audit-refused" // an admission policy refuses every report in it, with 403 Forbidden
)

// TestAuditReportsUnderFault: one object or namespace that cannot be
// reported never stops the pass or hides another object (docs/audit.md,
// "Reports under fault"). A pass over the examples plus a PersistentVolumeClaim
// with 12,000 scope entries that only warn (in Enforce), a violating Pod in
// a Terminating namespace, and one in a namespace where an admission policy
// refuses reports with 403 Forbidden: completes; writes the claim's report
// bounded (the most severe results, then one ReportTruncated counting the
// rest; the summary counts all); skips the Terminating namespace's report
// and counts the refused one as failed, and neither makes the Pods
// "not allowed to list": team-a's Pods, listed after both, get their
// reports. A report a tenant then edits, keeping its labels and
// annotations, is written again by the next pass.
func TestAuditReportsUnderFault(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	a, dyn := newBackgroundAudit(ctx, t, b.adminConfig)
	deleteReports(ctx, t, dyn)
	t.Cleanup(func() { deleteReports(context.Background(), t, dyn) })
	cs := kubernetes.NewForConfigOrDie(b.adminConfig)

	pvc := storeHugeScopeClaim(ctx, t, b, 12000)
	for _, ns := range []string{endingNamespace, refusedNamespace} {
		storeBrokenPod(ctx, t, b, cs, ns)
	}
	if err := b.admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: endingNamespace}}); err != nil {
		t.Fatal(err)
	}
	refuseReportsIn(ctx, t, b, refusedNamespace)

	before := gatherAuditCounters(t)
	stats, err := a.Pass(ctx)
	if err != nil {
		t.Fatalf("a pass with a report too large, a Terminating namespace and a refused write failed: %v", err)
	}
	after := gatherAuditCounters(t)
	if len(stats.Forbidden) != 0 {
		t.Errorf("the pass names %v not allowed to list: a refused report write is no list refusal", stats.Forbidden)
	}
	if stats.Truncated != 1 || stats.Skipped != 1 || stats.Failed != 1 {
		t.Errorf("pass %+v: want 1 report truncated, 1 write skipped (Terminating), 1 failed (refused)", stats)
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"passes completed", 1}, {"passes failed", 0}, {"writes failed", 1}, {"writes skipped", 1}} {
		if got := after[c.name] - before[c.name]; got != c.want {
			t.Errorf("%s: +%v, want +%v", c.name, got, c.want)
		}
	}

	// The claim's report: accepted by the API server, bounded, counting all.
	r, err := dyn.Resource(policyReportsGVR).Namespace("team-a").Get(ctx, string(pvc.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no report of the claim with 12,000 warnings: %v", err)
	}
	results, _, _ := unstructured.NestedSlice(r.Object, "results")
	raw, _ := json.Marshal(results)
	last, _ := results[len(results)-1].(map[string]any)
	omitted, _, _ := unstructured.NestedString(last, "properties", audit.PropertyOmitted)
	summary, _, _ := unstructured.NestedMap(r.Object, "summary")
	total := -1 // the ReportTruncated result, a skip
	for _, n := range summary {
		v, _ := n.(int64)
		total += int(v)
	}
	if len(raw) > audit.MaxReportBytes || last["rule"] != audit.RuleReportTruncated || omitted != fmt.Sprint(total-(len(results)-1)) ||
		summary["warn"] != int64(12000) || summary["skip"] != int64(1) {
		t.Errorf("the claim's report: %d results in %d bytes, last %v, summary %v; want at most %d bytes ending in %s, the summary counting all 12,000",
			len(results), len(raw), last, summary, audit.MaxReportBytes, audit.RuleReportTruncated)
	}
	// Listed after both faults: reported.
	web := &corev1.Pod{}
	if err := b.admin.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "web-broken-scope"}, web); err != nil {
		t.Fatal(err)
	}
	webReport, err := dyn.Resource(policyReportsGVR).Namespace("team-a").Get(ctx, string(web.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no report of team-a/web-broken-scope, listed after the faulty namespaces' Pods: %v", err)
	}
	wantLines := reportLines(t, *webReport, "fail", "warn", "error")
	if len(wantLines) != 2 {
		t.Errorf("team-a/web-broken-scope's report: %v, want its two denials", wantLines)
	}

	// A tenant rewrites the report, keeping its labels and annotations.
	edited := webReport.DeepCopy()
	_ = unstructured.SetNestedSlice(edited.Object, []any{map[string]any{"source": "gatehouse", "policy": "secret-scope", "result": "pass"}}, "results")
	_ = unstructured.SetNestedMap(edited.Object, map[string]any{"pass": int64(1), "fail": int64(0), "warn": int64(0), "error": int64(0), "skip": int64(0)}, "summary")
	if _, err := dyn.Resource(policyReportsGVR).Namespace("team-a").Update(ctx, edited, metav1.UpdateOptions{FieldManager: "tenant"}); err != nil {
		t.Fatal(err)
	}
	stats, err = a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Written != 1 {
		t.Errorf("second pass: %+v, want the edited report written again, and no other", stats)
	}
	restored, err := dyn.Resource(policyReportsGVR).Namespace("team-a").Get(ctx, string(web.UID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := reportLines(t, *restored, "fail", "warn", "error"); !slices.Equal(got, wantLines) {
		t.Errorf("the edited report after a pass: %v, want %v", got, wantLines)
	}
}

// TestAuditWritesOpenReports: with both report APIs configured
// (audit.reports.apis), one pass writes, beside each PolicyReport and
// ClusterPolicyReport, an openreports.io/v1alpha1 Report or ClusterReport
// of the same object: the same name, namespace, label, owner, scope,
// summary and results (result, policy, rule, message, field, mode,
// resources), with the report's source gatehouse; the API server accepts
// them under the upstream CRDs. A second pass over the unchanged cluster
// writes nothing in either API.
func TestAuditWritesOpenReports(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, dyn := newBackgroundAudit(ctx, t, b.adminConfig)
	a.APIs = []configv1alpha1.ReportAPI{configv1alpha1.ReportAPIPolicyReport, configv1alpha1.ReportAPIOpenReports}
	deleteReports(ctx, t, dyn)
	t.Cleanup(func() { deleteReports(context.Background(), t, dyn) })

	stats, err := a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Reports != 6 || stats.Written != 12 || len(stats.Unserved) != 0 {
		t.Errorf("first pass: %+v, want 6 objects reported, each in both APIs (12 writes)", stats)
	}
	list := func(gvrs ...schema.GroupVersionResource) map[string]unstructured.Unstructured {
		t.Helper()
		out := map[string]unstructured.Unstructured{}
		for _, gvr := range gvrs {
			l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range l.Items {
				out[r.GetNamespace()+"/"+r.GetName()] = r
			}
		}
		return out
	}
	policyReports := list(policyReportsGVR, clusterPolicyReportsGVR)
	openReports := list(openReportsGVR, clusterOpenReportsGVR)
	if len(policyReports) != 6 || len(openReports) != len(policyReports) {
		t.Fatalf("%d PolicyReports and %d Reports, want 6 of each", len(policyReports), len(openReports))
	}
	kinds := map[string]string{"PolicyReport": "Report", "ClusterPolicyReport": "ClusterReport"}
	fields := func(r unstructured.Unstructured, path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(r.Object, path...)
		return v
	}
	// The whole of each result, as the API server stores it, less the
	// timestamp (the same pass, but each write stamps its own second).
	results := func(r unstructured.Unstructured) []any {
		rs, _, _ := unstructured.NestedSlice(r.Object, "results")
		for _, item := range rs {
			delete(item.(map[string]any), "timestamp")
		}
		return rs
	}
	for key, p := range policyReports {
		o, ok := openReports[key]
		if !ok {
			t.Errorf("no Report beside the %s %s", p.GetKind(), key)
			continue
		}
		if o.GetKind() != kinds[p.GetKind()] || fields(o, "source") != "gatehouse" {
			t.Errorf("%s: a %s with source %v beside a %s, want a %s with source gatehouse", key, o.GetKind(), fields(o, "source"), p.GetKind(), kinds[p.GetKind()])
		}
		if o.GetLabels()[controllers.ReportManagedByLabel] != controllers.ReportManagedBy || !reflect.DeepEqual(o.GetOwnerReferences(), p.GetOwnerReferences()) {
			t.Errorf("%s: the Report's labels %v and owners %v differ from the PolicyReport's", key, o.GetLabels(), o.GetOwnerReferences())
		}
		for _, f := range []string{"scope", "summary"} {
			if !reflect.DeepEqual(fields(o, f), fields(p, f)) {
				t.Errorf("%s: %s %v, the PolicyReport's %v", key, f, fields(o, f), fields(p, f))
			}
		}
		if got, want := results(o), results(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the Report's results\n  %v\nthe PolicyReport's\n  %v", key, got, want)
		}
		if lines := reportLines(t, o, "fail"); len(lines) == 0 || !slices.Equal(lines, reportLines(t, p, "fail")) {
			t.Errorf("%s: the Report's failures %v, want the PolicyReport's, at least one", key, lines)
		}
	}

	stats, err = a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Written != 0 || stats.Deleted != 0 || stats.Reports != 6 {
		t.Errorf("second pass over the unchanged cluster: %+v, want nothing written or deleted", stats)
	}
	for key, r := range list(openReportsGVR, clusterOpenReportsGVR) {
		if before := openReports[key]; r.GetResourceVersion() != before.GetResourceVersion() {
			t.Errorf("Report %s rewritten by a pass that found the same", key)
		}
	}
}

// storeHugeScopeClaim stores, in team-a, a claim whose scope has n entries
// of an unknown key (each a warning, never a denial), and deletes it when
// the test ends.
func storeHugeScopeClaim(ctx context.Context, t *testing.T, b *bareCluster, n int) *corev1.PersistentVolumeClaim {
	t.Helper()
	objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "pvc-allowed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, pvc); err != nil {
		t.Fatal(err)
	}
	pvc.Name = "huge-scope"
	pvc.Annotations["secrets.kubedoop.dev/scope"] = strings.TrimSuffix(strings.Repeat("unknown,", n), ",")
	if err := b.admin.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its protection finalizer waits for a controller no test runs.
		ctx := context.Background()
		err := b.admin.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)
		if err == nil {
			pvc.Finalizers = nil
			if err = b.admin.Update(ctx, pvc); err == nil {
				err = b.admin.Delete(ctx, pvc)
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the claim: %v", err)
		}
	})
	return pvc
}

// storeBrokenPod stores deploy/examples/pod-denied.yaml's Pod in a new
// namespace ns and, when the test ends, deletes the Pod and the namespace,
// finalizing it (no namespace controller runs here).
func storeBrokenPod(ctx context.Context, t *testing.T, b *bareCluster, cs kubernetes.Interface, ns string) {
	t.Helper()
	if err := b.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "pod-denied.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pod := objs[0]
	pod.SetNamespace(ns)
	if err := b.admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		// Unscheduled, it is deleted at once, also in a Terminating namespace.
		if err := b.admin.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Pod %s/%s: %v", ns, pod.GetName(), err)
		}
		if err := b.admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err == nil {
			n.Spec.Finalizers = nil
			_, err = cs.CoreV1().Namespaces().Finalize(ctx, n, metav1.UpdateOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("finalizing namespace %s: %v", ns, err)
		}
	})
}

// refuseReportsIn makes the API server refuse, with 403 Forbidden, every
// PolicyReport written into ns (a ValidatingAdmissionPolicy, which the API
// server enforces in process), and waits until it does.
func refuseReportsIn(ctx context.Context, t *testing.T, b *bareCluster, ns string) {
	t.Helper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-refuse-reports"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"wgpolicyk8s.io"}, APIVersions: []string{"*"}, Resources: []string{"policyreports"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "reports are refused here", Reason: ptr.To(metav1.StatusReasonForbidden)}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-refuse-reports"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}}
	for _, obj := range []client.Object{policy, binding} {
		if err := b.admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, obj := range []client.Object{binding, policy} {
			if err := b.admin.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", obj.GetName(), err)
			}
		}
	})
	// The API server compiles a new policy asynchronously: probe with a
	// dry-run write until it refuses.
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
		"metadata": map[string]any{"name": "e2e-probe", "namespace": ns}}}
	for {
		err := b.admin.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if apierrors.IsForbidden(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the admission policy never refused a report in %s (last: %v)", ns, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// gatherAuditCounters reads the audit's counters from this process's
// registry (the pass runs in process).
func gatherAuditCounters(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range families {
		fams[f.GetName()] = f
	}
	return map[string]float64{
		"passes completed": metricValue(fams, "gatehouse_audit_passes_total", "result", "completed"),
		"passes failed":    metricValue(fams, "gatehouse_audit_passes_total", "result", "failed"),
		"writes failed":    metricValue(fams, "gatehouse_audit_report_writes_total", "result", audit.WriteFailed),
		"writes skipped":   metricValue(fams, "gatehouse_audit_report_writes_total", "result", audit.WriteSkipped),
	}
}
