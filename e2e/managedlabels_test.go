package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// refusedByManagedLabels reports whether err is the API server's refusal
// by the admission policy that keeps the managed namespace labels
// gatehouse's, naming each of keys.
func refusedByManagedLabels(err error, keys ...string) bool {
	if !apierrors.IsInvalid(err) || failedWebhook(err) != "" {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "ValidatingAdmissionPolicy '"+render.ManagedLabelsPolicyName+"'") {
		return false
	}
	for _, k := range keys {
		if !strings.Contains(msg, "metadata.labels["+k+"]: "+render.ManagedLabelChanged+": ") {
			return false
		}
	}
	return true
}

// TestManagedLabelsHold: the labels gatehouse keeps on a harnessed and
// scoped namespace (docs/contracts.md §11) cannot be stripped by anyone
// else, admin included: through namespaces/status and namespaces/finalize
// the API server's own admission policy refuses it, and a plain UPDATE that
// drops them gets them back from harness-labels while gatehouse answers.
// With gatehouse stopped, the same UPDATE (which the failing-open entry
// lets through) and the status strip are refused by the policy, while
// another label of the namespace can still be changed. gatehouse itself
// gives the labels up when the harness goes.
func TestManagedLabelsHold(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it stops and restarts gatehouse")
	}
	ctx := context.Background()
	opts := serverOptions()
	harnessed, scoped := opts.HarnessedNamespaceLabel, opts.ScopedNamespaceLabel
	const key = "e2e.gatehouse.dev/managed-labels"
	ns := testNamespace(t, e, t.Name(), nil, map[string]string{key: "team"})
	h := operatorHarness(t, "e2e-managed-labels", key, ns, nil, true)
	harnessNamespace(ctx, t, e, h, ns)
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	current := func() *corev1.Namespace {
		t.Helper()
		got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, ok := current().Labels[scoped]
		return ok, nil
	}); err != nil {
		t.Fatalf("namespace %s was never labelled scoped: %v", ns, err)
	}
	without := func(keys ...string) *corev1.Namespace {
		got := current()
		for _, k := range keys {
			delete(got.Labels, k)
		}
		return got
	}
	dryRun := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}

	_, err = cs.CoreV1().Namespaces().UpdateStatus(ctx, without(harnessed, scoped), dryRun)
	if !refusedByManagedLabels(err, harnessed, scoped) {
		t.Errorf("both labels stripped through namespaces/status: want the policy's refusal naming both, got %v", err)
	}
	t.Logf("the refusal: %v", err)
	_, err = cs.CoreV1().Namespaces().Finalize(ctx, without(harnessed), dryRun)
	if !refusedByManagedLabels(err, harnessed) {
		t.Errorf("the harnessed label stripped through namespaces/finalize: want the policy's refusal, got %v", err)
	}
	got, err := cs.CoreV1().Namespaces().Update(ctx, without(harnessed, scoped), dryRun)
	if err != nil {
		t.Errorf("an UPDATE dropping the labels while gatehouse answers: %v", err)
	} else if _, ok := got.Labels[harnessed]; !ok {
		t.Errorf("an UPDATE dropping the labels while gatehouse answers would store %v: harness-labels gives a namespace the labels it should carry", got.Labels)
	}

	restart := stopGatehouse(t, e)
	// gatehouse is down: the failing-open entry lets the UPDATE through to
	// the policy, which refuses it.
	_, err = cs.CoreV1().Namespaces().Update(ctx, without(harnessed), metav1.UpdateOptions{})
	if !refusedByManagedLabels(err, harnessed) {
		t.Errorf("with gatehouse down, an UPDATE dropping the harnessed label: want the policy's refusal, got %v", err)
	}
	// docs/operations.md shows what kubectl prints for this refusal, in
	// its namespace team-a.
	printed := strings.ReplaceAll(kubectlError(err), ns, "team-a")
	for _, c := range docSamples(t, "kubectl label namespace team-a gatehouse.dev/harnessed-") {
		if err := quotes(c.quoted, printed+"\n"); err != nil {
			t.Errorf("%s: %v\n--- kubectl prints:\n%s", c, err, printed)
		}
	}
	_, err = cs.CoreV1().Namespaces().UpdateStatus(ctx, without(scoped), metav1.UpdateOptions{})
	if !refusedByManagedLabels(err, scoped) {
		t.Errorf("with gatehouse down, the scoped label stripped through namespaces/status: want the policy's refusal, got %v", err)
	}
	relabelled := current()
	relabelled.Labels["team"] = "other"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, relabelled, dryRun); err != nil {
		t.Errorf("with gatehouse down, an UPDATE of another label of the namespace: %v", err)
	}
	for _, k := range []string{harnessed, scoped} {
		if _, ok := current().Labels[k]; !ok {
			t.Errorf("namespace %s lost %s while gatehouse was down", ns, k)
		}
	}
	restart()

	// gatehouse's own requests go through: with the harness gone it gives
	// both labels up.
	if err := e.client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		l := current().Labels
		_, h := l[harnessed]
		_, s := l[scoped]
		return !h && !s, nil
	}); err != nil {
		t.Errorf("gatehouse did not give the labels up once the harness was deleted (labels %v): %v", current().Labels, err)
	}
}

// TestNamespaceUpdateCannotExemptItself: a harnessed operator that strips
// a scope label from a Namespace in the same UPDATE that adds a label the
// exemptions name is refused (docs/contracts.md §11): the API server sends
// the UPDATE (the entry of Namespaces' own requests exempts by the old and
// the new labels), and gatehouse judges it (exempt only when both are). With
// gatehouse stopped the fail-closed entry refuses it, while the same strip
// in a namespace that was exempt already is never sent. A gatehouse of its
// own serves, with the exemption in its configuration, behind the
// configurations rendered from that configuration.
func TestNamespaceUpdateCannotExemptItself(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("starts a gatehouse of its own: local control plane only")
	}
	ctx := context.Background()
	const key, exempting = "e2e.gatehouse.dev/escape", "e2e.gatehouse.dev/unmanaged"
	operatorNS := testNamespace(t, e, t.Name()+"/operator", nil, nil)
	tenant := testNamespace(t, e, t.Name()+"/tenant", nil, map[string]string{key: "tenant"})
	exempt := testNamespace(t, e, t.Name()+"/exempt", nil, map[string]string{key: "exempt", exempting: "true"})
	h := operatorHarness(t, "e2e-escape", key, operatorNS, []any{"operator"}, false)
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })
	operator := "system:serviceaccount:" + operatorNS + ":operator"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-escape-namespaces"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "namespaces/status"}, Verbs: []string{"get", "update"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-escape-namespaces"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: operatorNS, Name: "operator"}}}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(`apiVersion: gatehouse.dev/v1alpha1
kind: ServerConfig
exemptions:
  namespaceLabels: [{key: `+exempting+`, operator: Exists}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configv1alpha1.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
		CertDir: e.local.CertDir, WorkDir: e.local.WorkDir(), Kubeconfig: e.local.GatehouseKubeconfig, Binary: bin,
		LogName: "gatehouse-escape.log", Args: []string{"--config", cfgPath},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_, _ = g.Stop(30 * time.Second)
		}
	})
	if err := g.WaitReady(time.Minute); err != nil {
		t.Fatalf("%v (log %s)", err, g.Log)
	}
	caBundle := liveCABundle(t, e)
	_, restore := saveWebhooks(t, e)
	t.Cleanup(restore) // runs before g stops
	for kind, hooks := range renderedWebhooksFor(t, route.ManifestOptions{URL: g.URL, Namespace: localcluster.Namespace, Options: route.OptionsFromConfig(cfg)}, caBundle) {
		setWebhooks(t, e, kind, hooks)
	}
	// Until the API server calls g and g's view holds the harness, a
	// ConfigMap created in the tenant namespace is not labelled.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "probe"}}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := probe.DeepCopy()
		if err := e.client.Create(ctx, got, client.DryRunAll); err != nil {
			return false, nil
		}
		return got.Labels[key] == "tenant", nil
	}); err != nil {
		t.Fatalf("the gatehouse with the exemption never labelled a new object in %s: %v (log %s)", tenant, err, g.Log)
	}

	cfgAs := rest.CopyConfig(e.config)
	cfgAs.Impersonate = rest.ImpersonationConfig{UserName: operator}
	asOperator, err := client.New(cfgAs, client.Options{Scheme: e.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// escape strips the scope label of namespace name and adds the
	// exempting label, through the main resource or namespaces/status.
	escape := func(name, sub string) error {
		got := &corev1.Namespace{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		delete(got.Labels, key)
		got.Labels[exempting] = "true"
		if sub == "status" {
			return asOperator.SubResource("status").Update(ctx, got, client.DryRunAll)
		}
		return asOperator.Update(ctx, got, client.DryRunAll)
	}
	for _, sub := range []string{"", "status"} {
		err := escape(tenant, sub)
		if err == nil {
			t.Errorf("namespaces %q: the scope label stripped with an exempting label added was admitted", sub)
			continue
		}
		if webhook, causes := liveCauses(t, err); webhook != "harness-labels-guard" || strings.Join(causes, " ") != "ScopeLabelChanged@metadata.labels["+key+"]" {
			t.Errorf("namespaces %q: denied by %s with %v, want harness-labels-guard's ScopeLabelChanged", sub, webhook, causes)
		}
	}
	if err := escape(exempt, ""); err != nil {
		t.Errorf("the same strip in a namespace that was exempt before: %v", err)
	}

	if _, err := g.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := escape(tenant, ""); failedWebhook(err) == "" {
		t.Errorf("with gatehouse down, the escape must be refused by a fail-closed entry it is sent to, got %v", err)
	}
	if err := escape(exempt, ""); err != nil {
		t.Errorf("with gatehouse down, the strip in a namespace exempt before and after must never be sent: %v", err)
	}
}

// TestHarnessInExemptNamespaceDenied: an OperatorHarness that injects the
// proxy into a namespace exempt from gatehouse's webhooks (kube-system by
// default, gatehouse's own always), where its pods would never be
// injected, is denied in Enforce with ProxyNamespaceExempt; one that does
// not inject there is admitted.
func TestHarnessInExemptNamespaceDenied(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	for _, ns := range []string{"kube-system", localcluster.Namespace} {
		h := operatorHarness(t, "e2e-exempt-"+ns, "e2e.gatehouse.dev/exempt-"+ns, ns, nil, true)
		err := e.client.Create(ctx, h, client.DryRunAll)
		if err == nil {
			t.Errorf("a harness injecting into %s was admitted", ns)
			continue
		}
		if webhook, causes := liveCauses(t, err); webhook != "harness" || strings.Join(causes, " ") != string(proxy.ProxyNamespaceExempt)+"@spec.operator.namespace" {
			t.Errorf("a harness injecting into %s: denied by %s with %v, want harness's %s", ns, webhook, causes, proxy.ProxyNamespaceExempt)
		}
		if !strings.Contains(err.Error(), "exempt from gatehouse's webhooks") {
			t.Errorf("the denial does not say why: %v", err)
		}
		if err := unstructured.SetNestedField(h.Object, false, "spec", "operator", "injectProxyConfiguration"); err != nil {
			t.Fatal(err)
		}
		if err := e.client.Create(ctx, h, client.DryRunAll); err != nil {
			t.Errorf("a harness naming %s without injecting: %v", ns, err)
		}
	}
}
