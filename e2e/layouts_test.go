package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// renderLayout renders a layout of gatehouse's webhook configurations
// pointed at the local gatehouse, with the CA bundle cainjector wrote into
// the installed configurations.
func renderLayout(t testing.TB, e *env, layout string, caBundle any) []*unstructured.Unstructured {
	t.Helper()
	return renderManifests(t, e, route.ManifestOptions{Layout: layout}, caBundle)
}

// installedCABundle is the CA bundle cainjector wrote into the installed
// configurations (installedLayout), for layouts rendered beside them.
func installedCABundle(installed []*unstructured.Unstructured) any {
	hooks, _, _ := unstructured.NestedSlice(installed[0].Object, "webhooks")
	caBundle, _, _ := unstructured.NestedFieldNoCopy(hooks[0].(map[string]any), "clientConfig", "caBundle")
	return caBundle
}

// renderManifests renders o (its layout, switches and URL, by default the
// local gatehouse's; the rest is the suite's) as renderLayout does.
func renderManifests(t testing.TB, e *env, o route.ManifestOptions, caBundle any) []*unstructured.Unstructured {
	t.Helper()
	if o.URL == "" {
		o.URL = e.local.Gatehouse.URL
	}
	o.Namespace, o.Options = localcluster.Namespace, route.OptionsFromConfig(configv1alpha1.Default())
	rendered, err := render.WebhookConfigurations(o)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.DecodeManifests(rendered)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		hooks, ok, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		if !ok {
			continue
		}
		for _, h := range hooks {
			_ = unstructured.SetNestedField(h.(map[string]any), caBundle, "clientConfig", "caBundle")
		}
		_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
	}
	return objs
}

// installLayout replaces gatehouse's admission configuration by objs and
// waits until a dry run of probe is denied with want in the message.
func installLayout(t testing.TB, c client.Client, all [][]*unstructured.Unstructured, objs []*unstructured.Unstructured, probe *unstructured.Unstructured, want string) {
	t.Helper()
	ctx := context.Background()
	for _, set := range all {
		for _, obj := range set {
			if err := c.Delete(ctx, obj.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj.DeepCopy()); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), want), nil
	}); err != nil {
		t.Fatalf("the layout is not in effect after a minute (want %q, last probe: %v)", want, last)
	}
}

// verdictOf is an admission's outcome as a client sees it: allowed or
// denied, each denying finding's code and field, and each warning's
// webhook, code and field.
func verdictOf(err error, warnings []string) string {
	var parts []string
	if err == nil {
		parts = append(parts, "allowed")
	} else {
		var status *apierrors.StatusError
		if !errors.As(err, &status) {
			return "error: " + err.Error()
		}
		s := status.Status()
		var findings []string
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				findings = append(findings, string(c.Type)+"@"+c.Field)
			}
		}
		sort.Strings(findings)
		parts = append(parts, fmt.Sprintf("denied %d %s %v", s.Code, s.Reason, findings))
	}
	var warned []string
	for _, w := range warnings {
		// "gatehouse <webhook>: <Code> at <field>: <message>"
		head, _, _ := strings.Cut(w, ": ")
		rest := strings.TrimPrefix(w, head+": ")
		code, field, _ := strings.Cut(rest, " at ")
		field, _, _ = strings.Cut(field, ": ")
		warned = append(warned, head+" "+code+"@"+field)
	}
	sort.Strings(warned)
	if len(warned) > 0 {
		parts = append(parts, "warnings "+strings.Join(warned, ", "))
	}
	return strings.Join(parts, "; ")
}

// TestEveryLayoutGivesTheSameVerdict replays every golden fixture (as dry
// runs, but pods with ephemeral containers), and Pods at the edges of the PSC
// defaults, through the real API server in each layout of gatehouse's
// admission configuration: separate, combined, in-process (the combined
// entries narrowed away from what CEL proves SCOPE, SA and PSC allow), and
// in-process with PSC's defaults as a MutatingAdmissionPolicy
// (docs/in-process.md). Each object must be allowed or denied alike, with
// the same finding codes and fields, the same warnings and, for a Pod, the
// same security contexts, in all four; and the in-process layouts must send
// each member they narrow fewer requests than the combined one, read from
// gatehouse's decision counter, or the API server narrowed nothing.
func TestEveryLayoutGivesTheSameVerdict(t *testing.T) {
	const inProcessWithPolicy = "in-process --defaults-policy"
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("renders the layouts for the local gatehouse's URL")
	}
	ctx := context.Background()

	// The API server serves admission policies v1 (the managed-labels
	// policy's; MutatingAdmissionPolicy is v1 from 1.36).
	disco, err := discovery.NewDiscoveryClientForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := disco.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range resources.APIResources {
		served[r.Name] = true
	}
	for _, r := range []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"} {
		if !served[r] {
			t.Errorf("the API server does not serve admissionregistration.k8s.io/v1 %s", r)
		}
	}

	installed, err := installedLayout(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	caBundle := installedCABundle(installed)
	layouts := []struct {
		name string
		objs []*unstructured.Unstructured
		// probeDeniedBy is in the probe's denial once the layout is in effect.
		probeDeniedBy string
	}{
		{route.LayoutSeparate, renderLayout(t, e, route.LayoutSeparate, caBundle), `"secret-scope.gatehouse.dev" denied`},
		{route.LayoutCombined, renderLayout(t, e, route.LayoutCombined, caBundle), `"validating-fail.gatehouse.dev" denied`},
		{route.LayoutInProcess, renderLayout(t, e, route.LayoutInProcess, caBundle), `"validating-fail.gatehouse.dev" denied`},
		{inProcessWithPolicy, renderManifests(t, e, route.ManifestOptions{Layout: route.LayoutInProcess, DefaultsPolicy: true}, caBundle),
			`"validating-fail.gatehouse.dev" denied`},
	}
	var all [][]*unstructured.Unstructured
	for _, l := range layouts {
		all = append(all, l.objs)
	}
	probe, err := localcluster.ReadManifests(repo + "/policies/scope/testdata/fail/pod-scope-empty-entry.yaml")
	if err != nil || len(probe) != 1 {
		t.Fatalf("reading the probe fixture: %v", err)
	}
	probe[0].SetNamespace(testNamespace(t, e, "layout-probe", probe[0], nil))
	// The suite installed the default layout; put it back.
	t.Cleanup(func() {
		installLayout(t, e.client, all, installed, probe[0], "gatehouse secret-scope")
	})

	fixtures := loadFixtures(t)
	verdicts := map[string][]string{}        // fixture -> one verdict per layout
	generated := map[string][]string{}       // security context pod -> one verdict per layout
	calls := map[string]map[string]float64{} // layout -> narrowed member -> decisions
	narrowedMembers := func() map[string]float64 {
		fams := scrape(t, e.local.Gatehouse)
		n := map[string]float64{}
		for _, w := range render.InProcessWebhooks() {
			n[w] = metricValue(fams, "gatehouse_webhook_decisions_total", "webhook", w)
		}
		return n
	}
	for _, l := range layouts {
		installLayout(t, e.client, all, l.objs, probe[0], l.probeDeniedBy)
		before := narrowedMembers()
		// One client and two namespaces per layout: a client per fixture
		// would discover the API anew each time, and a namespace per
		// fixture was most of the test's time.
		c, warnings := clientWithWarnings(t, e)
		shared := map[bool]string{
			false: sharedNamespace(t, e, "layout-"+l.name, fixtures, nil),
			true:  sharedNamespace(t, e, "layout-"+l.name+"-opt-in", fixtures, optInLabel),
		}
		for _, f := range fixtures {
			warnings.reset()
			verdicts[f.name] = append(verdicts[f.name], admitFixture(t, e, c, warnings, f, l.name, shared[f.optIn]))
		}
		for _, pod := range securityContextPods() {
			warnings.reset()
			f := fixture{name: pod.GetName(), object: pod}
			generated[f.name] = append(generated[f.name], admitFixture(t, e, c, warnings, f, l.name, shared[true]))
		}
		calls[l.name] = map[string]float64{}
		for w, n := range narrowedMembers() {
			calls[l.name][w] = n - before[w]
		}
	}
	defaulted := 0
	for name, v := range generated {
		for i := range layouts[1:] {
			if v[i+1] != v[0] {
				t.Errorf("%s:\n  %-10s %s\n  %-10s %s", name, layouts[0].name, v[0], layouts[i+1].name, v[i+1])
			}
		}
		if strings.HasPrefix(v[0], "allowed") {
			defaulted++
		}
	}
	if defaulted == 0 {
		t.Errorf("none of %d security context pods was admitted: their comparison proves nothing", len(generated))
	}
	denied := 0
	for _, f := range fixtures {
		v := verdicts[f.name]
		if strings.HasPrefix(v[0], "denied") {
			denied++
		}
		for i := range layouts[1:] {
			if v[i+1] != v[0] {
				t.Errorf("%s:\n  %-10s %s\n  %-10s %s", f.name, layouts[0].name, v[0], layouts[i+1].name, v[i+1])
			}
		}
		if (f.outcome == "fail") != strings.HasPrefix(v[0], "denied") {
			t.Errorf("%s: a %s fixture got %s", f.name, f.outcome, v[0])
		}
	}
	t.Logf("%d fixtures, %d denied, and %d security context pods, %d admitted, the same verdict and defaults in the layouts %s; decisions of the members the in-process layout narrows: %v",
		len(fixtures), denied, len(generated), defaulted, strings.Join([]string{layouts[0].name, layouts[1].name, layouts[2].name, layouts[3].name}, ", "), calls)
	if denied == 0 || denied == len(fixtures) {
		t.Fatalf("%d of %d fixtures denied: the comparison proves nothing", denied, len(fixtures))
	}
	for _, w := range render.InProcessWebhooks() {
		if in, combined := calls[inProcessWithPolicy][w], calls[route.LayoutCombined][w]; in >= combined {
			t.Errorf("the in-process layout with the defaults policy sent %s %v requests, the combined one %v: the API server narrowed nothing", w, in, combined)
		}
	}
	// Without the policy every Pod still needs the defaults webhook, which
	// then fills in what lets the guard be narrowed away.
	for _, w := range []string{"secret-scope", "service-account", "pod-security"} {
		if in, combined := calls[route.LayoutInProcess][w], calls[route.LayoutCombined][w]; in >= combined {
			t.Errorf("the in-process layout sent %s %v requests, the combined one %v: the API server narrowed nothing", w, in, combined)
		}
	}
}

// installedLayout reads the suite's installed webhook configurations.
func installedLayout(ctx context.Context, e *env) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		live := &unstructured.Unstructured{}
		live.SetAPIVersion("admissionregistration.k8s.io/v1")
		live.SetKind(kind)
		if err := e.client.Get(ctx, client.ObjectKey{Name: localcluster.WebhookConfigName}, live); err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": live.GetAPIVersion(), "kind": kind}}
		obj.SetName(live.GetName())
		obj.SetLabels(live.GetLabels())
		obj.SetAnnotations(live.GetAnnotations())
		hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
		_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
		out = append(out, obj)
	}
	return out, nil
}

// sharedNamespace creates a namespace with the ServiceAccounts that any
// fixture's pods name (the ServiceAccount admission plugin rejects a pod
// whose ServiceAccount does not exist).
func sharedNamespace(t *testing.T, e *env, seed string, fixtures []fixture, labels map[string]string) string {
	t.Helper()
	ns := testNamespace(t, e, seed, nil, labels)
	accounts := map[string]bool{}
	for _, f := range fixtures {
		for _, path := range [][]string{{"spec"}, {"spec", "template", "spec"}, {"template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
			for _, field := range []string{"serviceAccountName", "serviceAccount"} {
				if name, ok, _ := unstructured.NestedString(f.object.Object, append(path, field)...); ok && name != "" {
					accounts[name] = true
				}
			}
		}
	}
	for name := range accounts {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := e.client.Create(context.Background(), sa); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return ns
}

// admitFixture admits a fixture through the API server and returns the
// verdict: as a dry run in ns (or in the contract's own namespace), which
// runs every admission step and stores nothing; a pod with ephemeral
// containers is created for real in a namespace of its own and the
// containers added through their subresource, as
// TestFixturesThroughTheAPIServer does.
func admitFixture(t *testing.T, e *env, c client.Client, warnings *warningRecorder, f fixture, layout, ns string) string {
	t.Helper()
	ctx := context.Background()
	obj := f.object.DeepCopy()
	ephemeral, hasEphemeral, _ := unstructured.NestedSlice(obj.Object, "spec", "ephemeralContainers")
	var err error
	switch {
	case hasEphemeral:
		var labels map[string]string
		if f.optIn {
			labels = optInLabel
		}
		obj.SetNamespace(testNamespace(t, e, layout+"/"+f.name, obj, labels))
		unstructured.RemoveNestedField(obj.Object, "spec", "ephemeralContainers")
		if err = c.Create(ctx, obj); err == nil {
			if err = unstructured.SetNestedSlice(obj.Object, ephemeral, "spec", "ephemeralContainers"); err != nil {
				t.Fatal(err)
			}
			err = c.SubResource("ephemeralcontainers").Update(ctx, obj)
		}
	case f.namespace != "":
		applyState(t, e, f.state)
		obj.SetNamespace(f.namespace)
		err = c.Create(ctx, obj, client.DryRunAll)
	default:
		obj.SetNamespace(ns)
		err = c.Create(ctx, obj, client.DryRunAll)
	}
	v := verdictOf(err, slices.Clone(warnings.all()))
	if err == nil && obj.GetKind() == "Pod" {
		v += "; " + securityContexts(t, obj)
	}
	return v
}

// securityContexts are a Pod's security contexts as the API server
// returned it (what the PSC defaults filled in, whoever filled them in), as
// JSON with sorted keys.
func securityContexts(t *testing.T, pod *unstructured.Unstructured) string {
	t.Helper()
	out := map[string]any{}
	out["pod"], _, _ = unstructured.NestedFieldNoCopy(pod.Object, "spec", "securityContext")
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		items, _, _ := unstructured.NestedSlice(pod.Object, "spec", list)
		var scs []any
		for _, item := range items {
			sc, _, _ := unstructured.NestedFieldNoCopy(item.(map[string]any), "securityContext")
			scs = append(scs, sc)
		}
		out[list] = scs
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return "security contexts " + string(raw)
}

// securityContextPods are Pods at the edges of the PSC defaults, for the
// layouts to default alike (the in-process layout's MutatingAdmissionPolicy
// against the webhook): pod and container security contexts absent,
// partial, privileged, adding CAP_SYS_ADMIN, with every seccomp type, in
// init and regular containers, user namespaces and Windows pods (which the
// API server may refuse: then alike too).
func securityContextPods() []*unstructured.Unstructured {
	pods := []map[string]any{
		nil, {}, {"runAsUser": int64(2000)}, {"runAsNonRoot": false}, {"seccompProfile": map[string]any{"type": "Unconfined"}},
		{"seccompProfile": map[string]any{"type": "Localhost", "localhostProfile": "profiles/audit.json"}},
		{"fsGroup": int64(5), "fsGroupChangePolicy": "Always", "runAsGroup": int64(7)},
	}
	containers := []map[string]any{
		nil, {}, {"runAsNonRoot": false, "runAsUser": int64(0)}, {"privileged": true}, {"capabilities": map[string]any{"add": []any{"CAP_SYS_ADMIN"}}},
		{"capabilities": map[string]any{"add": []any{"NET_ADMIN"}}}, {"capabilities": map[string]any{"drop": []any{"NET_RAW"}}},
		{"seccompProfile": map[string]any{"type": "RuntimeDefault"}}, {"allowPrivilegeEscalation": true}, {"readOnlyRootFilesystem": true},
	}
	var out []*unstructured.Unstructured
	for i, pod := range pods {
		for j, container := range containers {
			for _, variant := range []string{"plain", "init", "user-namespace", "windows"} {
				c := func(name string) map[string]any {
					out := map[string]any{"name": name, "image": "registry.example/app:1"}
					if container != nil {
						out["securityContext"] = runtime.DeepCopyJSONValue(container)
					}
					return out
				}
				spec := map[string]any{"containers": []any{c("app"), map[string]any{"name": "side", "image": "registry.example/side:1"}}}
				if pod != nil {
					spec["securityContext"] = runtime.DeepCopyJSONValue(pod)
				}
				switch variant {
				case "init":
					spec["initContainers"] = []any{c("init")}
				case "user-namespace":
					spec["hostUsers"] = false
				case "windows":
					spec["os"] = map[string]any{"name": "windows"}
				}
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": spec}}
				obj.SetName(fmt.Sprintf("psc-%d-%d-%s", i, j, variant))
				out = append(out, obj)
			}
		}
	}
	return out
}

// TestDefaultsPolicyAdmitsWhileGatehouseIsDown: with the in-process layout
// and --defaults-policy pointed at an address where nothing listens, a Pod
// of an opted-in namespace whose defaults the policy computes (the corpus's
// Pod: three containers and a secret volume SCOPE allows) is still
// defaulted and admitted, with no call; one it leaves to the webhook (a
// privileged container) is refused, because the guard fails closed.
func TestDefaultsPolicyAdmitsWhileGatehouseIsDown(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("replaces the installed webhook configurations, which only the local control plane's suite owns")
	}
	installed, err := installedLayout(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	caBundle := installedCABundle(installed)
	down := renderManifests(t, e, route.ManifestOptions{URL: "https://127.0.0.1:1", Layout: route.LayoutInProcess, DefaultsPolicy: true}, caBundle)
	probe, err := localcluster.ReadManifests(repo + "/policies/scope/testdata/fail/pod-scope-empty-entry.yaml")
	if err != nil || len(probe) != 1 {
		t.Fatalf("reading the probe fixture: %v", err)
	}
	ns := testNamespace(t, e, "defaults-policy-down", nil, optInLabel)
	probe[0].SetNamespace(ns)
	all := [][]*unstructured.Unstructured{installed, down}
	t.Cleanup(func() { installLayout(t, e.client, all, installed, probe[0], "gatehouse secret-scope") })
	installLayout(t, e.client, all, down, probe[0], "failed calling webhook")

	c, _ := clientWithWarnings(t, e)
	ctx := context.Background()
	pod := perf.LifecycleObject(ns, 0)
	// The policy's informer may trail the webhook configurations.
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		obj := pod.DeepCopy()
		last = c.Create(ctx, obj, client.DryRunAll)
		if last == nil {
			pod = obj
		}
		return last == nil, nil
	}); err != nil {
		t.Fatalf("the Pod is not admitted while gatehouse is down: %v", last)
	}
	if got := securityContexts(t, pod); !strings.Contains(got, `"runAsUser":1001`) || !strings.Contains(got, `"drop":["ALL"]`) {
		t.Errorf("the Pod was admitted without its defaults: %s", got)
	}
	privileged := perf.LifecycleObject(ns, 0)
	containers, _, _ := unstructured.NestedSlice(privileged.Object, "spec", "containers")
	containers[0].(map[string]any)["securityContext"] = map[string]any{"privileged": true}
	_ = unstructured.SetNestedSlice(privileged.Object, containers, "spec", "containers")
	if err := c.Create(ctx, privileged, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("a privileged Pod while gatehouse is down: %v, want the guard's call to fail", err)
	}
}
