package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// exceptionNamespace is where the exception walk stores its pod.
const exceptionNamespace = "exception-walk"

// exceptionLeaseNamespace holds the Lease of the walk's audit.
const exceptionLeaseNamespace = "exception-walk-lease"

// exceptionName is the walk's ClusterException.
const exceptionName = "web-scope-migration"

// unusedExceptionName is the walk's ClusterException that matches nothing.
const unusedExceptionName = "no-such-pod-scope"

var clusterExceptionsGVR = schema.GroupVersionResource{Group: "gatehouse.dev", Version: "v1alpha1", Resource: "clusterexceptions"}

// scopeClusterException excuses secret-scope's ScopeEntryEmpty on the Pod
// web of the walk's namespace until expires.
func scopeClusterException(expires time.Time) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gatehouse.dev/v1alpha1", "kind": "ClusterException",
		"metadata": map[string]any{"name": exceptionName},
		"spec": map[string]any{
			"match":    []any{map[string]any{"namespaces": []any{exceptionNamespace}, "kinds": []any{map[string]any{"kind": "Pod"}}, "names": []any{"web"}}},
			"webhooks": []any{"secret-scope"},
			"codes":    []any{"ScopeEntryEmpty"},
			"reason":   "moving web to per-service scopes, PLAT-1234 (team-web)",
			"expires":  expires.UTC().Format(time.RFC3339),
		},
	}}
}

// TestExceptionsWalk walks docs/rollout.md's "Exceptions" on the local
// control plane: secret-scope in Enforce denies the pod; a ClusterException
// for it (reviewed by the exception webhook, which refuses an expired one)
// admits the same pod with a warning naming the exception, counted as
// excused, and the background audit reports the finding as a skip
// excusedBy the exception, `gatehouse audit` lists it as used, and a second
// ClusterException that matches nothing is reported unused on its own
// report; once the first has expired the pod's report turns to fail naming
// it, its own report says it expired, and the pod is denied again.
func TestExceptionsWalk(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("the walk starts its own gatehouse: local control plane only")
	}
	ctx := context.Background()
	caBundle := liveCABundle(t, e)
	_, restore := saveWebhooks(t, e)
	ensureNamespace(t, e, exceptionNamespace, nil)
	ensureNamespace(t, e, exceptionLeaseNamespace, nil)
	ensureNamespace(t, e, rolloutNamespace, nil) // waitUntilCalled's dry runs
	dyn := dynamic.NewForConfigOrDie(e.config)
	clusterExceptions := dyn.Resource(clusterExceptionsGVR)
	t.Cleanup(func() {
		_ = e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exceptionNamespace}})
		// rolloutNamespace stays: TestServerWritesItsWebhookConfigurations
		// and TestRolloutWalk use it later, and without the controller
		// manager no deleted namespace is ever finalized.
		_ = clusterExceptions.Delete(ctx, exceptionName, metav1.DeleteOptions{})
	})
	if _, err := envtest.InstallCRDs(e.config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(repo, "deploy", "policyreport-crds")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	reports := dyn.Resource(policyReportsGVR).Namespace(exceptionNamespace)

	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--default-mode", "Audit", "--mode", "secret-scope=Enforce", "--mode", "exception=Enforce"}
	metrics, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	g, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
		CertDir: e.local.CertDir, WorkDir: e.local.WorkDir(), Kubeconfig: e.local.Kubeconfig, Binary: bin,
		MetricsAddr: metrics, LogName: "gatehouse-exceptions.log", Args: flags,
	})
	if err != nil {
		t.Fatal(err)
	}
	var auditor *localcluster.Gatehouse
	t.Cleanup(func() {
		for _, g := range []*localcluster.Gatehouse{g, auditor} {
			if g != nil {
				g.Stop(30 * time.Second)
			}
		}
	})
	t.Cleanup(restore) // runs first
	cfg := configv1alpha1.Default()
	applyModeFlags(t, &cfg, flags)
	for kind, hooks := range renderedWebhooksFor(t, route.ManifestOptions{URL: g.URL, Options: route.OptionsFromConfig(cfg)}, caBundle) {
		setWebhooks(t, e, kind, hooks)
	}
	if err := g.WaitReady(time.Minute); err != nil {
		t.Fatalf("gatehouse: %v (log %s)", err, g.Log)
	}
	waitUntilCalled(t, e, g)
	c, warnings := clientWithWarnings(t, e)
	web := func() *corev1.Pod {
		p := scopePod("web")
		p.Namespace = exceptionNamespace
		return p
	}
	// printed is what kubectl prints for `kubectl apply -f web.yaml` with
	// the warnings since n and err.
	printed := func(n int, err error) string {
		var b strings.Builder
		for _, w := range warnings.all()[n:] {
			b.WriteString("Warning: " + w + "\n")
		}
		if err != nil {
			b.WriteString(strings.ReplaceAll(kubectlError(err), " \n", "\n") + "\n")
		} else {
			b.WriteString("pod/web created\n")
		}
		return b.String()
	}
	var outputs []string

	// 1. Enforce denies.
	n := len(warnings.all())
	err = c.Create(ctx, web())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ScopeEntryEmpty") {
		t.Fatalf("Enforce must deny the pod, got %v", err)
	}
	outputs = append(outputs, printed(n, err))

	// The exception webhook refuses an exception that has already expired.
	err = c.Create(ctx, scopeClusterException(time.Now().Add(-time.Minute)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ExceptionExpired") {
		t.Errorf("an expired exception must be refused, got %v", err)
	}

	// 2. A ClusterException for the pod, expiring soon: the same pod is
	// admitted, with the warning naming it, once the informers have it.
	expires := time.Now().Add(45 * time.Second).Truncate(time.Second)
	excepted := scopeClusterException(expires)
	if err := c.Create(ctx, excepted); err != nil {
		t.Fatalf("the exception must be admitted: %v", err)
	}
	// Beside it, one that matches nothing: the audit reports it unused.
	unused := scopeClusterException(time.Now().Add(time.Hour))
	unused.SetName(unusedExceptionName)
	match, _, _ := unstructured.NestedSlice(unused.Object, "spec", "match")
	match[0].(map[string]any)["names"] = []any{"no-such-pod"}
	if err := unstructured.SetNestedSlice(unused.Object, match, "spec", "match"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, unused); err != nil {
		t.Fatalf("the unused exception must be admitted: %v", err)
	}
	t.Cleanup(func() { _ = clusterExceptions.Delete(ctx, unusedExceptionName, metav1.DeleteOptions{}) })
	clusterReports := dyn.Resource(clusterPolicyReportsGVR)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, web(), client.DryRunAll) == nil, nil
	}); err != nil {
		t.Fatalf("the exception did not reach gatehouse (log %s)", g.Log)
	}
	n = len(warnings.all())
	if err := c.Create(ctx, web()); err != nil {
		t.Fatalf("the excused pod must be admitted: %v", err)
	}
	want := "gatehouse secret-scope: ScopeEntryEmpty at spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope] excused by exception " +
		exceptionName + " until " + expires.UTC().Format(time.RFC3339)
	if got := warnings.all()[n:]; !slices.Contains(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	outputs = append(outputs, printed(n, nil))
	raw, err := g.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	if v := sampleValue(parseMetrics(t, raw), "gatehouse_webhook_decisions_total",
		map[string]string{"webhook": "secret-scope", "decision": "excused", "mode": "Enforce", "code": "ScopeEntryEmpty"}); v < 1 {
		t.Errorf("gatehouse_webhook_decisions_total{decision=excused} = %v, want at least 1", v)
	}
	stored := &corev1.Pod{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: exceptionNamespace, Name: "web"}, stored); err != nil {
		t.Fatal(err)
	}

	// The background audit reports the finding as excused, and `gatehouse
	// audit` lists the exception as used.
	startAudit := func() {
		t.Helper()
		if auditor != nil {
			_, _ = auditor.Stop(30 * time.Second)
		}
		if auditor, err = localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
			Role: "audit", WorkDir: e.local.WorkDir(), Kubeconfig: e.local.Kubeconfig, Binary: bin,
			LeaderElectionNamespace: exceptionLeaseNamespace, LogName: "gatehouse-exceptions-audit.log", Args: flags,
		}); err != nil {
			t.Fatal(err)
		}
	}
	startAudit()
	result := waitForReportResult(t, reports, string(stored.UID), "skip secret-scope ScopeEntryEmpty excusedBy="+exceptionName)
	t.Logf("report result while excused:\n%s", result)
	// The exception that matches nothing is reported on its own report.
	result = waitForReportResult(t, clusterReports, string(unused.GetUID()), "warn exception ExceptionState state=Unused")
	t.Logf("the unused exception's report result:\n%s", result)
	out, code := runAudit(t, bin, e.local.Kubeconfig, flags...)
	if code != 0 || !strings.Contains(out, "exception "+exceptionName+": Used, 1 finding excused, expires "+expires.UTC().Format(time.RFC3339)) {
		t.Errorf("gatehouse audit: exit %d, want 0 and the exception used:\n%s", code, out)
	}

	// 3. Expired: the report fails again, naming the expired exception,
	// and the same pod is denied again.
	time.Sleep(time.Until(expires) + time.Second)
	startAudit()
	result = waitForReportResult(t, reports, string(stored.UID), "fail secret-scope ScopeEntryEmpty exceptionExpired="+exceptionName)
	t.Logf("report result once expired:\n%s", result)
	waitForReportResult(t, clusterReports, string(excepted.GetUID()), "warn exception ExceptionState state=Expired")
	// The pass says so of the exception too: its log names it as expired.
	expiredLine := `"exception":"` + exceptionName + `","state":"Expired"`
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		raw, err := os.ReadFile(auditor.Log)
		return err == nil && strings.Contains(string(raw), `"msg":"exception excused nothing in the pass"`) &&
			strings.Contains(string(raw), expiredLine), nil
	}); err != nil {
		t.Errorf("the audit's log does not name %s as expired (%s)", exceptionName, expiredLine)
	}
	if err := e.client.Delete(ctx, stored, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKeyFromObject(stored), &corev1.Pod{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("the pod was not deleted: %v", err)
	}
	n = len(warnings.all())
	err = c.Create(ctx, web())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ScopeEntryEmpty") {
		t.Fatalf("after the expiry the pod must be denied again, got %v", err)
	}
	if got := strings.Join(warnings.all()[n:], "\n"); !strings.Contains(got, "exception "+exceptionName+" expired at "+expires.UTC().Format(time.RFC3339)+" and excuses nothing") {
		t.Errorf("warnings %q, want the expired exception named", got)
	}
	outputs = append(outputs, printed(n, err))

	// docs/rollout.md shows the three applies, in this order.
	samples := docSamples(t, "kubectl apply -f web.yaml")
	if len(samples) != len(outputs) {
		t.Fatalf("docs show %d `kubectl apply -f web.yaml`, the walk runs %d:\n%s", len(samples), len(outputs), strings.Join(outputs, "---\n"))
	}
	for i, s := range samples {
		if err := quotes(s.quoted, outputs[i]); err != nil {
			t.Errorf("%s: %v\n--- kubectl prints:\n%s", s, err, outputs[i])
		}
	}
}

// waitForReportResult waits until the PolicyReport named name holds the
// result want, "<result> <policy> <rule> <property>=<value>" with the
// property excusedBy, exceptionExpired or state, and returns that result as
// YAML.
func waitForReportResult(t *testing.T, reports dynamic.ResourceInterface, name, want string) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = got[:0]
		if r, err := reports.Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			results, _, _ := unstructured.NestedSlice(r.Object, "results")
			for _, item := range results {
				res, _ := item.(map[string]any)
				props, _, _ := unstructured.NestedStringMap(res, "properties")
				for _, p := range []string{"excusedBy", "exceptionExpired", "state"} {
					if v := props[p]; v != "" {
						line := fmt.Sprintf("%s %s %s %s=%s", res["result"], res["policy"], res["rule"], p, v)
						got = append(got, line)
						if line == want {
							out, err := yaml.Marshal(res)
							if err != nil {
								t.Fatal(err)
							}
							return string(out)
						}
					}
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("report %s: results %q, want %q among them", name, got, want)
	return ""
}
