package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// excludedNamespaces are the namespaces no gatehouse webhook may see
// (docs/contracts.md §10), so gatehouse, the control plane and node heartbeats
// start whatever gatehouse's state.
var excludedNamespaces = []string{localcluster.Namespace, "kube-system", "kube-node-lease"}

// failedCall matches the API server's message for a webhook entry it could
// not call; the group is the entry's name without ".gatehouse.dev".
var failedCall = regexp.MustCompile(`failed calling webhook "([^"]+)\.gatehouse\.dev"`)

// failedWebhook returns the gatehouse entry the API server names as not
// callable in err (a webhook's own entry, or its combined group's), or ""
// when err is not such a rejection.
func failedWebhook(err error) string {
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		return ""
	}
	m := failedCall.FindStringSubmatch(status.Status().Message)
	if m == nil {
		return ""
	}
	return m[1]
}

// entriesOf names the configuration entries that can carry def in either
// layout: its own (and "-unlabelled" for one that fails closed only in
// harnessed namespaces) and the combined groups it is a member of.
func entriesOf(def route.Definition) []string {
	out := []string{def.Name}
	if def.FailClosedOnlyInHarnessed {
		out = append(out, def.Name+"-unlabelled")
	}
	for _, g := range route.Groups() {
		if g.Type == def.Type && (g.FailurePolicy == def.FailurePolicy || def.FailClosedOnlyInHarnessed) {
			out = append(out, g.Name)
		}
	}
	return out
}

// entryPolicy returns the type and failure policy of a configuration entry.
func entryPolicy(name string) (route.Type, admissionregistrationv1.FailurePolicyType, bool) {
	for _, g := range route.Groups() {
		if g.Name == name || g.Name+"-namespaces" == name {
			return g.Type, g.FailurePolicy, true
		}
	}
	if def, ok := route.Lookup(strings.TrimSuffix(name, "-namespaces")); ok {
		return def.Type, def.FailurePolicy, true
	}
	if def, ok := route.Lookup(strings.TrimSuffix(name, "-unlabelled")); ok && def.FailClosedOnlyInHarnessed {
		return def.Type, admissionregistrationv1.Ignore, true
	}
	return "", "", false
}

// placed is a fail-closed webhook's sample, where the webhook covers it.
type placed struct {
	def route.Definition
	obj *unstructured.Unstructured
	gvr schema.GroupVersionResource
	// labels are the labels of the object's namespace.
	labels map[string]string
}

// placeSamples prepares, for every fail-closed webhook of the registry, an
// object it intercepts in a namespace it covers (namespaces are created now:
// namespaces are never sent to gatehouse, but creating them early keeps the
// stopped phase about admission only).
func placeSamples(t *testing.T, e *env, seed string) []placed {
	t.Helper()
	var out []placed
	for _, def := range route.Registry() {
		if def.FailurePolicy != admissionregistrationv1.Fail {
			continue
		}
		if !slices.Contains(def.Intercept.Operations, admissionregistrationv1.Create) {
			// UPDATE only (harness-labels-guard): its own case in
			// TestFailureMatrix, since a create never reaches it.
			continue
		}
		c := coverOf(t, def)
		name, ns := "e2e-"+seed+"-"+def.Name, ""
		switch {
		case c.clusterScoped:
		case c.fixedNamespace != "":
			ns, name = c.fixedNamespace, c.fixedName
			ensureNamespace(t, e, ns, c.namespaceLabels)
		default:
			ns = testNamespace(t, e, seed+"/"+def.Name, nil, c.namespaceLabels)
		}
		out = append(out, placed{def: def, obj: actedOn(t, def, sampleObject(t, c.gvr.GroupResource(), ns, name)), gvr: c.gvr, labels: c.namespaceLabels})
	}
	if len(out) == 0 {
		t.Fatal("the registry has no fail-closed webhook")
	}
	return out
}

func ensureNamespace(t *testing.T, e *env, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	// A namespace an earlier test deleted may still be terminating: wait
	// until it is gone, or nothing can be created in it. Only the
	// controller manager's namespace controller finalizes one, so a test
	// that does not start it must not delete a namespace others use.
	var ns corev1.Namespace
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKey{Name: name}, &ns)
		return apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp == nil), nil
	}); err != nil {
		var why []string
		for _, c := range ns.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				why = append(why, fmt.Sprintf("%s: %s", c.Type, c.Message))
			}
		}
		t.Fatalf("namespace %s is still terminating: %v; %s", name, err, strings.Join(why, "; "))
	}
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}}
	if err := e.client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// failClosedEntries returns the fail-closed configuration entries that can
// carry a webhook intercepting p's object.
func (p placed) failClosedEntries() []string {
	var names []string
	for _, d := range interceptors(p.gvr, p.obj.GetNamespace(), p.obj.GetName(), p.labels) {
		for _, entry := range entriesOf(d) {
			if _, policy, _ := entryPolicy(entry); policy == admissionregistrationv1.Fail && !slices.Contains(names, entry) {
				names = append(names, entry)
			}
		}
	}
	sort.Strings(names)
	return names
}

// TestFailureMatrix stops gatehouse and leaves its webhook configurations in
// place (its pods are gone, or the network to them is), then shows each
// failure policy end to end through the API server, the break-glass path,
// and that a restarted gatehouse takes reviews again only once it is ready.
func TestFailureMatrix(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it stops and restarts gatehouse")
	}
	ctx := context.Background()
	samples := placeSamples(t, e, "failure")
	optIn := testNamespace(t, e, t.Name()+"/opt-in", nil, optInLabel)
	for _, ns := range excludedNamespaces {
		ensureNamespace(t, e, ns, nil)
	}
	// A DependencyGroup stored before the stop: after the restart gatehouse
	// must judge with it in view from its first review on.
	owner := &helmeticav1.DependencyGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-restart-owner"},
		Spec:       helmeticav1.DependencyGroupSpec{CRDs: []helmeticav1.CRDRef{{Name: "widgets.restart.example.com"}}},
	}
	if err := e.client.Create(ctx, owner); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), owner) })

	// A ConfigMap stored before the stop, which a service account may
	// update: harness-labels-guard takes UPDATEs only.
	guarded := placeLabelGuardSample(t, e)

	// The restart runs the binary as a new process, as a restarted pod does.
	binary, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.local.StopGatehouse(); err != nil {
		t.Fatal(err)
	}
	running := false
	t.Cleanup(func() {
		if running {
			return
		}
		// Later tests need gatehouse back whatever failed here.
		if err := e.local.RestartGatehouse(binary); err != nil {
			t.Errorf("restarting gatehouse: %v", err)
		} else if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Error(err)
		}
	})

	t.Run("fail-closed webhooks reject what they cover", func(t *testing.T) {
		for _, p := range samples {
			err := e.client.Create(ctx, p.obj.DeepCopy(), client.DryRunAll)
			if err == nil {
				t.Errorf("%s: %s admitted while gatehouse is down", p.def.Name, p.obj.GetKind())
				continue
			}
			// The API server calls validating entries in parallel and
			// reports the first failure, so any fail-closed entry of an
			// interceptor may be named; each webhook is named alone below.
			want := p.failClosedEntries()
			if got := failedWebhook(err); !slices.Contains(want, got) {
				t.Errorf("%s: %s rejected, but not for a failed call of one of %v: %v", p.def.Name, p.obj.GetKind(), want, err)
			}
		}
	})

	t.Run("the label guard rejects label changes by service accounts, and only those", func(t *testing.T) {
		guarded.check(t, e)
	})

	t.Run("the fail-open mutator lets pods on to the guard", func(t *testing.T) {
		before := failOpenCount(t, e, "pod-security-defaults")
		// Mutating entries run before validating ones: a pod rejected by a
		// failed validating call got past the unreachable mutator.
		err := e.client.Create(ctx, plainPod(optIn, "bare"), client.DryRunAll)
		kind, policy, ok := entryPolicy(failedWebhook(err))
		if !ok || kind != route.Validating || policy != admissionregistrationv1.Fail {
			t.Fatalf("a bare pod in an opted-in namespace: want a failed validating call, got %v", err)
		}
		if after := failOpenCount(t, e, "pod-security-defaults"); after <= before {
			t.Errorf("apiserver_admission_webhook_fail_open_count for pod-security-defaults did not grow (%v -> %v)", before, after)
		}
	})

	t.Run("excluded namespaces are admitted", func(t *testing.T) {
		checkExclusions(t, e)
		// With every label a webhook selects namespaces by, so only the
		// exclusion by name keeps the webhooks away.
		labels, unset := map[string]string{}, map[string]string{}
		for _, p := range samples {
			for k, v := range p.labels {
				labels[k], unset[k] = v, ""
			}
		}
		for _, ns := range excludedNamespaces {
			setNamespaceLabels(t, e, ns, labels)
			t.Cleanup(func() { setNamespaceLabels(t, e, ns, unset) })
		}
		for _, p := range samples {
			if p.obj.GetNamespace() == "" {
				continue
			}
			for _, ns := range excludedNamespaces {
				obj := p.obj.DeepCopy()
				obj.SetNamespace(ns)
				if err := e.client.Create(ctx, obj, client.DryRunAll); err != nil {
					t.Errorf("%s in %s (covered by %s elsewhere) was rejected: %v", obj.GetKind(), ns, p.def.Name, err)
				}
			}
		}
	})

	t.Run("each fail-closed webhook alone rejects", func(t *testing.T) {
		// One entry per webhook (the separate layout), then one at a time.
		_, restore := saveWebhooks(t, e)
		defer restore()
		separate := renderedWebhooks(t, e, route.LayoutSeparate)
		for _, p := range samples {
			separate.keepOnly(t, e, p.def.Name)
			var err error
			// The API server reads webhook configurations through an
			// informer: until it has seen this one, the previous webhook's
			// entry may still decide (and admit), so poll.
			poll := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				err = e.client.Create(ctx, p.obj.DeepCopy(), client.DryRunAll)
				return failedWebhook(err) == p.def.Name, nil
			})
			if poll != nil {
				t.Errorf("%s alone: %s not rejected for a failed call of %s: %v", p.def.Name, p.obj.GetKind(), p.def.Name, err)
			}
		}
	})

	t.Run("break glass works while gatehouse is down", func(t *testing.T) {
		restoreValidating := deleteConfiguration(t, e, "ValidatingWebhookConfiguration")
		restoreMutating := deleteConfiguration(t, e, "MutatingWebhookConfiguration")
		p := samples[0]
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return e.client.Create(ctx, p.obj.DeepCopy(), client.DryRunAll) == nil, nil
		})
		if err != nil {
			t.Errorf("with the configurations deleted, %s was still rejected", p.obj.GetKind())
		}
		for _, restore := range []func() error{restoreValidating, restoreMutating} {
			if err := restore(); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.local.WaitForCABundles(ctx); err != nil {
			t.Fatal(err)
		}
		// Registered again: the API server calls (and fails to reach)
		// gatehouse once more.
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return failedWebhook(e.client.Create(ctx, p.obj.DeepCopy(), client.DryRunAll)) != "", nil
		})
		if err != nil {
			t.Fatalf("the restored configurations do not reach the API server: %v", err)
		}
	})

	t.Run("after a restart, reviews succeed from readiness on", func(t *testing.T) {
		if err := e.local.RestartGatehouse(binary); err != nil {
			t.Fatal(err)
		}
		if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Fatal(err)
		}
		running = true
		// No retries from here: ready means every review is answered, and
		// answered with the cluster state in view.
		for _, p := range samples {
			err := e.client.Create(ctx, p.obj.DeepCopy(), client.DryRunAll)
			if name := failedWebhook(err); name != "" {
				t.Errorf("ready, but the call of %s failed: %v", name, err)
			} else if err != nil && !apierrors.IsInvalid(err) {
				t.Errorf("%s: %s answered with neither a decision nor a denial: %v", p.def.Name, p.obj.GetKind(), err)
			}
		}
		claimer := &helmeticav1.DependencyGroup{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-restart-claimer"},
			Spec:       helmeticav1.DependencyGroupSpec{CRDs: owner.Spec.CRDs},
		}
		webhook, causes := liveCauses(t, e.client.Create(ctx, claimer, client.DryRunAll))
		if got := webhook + " " + strings.Join(causes, " "); got != "dependency-group DependencyGroupCRDClaimed@spec.crds[0].name" {
			t.Errorf("the first state review after readiness: %s", got)
		}
	})
}

// failOpenCount reads the API server's count of calls that failed open to
// the entries that can carry a gatehouse webhook.
func failOpenCount(t *testing.T, e *env, webhook string) float64 {
	t.Helper()
	def, ok := route.Lookup(webhook)
	if !ok {
		t.Fatalf("%s is not in the registry", webhook)
	}
	families := apiServerMetrics(t, e)
	var sum float64
	for _, entry := range entriesOf(def) {
		sum += sampleValue(families, "apiserver_admission_webhook_fail_open_count", map[string]string{"name": entry + ".gatehouse.dev"})
	}
	return sum
}

// renderedWebhooks renders the registry in a layout, calling the local
// gatehouse with the CA bundle cainjector wrote, as webhooks by kind.
func renderedWebhooks(t *testing.T, e *env, layout string) savedWebhooks {
	t.Helper()
	return renderedWebhooksFor(t, route.ManifestOptions{URL: e.local.Gatehouse.URL, Layout: layout, Options: serverOptions()}, liveCABundle(t, e))
}

// liveCABundle is the CA bundle cainjector wrote into the live
// configurations.
func liveCABundle(t *testing.T, e *env) string {
	t.Helper()
	hooks, _, _ := unstructured.NestedSlice(getConfiguration(t, e, "ValidatingWebhookConfiguration").Object, "webhooks")
	if len(hooks) == 0 {
		t.Fatal("the live ValidatingWebhookConfiguration has no webhook to take the CA bundle from")
	}
	caBundle, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
	return caBundle
}

// renderedWebhooksFor renders o's configurations with caBundle.
func renderedWebhooksFor(t *testing.T, o route.ManifestOptions, caBundle string) savedWebhooks {
	t.Helper()
	rendered, err := render.WebhookConfigurations(o)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.DecodeManifests(rendered)
	if err != nil {
		t.Fatal(err)
	}
	out := savedWebhooks{}
	for _, obj := range objs {
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			if err := unstructured.SetNestedField(h.(map[string]any), caBundle, "clientConfig", "caBundle"); err != nil {
				t.Fatal(err)
			}
		}
		out[obj.GetKind()] = hooks
	}
	return out
}

// checkExclusions verifies that every webhook of both live configurations
// excludes exactly the excluded namespaces by name.
func checkExclusions(t *testing.T, e *env) {
	t.Helper()
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		live := getConfiguration(t, e, kind)
		hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
		for _, h := range hooks {
			hook, _ := h.(map[string]any)
			var excluded []string
			exprs, _, _ := unstructured.NestedSlice(hook, "namespaceSelector", "matchExpressions")
			for _, x := range exprs {
				expr, _ := x.(map[string]any)
				if expr["key"] == "kubernetes.io/metadata.name" && expr["operator"] == "NotIn" {
					values, _, _ := unstructured.NestedStringSlice(expr, "values")
					excluded = append(excluded, values...)
				}
			}
			sort.Strings(excluded)
			want := slices.Sorted(slices.Values(excludedNamespaces))
			if !slices.Equal(excluded, want) {
				t.Errorf("%s %v excludes %v, want %v", kind, hook["name"], excluded, want)
			}
		}
	}
}

// setNamespaceLabels merges labels into a namespace; an empty value removes
// the label.
func setNamespaceLabels(t *testing.T, e *env, name string, labels map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ns corev1.Namespace
		if err := e.client.Get(context.Background(), types.NamespacedName{Name: name}, &ns); err != nil {
			return err
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		for k, v := range labels {
			if v == "" {
				delete(ns.Labels, k)
			} else {
				ns.Labels[k] = v
			}
		}
		return e.client.Update(context.Background(), &ns)
	})
	if err != nil {
		t.Fatalf("labelling namespace %s: %v", name, err)
	}
}

func getConfiguration(t *testing.T, e *env, kind string) *unstructured.Unstructured {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
	if err := e.client.Get(context.Background(), types.NamespacedName{Name: localcluster.WebhookConfigName}, live); err != nil {
		t.Fatal(err)
	}
	return live
}

// configurationKinds are the kinds of gatehouse's two webhook configurations.
var configurationKinds = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

// savedWebhooks holds the webhooks of both live configurations, by kind.
type savedWebhooks map[string][]any

// saveWebhooks saves the webhooks of both configurations and returns them
// with a function that puts them back (caBundle included, so no cainjector
// round trip).
func saveWebhooks(t *testing.T, e *env) (savedWebhooks, func()) {
	t.Helper()
	saved := savedWebhooks{}
	for _, kind := range configurationKinds {
		hooks, _, _ := unstructured.NestedSlice(getConfiguration(t, e, kind).Object, "webhooks")
		saved[kind] = hooks
	}
	return saved, func() {
		for _, kind := range configurationKinds {
			setWebhooks(t, e, kind, saved[kind])
		}
	}
}

// keepOnly leaves only the named gatehouse webhook in the configurations.
func (saved savedWebhooks) keepOnly(t *testing.T, e *env, name string) {
	t.Helper()
	for _, kind := range configurationKinds {
		var kept []any
		for _, h := range saved[kind] {
			if hook, _ := h.(map[string]any); hook["name"] == name+".gatehouse.dev" {
				kept = append(kept, h)
			}
		}
		setWebhooks(t, e, kind, kept)
	}
}

func setWebhooks(t *testing.T, e *env, kind string, hooks []any) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := getConfiguration(t, e, kind)
		if len(hooks) == 0 {
			unstructured.RemoveNestedField(live.Object, "webhooks")
		} else if err := unstructured.SetNestedSlice(live.Object, hooks, "webhooks"); err != nil {
			return err
		}
		return e.client.Update(context.Background(), live)
	})
	if err != nil {
		t.Fatalf("updating the %s: %v", kind, err)
	}
}

// TestPodSecurityGuardWhenTheMutatorIsUnreachable points the fail-open
// mutating webhook at an address where nothing listens while gatehouse
// runs: the API server ignores the failed call (and counts it as failed
// open), so pods reach the pod-security guard unmutated. A pod that lacks
// the defaults is denied, naming each; one that states them is admitted.
func TestPodSecurityGuardWhenTheMutatorIsUnreachable(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it repoints a webhook of the live configuration")
	}
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, optInLabel)
	dead, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	saved, restore := saveWebhooks(t, e)
	t.Cleanup(func() {
		restore()
		// Wait until pods are defaulted again, so later tests see the full chain.
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return e.client.Create(ctx, plainPod(ns, "after"), client.DryRunAll) == nil, nil
		})
		if err != nil {
			t.Errorf("the mutating webhook did not come back: %v", err)
		}
	})
	// Whichever entry carries the mutator in the installed layout: its own,
	// or the combined fail-open group (whose other members then fail open
	// too, which changes nothing for these pods).
	mutator, _ := route.Lookup("pod-security-defaults")
	var hooks []any
	repointed := 0
	for _, h := range saved["MutatingWebhookConfiguration"] {
		hook := runtime.DeepCopyJSONValue(h).(map[string]any)
		name, _ := hook["name"].(string)
		if slices.Contains(entriesOf(mutator), strings.TrimSuffix(name, ".gatehouse.dev")) {
			if _, policy, _ := entryPolicy(strings.TrimSuffix(name, ".gatehouse.dev")); policy == admissionregistrationv1.Ignore {
				if err := unstructured.SetNestedField(hook, "https://"+dead+"/mutate/unreachable", "clientConfig", "url"); err != nil {
					t.Fatal(err)
				}
				repointed++
			}
		}
		hooks = append(hooks, hook)
	}
	if repointed == 0 {
		t.Fatal("no entry of the mutating configuration carries pod-security-defaults")
	}
	before := failOpenCount(t, e, "pod-security-defaults")
	setWebhooks(t, e, "MutatingWebhookConfiguration", hooks)

	var lastErr error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lastErr = e.client.Create(ctx, plainPod(ns, "bare"), client.DryRunAll)
		return lastErr != nil, nil
	})
	if err != nil {
		t.Fatal("with the mutator unreachable a bare pod was still admitted")
	}
	webhook, causes := liveCauses(t, lastErr)
	if webhook != "pod-security" || len(causes) == 0 {
		t.Fatalf("denied by %s with %v, want pod-security", webhook, causes)
	}
	for _, c := range causes {
		if !strings.HasPrefix(c, "SecurityDefaultsMissing@") {
			t.Errorf("unexpected cause %s", c)
		}
	}
	stated := sampleObject(t, schema.GroupResource{Resource: "pods"}, ns, "stated")
	if err := e.client.Create(ctx, stated, client.DryRunAll); err != nil {
		t.Errorf("a pod that states every default was refused: %v", err)
	}
	if after := failOpenCount(t, e, "pod-security-defaults"); after <= before {
		t.Errorf("apiserver_admission_webhook_fail_open_count for pod-security-defaults did not grow (%v -> %v)", before, after)
	}
}

// labelGuardSample is a stored ConfigMap and a client of a service account
// allowed to update it, which an OperatorHarness claims (with the
// selections managed, only harnessed accounts' label changes are sent).
type labelGuardSample struct {
	cm      *corev1.ConfigMap
	account client.Client
}

func placeLabelGuardSample(t *testing.T, e *env) labelGuardSample {
	t.Helper()
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name()+"/label-guard", nil, nil)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded", Labels: map[string]string{"app": "db"}}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "default"}},
	}
	for _, obj := range []client.Object{cm, role, binding} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	h := operatorHarness(t, "e2e-label-guard", "e2e.gatehouse.dev/label-guard", ns, []any{"default"}, false)
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })
	cfg := rest.CopyConfig(e.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":default"}
	account, err := client.New(cfg, client.Options{Scheme: e.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return labelGuardSample{cm: cm, account: account}
}

// check runs while gatehouse is down: a service account's UPDATE that
// changes a label fails closed (on the guard's entry or its group's); its
// UPDATE of data only, and a person's label change, are never sent.
func (g labelGuardSample) check(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	def, _ := route.Lookup("harness-labels-guard")
	relabelled := g.cm.DeepCopy()
	relabelled.Labels["app"] = "web"
	err := g.account.Update(ctx, relabelled.DeepCopy(), client.DryRunAll)
	if got := failedWebhook(err); !slices.Contains(entriesOf(def), got) {
		t.Errorf("a service account's label change while gatehouse is down: want a failed call of one of %v, got %v", entriesOf(def), err)
	}
	data := g.cm.DeepCopy()
	data.Data = map[string]string{"k": "v"}
	if err := g.account.Update(ctx, data, client.DryRunAll); err != nil {
		t.Errorf("a service account's data-only UPDATE was sent to gatehouse: %v", err)
	}
	if err := e.client.Update(ctx, relabelled.DeepCopy(), client.DryRunAll); err != nil {
		t.Errorf("a cluster admin's label change was sent to gatehouse: %v", err)
	}
}
