package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestHarnessedNamespaceFailsClosedOnItsOwn: creating an OperatorHarness
// with injectProxyConfiguration: true is enough for its namespace to fail
// closed (docs/contracts.md §4): nobody labels the namespace, gatehouse's
// leader-elected controller does. The test measures the window from the
// harness's creation to the first pod create in that namespace that the
// API server refuses because harness-proxy's fail-closed entry (the rendered
// namespaceSelector, here on a copy whose endpoint is unreachable) now
// covers the namespace; then deletes the harness and sees the label given
// up again.
func TestHarnessedNamespaceFailsClosedOnItsOwn(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	label := serverOptions().HarnessedNamespaceLabel
	ns := testNamespace(t, e, t.Name(), nil, nil)

	// harness-proxy's fail-closed entry as rendered (separate layout), its
	// selection kept, calling an address where nothing listens, and seeing
	// only this test's pods.
	var selector any
	rendered, err := render.WebhookConfigurations(route.ManifestOptions{
		URL: "https://gatehouse.invalid", Layout: route.LayoutSeparate, Options: serverOptions()})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.DecodeManifests(rendered)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			if hook := h.(map[string]any); obj.GetKind() == "MutatingWebhookConfiguration" && hook["name"] == "harness-proxy.gatehouse.dev" {
				selector = runtime.DeepCopyJSONValue(hook["namespaceSelector"])
			}
		}
	}
	if selector == nil {
		t.Fatal("the rendered configuration has no harness-proxy entry with a namespaceSelector")
	}
	const instance = "harnessed-window"
	copyName := "gatehouse-e2e-harnessed-window"
	guard := &unstructured.Unstructured{Object: map[string]any{"webhooks": []any{map[string]any{
		"name":                    "harnessed-window.gatehouse.dev",
		"clientConfig":            map[string]any{"url": "https://127.0.0.1:1/unreachable"},
		"rules":                   []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"}}},
		"namespaceSelector":       selector,
		"objectSelector":          map[string]any{"matchLabels": map[string]any{instanceLabel: instance}},
		"failurePolicy":           "Fail",
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"timeoutSeconds":          int64(1),
	}}}}
	guard.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"})
	guard.SetName(copyName)
	if err := e.client.Create(ctx, guard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), guard) })

	pod := plainPod(ns, "probe")
	pod.Labels = map[string]string{instanceLabel: instance}
	refused := func() bool {
		err := e.client.Create(ctx, pod.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "harnessed-window.gatehouse.dev")
	}
	// Before any harness: the namespace is not harnessed, the copy is not
	// called. (The API server may not have seen the copy yet either, which
	// gives the same answer; the poll below waits for it.)
	if refused() {
		t.Fatal("the namespace fails closed before any harness names it")
	}

	h := sampleObject(t, schema.GroupResource{Group: "vshn.net", Resource: "operatorharnesses"}, "", "e2e-harnessed-window")
	if err := unstructured.SetNestedField(h.Object, ns, "spec", "operator", "namespace"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(h.Object, true, "spec", "operator", "injectProxyConfiguration"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })

	var labelled time.Duration
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if labelled == 0 {
			got := &corev1.Namespace{}
			if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
				return false, err
			}
			if _, ok := got.Labels[label]; ok {
				labelled = time.Since(start)
			}
		}
		return labelled > 0 && refused(), nil
	})
	if err != nil {
		t.Fatalf("the namespace named by an injecting harness never failed closed (labelled after %v): %v", labelled, err)
	}
	t.Logf("window from harness created to namespace failing closed: labelled after %v, refused after %v", labelled, time.Since(start))

	got := &corev1.Namespace{}
	if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	owned := false
	for _, f := range got.ManagedFields {
		owned = owned || (f.Manager == controllers.SelectionsFieldManager && strings.Contains(string(f.FieldsV1.Raw), label))
	}
	if !owned {
		t.Errorf("the label is not owned by field manager %s: %+v", controllers.SelectionsFieldManager, got.ManagedFields)
	}

	// The harness goes: the controller gives the label up.
	if err := e.client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &corev1.Namespace{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
			return false, err
		}
		_, ok := got.Labels[label]
		return !ok, nil
	})
	if err != nil {
		t.Errorf("the label stayed after the harness was deleted: %v", err)
	}
}

// TestScopedNamespacesAreSelected: with the namespace labels managed,
// harness-labels is sent the namespaced objects of scoped namespaces only
// (docs/harness-proxy-and-labels.md, "Selection"), so the scoped label must
// be there before the first object is: a namespace created with an enforced
// scope label gets it at its own admission, and one that carried the scope
// label before its harness existed gets it from the controller (the window
// is measured). In both, a ConfigMap created next carries the scope label.
func TestScopedNamespacesAreSelected(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	opts := serverOptions()
	const key = "e2e.gatehouse.dev/scoped-window"
	before := testNamespace(t, e, t.Name()+"/before", nil, map[string]string{key: "before"})
	operator := testNamespace(t, e, t.Name()+"/operator", nil, nil)

	h := operatorHarness(t, "e2e-scoped-window", key, operator, nil, false)
	start := time.Now()
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })

	scoped := func(name string) (bool, error) {
		got := &corev1.Namespace{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false, err
		}
		_, ok := got.Labels[opts.ScopedNamespaceLabel]
		return ok, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return scoped(before)
	}); err != nil {
		t.Fatalf("the namespace that carried the scope label before its harness was never selected: %v", err)
	}
	t.Logf("window from harness created to an existing scoped namespace selected: %v", time.Since(start))

	// gatehouse's own view of the new harness may lag its creation by a few
	// milliseconds: a dry-run create shows when it has it.
	probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-scoped-probe", Labels: map[string]string{key: "probe"}}}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got := probe.DeepCopy()
		if err := e.client.Create(ctx, got, client.DryRunAll); err != nil {
			return false, err
		}
		_, ok := got.Labels[opts.ScopedNamespaceLabel]
		return ok, nil
	}); err != nil {
		t.Fatalf("a namespace created with an enforced scope label is not selected at its admission: %v", err)
	}
	after := testNamespace(t, e, t.Name()+"/after", nil, map[string]string{key: "after"})
	if ok, err := scoped(after); err != nil || !ok {
		t.Fatalf("namespace %s, created with the scope label, was stored unselected (err %v)", after, err)
	}
	for _, ns := range []string{before, after} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first-object"}}
		if err := e.client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{before: "before", after: "after"}[ns]
		if got := cm.Labels[key]; got != want {
			t.Errorf("the first object in %s carries %s=%q, want the namespace's %q", ns, key, got, want)
		}
	}
}

// TestHarnessedAccountsSelected: with the selections managed, gatehouse adds
// to the entries only harnessed service accounts need reach the
// matchCondition listing them (docs/harness-proxy-and-labels.md,
// "Selection"). The test measures the window from a harness's creation to
// its account in the live configuration, then counts with the API server's
// own metrics that a label change by an account no harness claims is kept
// away from harness-labels-guard's entry and one by the harnessed account
// is sent.
func TestHarnessedAccountsSelected(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "relabelled", Labels: map[string]string{"app": "db"}}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "operator"}, {Kind: "ServiceAccount", Namespace: ns, Name: "bystander"}}}
	for _, obj := range []client.Object{cm, role, binding} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	as := func(account string) client.Client {
		cfg := rest.CopyConfig(e.config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + account}
		c, err := client.New(cfg, client.Options{Scheme: e.client.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	h := operatorHarness(t, "e2e-harnessed-accounts", "e2e.gatehouse.dev/harnessed-accounts", ns, []any{"operator"}, false)
	start := time.Now()
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })

	const entry = "validating-fail-accounts.gatehouse.dev"
	if entries := waitForHarnessedAccount(ctx, t, e, "system:serviceaccount:"+ns+":operator"); !slices.Contains(entries, entry) {
		t.Fatalf("entry %s never listed the harnessed account (entries that do: %v)", entry, entries)
	}
	t.Logf("window from harness created to its account in the webhook configuration: %v", time.Since(start))

	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	scrape := func() perf.AdmissionCounts {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts, err := perf.ParseAdmissionCounts(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		return counts
	}
	name := strings.TrimSuffix(entry, ".gatehouse.dev")
	for _, c := range []struct {
		account string
		sent    bool
	}{{"bystander", false}, {"operator", true}} {
		before := scrape()
		relabelled := cm.DeepCopy()
		relabelled.Labels["app"] = "web-" + c.account
		if err := as(c.account).Update(ctx, relabelled, client.DryRunAll); err != nil {
			t.Fatalf("%s's label change: %v", c.account, err)
		}
		moved := scrape().Sub(before)
		calls, excluded := moved.Calls[name]["UPDATE"], moved.Excluded[name]["UPDATE"]
		// (The API server may evaluate an UPDATE's admission more than once
		// when its first try of the storage update conflicts.)
		if c.sent && calls < 1 || !c.sent && (calls != 0 || excluded < 1) {
			t.Errorf("%s's label change: %d calls of %s, %d kept away by its matchConditions; want it sent=%v (moved: %+v)", c.account, calls, entry, excluded, c.sent, moved)
		}
	}
}

// operatorHarness is the sample vshn.net OperatorHarness called name, with
// scopeToLabel key, naming namespace ns and the service accounts (nil: every
// one in ns), injecting the proxy when inject.
func operatorHarness(t *testing.T, name, key, ns string, accounts []any, inject bool) *unstructured.Unstructured {
	t.Helper()
	h := sampleObject(t, schema.GroupResource{Group: "vshn.net", Resource: "operatorharnesses"}, "", name)
	for _, f := range []struct {
		value any
		path  []string
	}{{key, []string{"spec", "scopeToLabel"}}, {ns, []string{"spec", "operator", "namespace"}},
		{inject, []string{"spec", "operator", "injectProxyConfiguration"}}} {
		if err := unstructured.SetNestedField(h.Object, f.value, f.path...); err != nil {
			t.Fatal(err)
		}
	}
	if accounts != nil {
		if err := unstructured.SetNestedField(h.Object, accounts, "spec", "operator", "serviceAccounts"); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// harnessNamespace creates the harness h, deleted when the test ends, and waits
// until gatehouse's selections controller labels ns, a namespace h names,
// harnessed.
func harnessNamespace(ctx context.Context, t *testing.T, e *env, h client.Object, ns string) {
	t.Helper()
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })
	label := serverOptions().HarnessedNamespaceLabel
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &corev1.Namespace{}
		err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got)
		_, ok := got.Labels[label]
		return ok, err
	}); err != nil {
		t.Fatalf("namespace %s was never labelled harnessed: %v", ns, err)
	}
}

// waitForHarnessedAccount waits until gatehouse's selections controller has
// added user to the matchCondition gatehouse-harnessed-accounts of every
// entry of both webhook configurations that carries it, and at least one
// does, and returns those entries: only then is every request of user sent
// where a harnessed account's requests go.
func waitForHarnessedAccount(ctx context.Context, t *testing.T, e *env, user string) []string {
	t.Helper()
	quoted := fmt.Sprintf("%q", user)
	var entries []string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		entries = entries[:0]
		complete := true
		visit := func(name string, conditions []admissionregistrationv1.MatchCondition) {
			for _, c := range conditions {
				if c.Name == route.HarnessedAccountsCondition {
					entries = append(entries, name)
					complete = complete && strings.Contains(c.Expression, quoted)
				}
			}
		}
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: render.ConfigurationName}, validating); err != nil {
			return false, err
		}
		for _, w := range validating.Webhooks {
			visit(w.Name, w.MatchConditions)
		}
		mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: render.ConfigurationName}, mutating); err != nil {
			return false, err
		}
		for _, w := range mutating.Webhooks {
			visit(w.Name, w.MatchConditions)
		}
		return complete && len(entries) > 0, nil
	})
	if err != nil {
		t.Fatalf("the entries %v never all listed %s: %v", entries, user, err)
	}
	return entries
}
