package webhooks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	evanjsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
)

// memState is an in-memory StateReader and NamespaceReader over a few
// objects, using the same index functions as the server's caches.
type memState struct {
	objects    []map[string]any
	namespaces map[string]map[string]string
}

func (m memState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range m.objects {
		if o["kind"] == gvk.Kind && o["apiVersion"] == gvk.GroupVersion().String() && slices.Contains(IndexValues(gvk, index, o), value) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (m memState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, _ := m.Objects(gvk, index, value)
	var names []string
	for _, o := range objs {
		names = append(names, ObjectKey(o))
	}
	return names, nil
}

func (m memState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	for _, o := range m.objects {
		if o["kind"] == gvk.Kind && o["apiVersion"] == gvk.GroupVersion().String() && ObjectKey(o) == name {
			return true, nil
		}
	}
	return false, nil
}

func (m memState) NamespaceLabels(name string) (map[string]string, error) {
	return m.namespaces[name], nil
}

const scopeKey = "requires.helmetica.io/operator-mariadb"

func harnessServer(t *testing.T) *testServer {
	t.Helper()
	state := memState{
		objects: []map[string]any{{
			"apiVersion": "vshn.net/v1", "kind": "OperatorHarness",
			"metadata": map[string]any{"name": "mariadb"},
			"spec": map[string]any{
				"scopeToLabel": scopeKey,
				"operator": map[string]any{
					"namespace": "mariadb-operator", "serviceAccounts": []any{"operator"}, "injectProxyConfiguration": true,
				},
			},
		}},
		namespaces: map[string]map[string]string{"tenant": {scopeKey: "tenant"}},
	}
	opts := OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Namespaces = state, state
	return startServerWith(t, opts)
}

// pluginPod is a pod as the ServiceAccount admission plugin leaves it.
func pluginPod(account string) map[string]any {
	mount := map[string]any{"name": "kube-api-access-x7k2p", "mountPath": proxy.MountPath, "readOnly": true}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "operator", "namespace": "mariadb-operator"},
		"spec": map[string]any{
			"serviceAccountName": account,
			"initContainers":     []any{map[string]any{"name": "setup", "image": "i", "volumeMounts": []any{mount}}},
			"containers": []any{
				map[string]any{"name": "manager", "image": "i", "volumeMounts": []any{mount}, "futureField": "kept"},
				map[string]any{"name": "metrics", "image": "i", "volumeMounts": []any{mount}},
			},
			"volumes": []any{map[string]any{"name": "kube-api-access-x7k2p", "projected": map[string]any{"sources": []any{}}}},
		},
	}
}

func applyPatch(t *testing.T, obj map[string]any, patch []byte) map[string]any {
	t.Helper()
	p, err := evanjsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(mustJSON(t, obj))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHTTPHarnessProxy: a harnessed pod is patched into exactly what
// proxy.Inject makes of it, keeping unknown fields; the patched pod gets no
// second patch; an unlisted account's pod none at all.
func TestHTTPHarnessProxy(t *testing.T) {
	ts := harnessServer(t)
	pod := pluginPod("operator")
	_, r := ts.post(t, "/mutate/harness-proxy", "application/json",
		reviewBodyIn(t, "p1", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", pod, nil))
	if !r.Allowed || len(r.Patch) == 0 {
		t.Fatalf("want an allowed patch, got allowed=%v %+v", r.Allowed, r.Result)
	}
	patched := applyPatch(t, pod, r.Patch)
	want := pluginPod("operator")
	cfg := configv1alpha1.Default()
	if changed, findings := proxy.Inject(want, cfg.ProxyConfig()); !changed || len(findings) > 0 {
		t.Fatal("Inject did not change the plugin's pod")
	}
	if got, exp := string(mustJSON(t, patched)), string(mustJSON(t, want)); got != exp {
		t.Errorf("patched pod\n%s\nwant\n%s", got, exp)
	}
	_, again := ts.post(t, "/mutate/harness-proxy", "application/json",
		reviewBodyIn(t, "p2", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", patched, nil))
	if !again.Allowed || len(again.Patch) != 0 {
		t.Errorf("second run: allowed=%v patch %s, want no patch", again.Allowed, again.Patch)
	}
	_, other := ts.post(t, "/mutate/harness-proxy", "application/json",
		reviewBodyIn(t, "p3", admissionv1.Create, podKind, podResource, "mariadb-operator", "exporter", pluginPod("exporter"), nil))
	if !other.Allowed || len(other.Patch) != 0 {
		t.Errorf("unlisted account: allowed=%v patch %s, want no patch", other.Allowed, other.Patch)
	}
}

// TestHTTPHarnessLabels: the namespace's scope label is added on CREATE; a
// harnessed service account's UPDATE that strips it is denied; a person's
// UPDATE never reaches the webhook (400 when sent anyway).
func TestHTTPHarnessLabels(t *testing.T) {
	ts := harnessServer(t)
	cmKind, cmResource := [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "tenant"}}
	_, r := ts.post(t, "/mutate/harness-labels", "application/json",
		reviewBodyIn(t, "l1", admissionv1.Create, cmKind, cmResource, "tenant", "c", cm, nil))
	if !r.Allowed || len(r.Patch) == 0 {
		t.Fatalf("want an allowed patch, got allowed=%v %+v", r.Allowed, r.Result)
	}
	labelled := applyPatch(t, cm, r.Patch)
	if got := labelled["metadata"].(map[string]any)["labels"].(map[string]any)[scopeKey]; got != "tenant" {
		t.Errorf("label %s = %v, want the namespace's value", scopeKey, got)
	}

	pc := map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "p"}, "value": 1}
	old := map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": "p", "labels": map[string]any{scopeKey: "true"}}, "value": 1}
	update := func(user string) (int, *admissionv1.AdmissionResponse) {
		var review map[string]any
		if err := json.Unmarshal(reviewBodyIn(t, "l2", admissionv1.Update, [3]string{"scheduling.k8s.io", "v1", "PriorityClass"},
			[3]string{"scheduling.k8s.io", "v1", "priorityclasses"}, "", "p", pc, old), &review); err != nil {
			t.Fatal(err)
		}
		review["request"].(map[string]any)["userInfo"] = map[string]any{"username": user}
		return ts.post(t, "/mutate/harness-labels", "application/json", mustJSON(t, review))
	}
	if _, r := update("system:serviceaccount:mariadb-operator:operator"); r.Allowed || r.Result == nil || r.Result.Details == nil || len(r.Result.Details.Causes) != 1 ||
		r.Result.Details.Causes[0].Type != "ScopeLabelChanged" || r.Result.Details.Causes[0].Field != "metadata.labels["+scopeKey+"]" {
		t.Errorf("harnessed account stripping the label: allowed=%v %s", r.Allowed, fmtCauses(r))
	}
	if _, r := update("system:serviceaccount:apps:deployer"); !r.Allowed {
		t.Errorf("another account's update was denied: %s", fmtCauses(r))
	}
	if _, r := update("alice"); r.Allowed || r.Result == nil || r.Result.Code != 400 {
		t.Errorf("a person's update sent anyway: allowed=%v %+v, want 400", r.Allowed, r.Result)
	}
}

// helmeticaHarnessServer serves with a helmetica.io/v1 OperatorHarness (as
// helmetica's own sample, scopeToLabel and operator only) instead of a
// vshn.net one.
func helmeticaHarnessServer(t *testing.T) *testServer {
	t.Helper()
	state := memState{
		objects:    []map[string]any{helmeticaHarness("mariadb-operator", scopeKey, "mariadb-operator", "operator")},
		namespaces: map[string]map[string]string{"tenant": {scopeKey: "tenant"}},
	}
	opts := OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Namespaces = state, state
	return startServerWith(t, opts)
}

func helmeticaHarness(name, label, namespace, account string) map[string]any {
	return map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "OperatorHarness",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"scopeToLabel": label,
			"operator": map[string]any{
				"namespace": namespace, "serviceAccounts": []any{account}, "injectProxyConfiguration": true,
			},
		},
	}
}

// TestHTTPHelmeticaHarnessProxyAndLabels: a helmetica.io harness injects the
// proxy and scopes labels exactly as a vshn.net one does.
func TestHTTPHelmeticaHarnessProxyAndLabels(t *testing.T) {
	ts := helmeticaHarnessServer(t)
	pod := pluginPod("operator")
	_, r := ts.post(t, "/mutate/harness-proxy", "application/json",
		reviewBodyIn(t, "h1", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", pod, nil))
	if !r.Allowed || len(r.Patch) == 0 {
		t.Fatalf("want an allowed patch, got allowed=%v %+v", r.Allowed, r.Result)
	}
	want := pluginPod("operator")
	cfg := configv1alpha1.Default()
	proxy.Inject(want, cfg.ProxyConfig())
	if got, exp := string(mustJSON(t, applyPatch(t, pod, r.Patch))), string(mustJSON(t, want)); got != exp {
		t.Errorf("patched pod\n%s\nwant\n%s", got, exp)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "tenant"}}
	_, l := ts.post(t, "/mutate/harness-labels", "application/json",
		reviewBodyIn(t, "h2", admissionv1.Create, [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}, "tenant", "c", cm, nil))
	if !l.Allowed || len(l.Patch) == 0 {
		t.Fatalf("want the scope label added, got allowed=%v %+v", l.Allowed, l.Result)
	}
}

// TestHTTPHelmeticaHarnessReview: the harness webhook reviews a
// helmetica.io harness's scopeToLabel and operator against the harnesses of
// both groups; the same harness on UPDATE does not clash with itself, and a
// vshn.net harness of the same name is another harness.
func TestHTTPHelmeticaHarnessReview(t *testing.T) {
	kind, resource := [3]string{"helmetica.io", "v1", "OperatorHarness"}, [3]string{"helmetica.io", "v1", "operatorharnesses"}
	vshn := map[string]any{
		"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "metadata": map[string]any{"name": "redis"},
		"spec": map[string]any{"scopeToLabel": "requires.helmetica.io/redis", "operator": map[string]any{"namespace": "redis-operator"}},
	}
	self := helmeticaHarness("mariadb-operator", scopeKey, "mariadb-operator", "operator")
	state := memState{objects: []map[string]any{self, vshn}}
	opts := OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState = state
	ts := startServerWith(t, opts)
	post := func(obj, old map[string]any) *admissionv1.AdmissionResponse {
		op := admissionv1.Create
		if old != nil {
			op = admissionv1.Update
		}
		name := obj["metadata"].(map[string]any)["name"].(string)
		_, r := ts.post(t, "/validate/harness", "application/json", reviewBodyIn(t, "h", op, kind, resource, "", name, obj, old))
		return r
	}
	if r := post(self, self); !r.Allowed || len(r.Warnings) > 0 {
		t.Errorf("unchanged helmetica harness: allowed=%v warnings=%q %s", r.Allowed, r.Warnings, fmtCauses(r))
	}
	clash := helmeticaHarness("redis", "requires.helmetica.io/redis", "redis-operator", "other")
	if r := post(clash, nil); r.Allowed || !strings.Contains(fmtCauses(r), "HarnessScopeLabelClaimed") {
		t.Errorf("helmetica harness reusing a vshn.net harness's label: allowed=%v %s", r.Allowed, fmtCauses(r))
	}
	withMode := helmeticaHarness("x", "", "x-operator", "x")
	withMode["spec"].(map[string]any)["mode"] = "Report"
	if r := post(withMode, nil); r.Allowed || !strings.Contains(fmtCauses(r), "HarnessScopeLabelInvalid") {
		t.Errorf("a helmetica harness without scopeToLabel is Enforce whatever it says: allowed=%v %s", r.Allowed, fmtCauses(r))
	}
}

// TestHTTPSourceUpdateUnchanged: an UPDATE of an unchanged helmetica
// source, against a view that holds it (as the server's cache does), is
// allowed without a warning; another namespace's copy is denied.
func TestHTTPSourceUpdateUnchanged(t *testing.T) {
	kind, resource := [3]string{"helmetica.io", "v1", "CustomResourceDefinitionSource"}, [3]string{"helmetica.io", "v1", "customresourcedefinitionsources"}
	src := func(namespace string) map[string]any {
		return map[string]any{
			"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
			"metadata": map[string]any{"name": "v26.mariadb-crds", "namespace": namespace},
			"spec": map[string]any{
				"reference": map[string]any{"kind": "OCIRepository", "name": "mariadb-crds-v26"},
				"provides":  []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb"}}},
				"manages":   []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb", "as": "mariadb-a"}}},
			},
		}
	}
	opts := OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState = memState{objects: []map[string]any{src("default")}}
	ts := startServerWith(t, opts)
	_, r := ts.post(t, "/validate/crd-source", "application/json",
		reviewBodyIn(t, "s1", admissionv1.Update, kind, resource, "default", "v26.mariadb-crds", src("default"), src("default")))
	if !r.Allowed || len(r.Warnings) > 0 {
		t.Errorf("unchanged source: allowed=%v warnings=%q %s", r.Allowed, r.Warnings, fmtCauses(r))
	}
	_, r = ts.post(t, "/validate/crd-source", "application/json",
		reviewBodyIn(t, "s2", admissionv1.Create, kind, resource, "team-b", "v26.mariadb-crds", src("team-b"), nil))
	causes := fmtCauses(r)
	if r.Allowed || !strings.Contains(causes, "CRDSourceProvidesClaimed") || !strings.Contains(causes, "CRDSourceManagesClaimed") {
		t.Errorf("copy in another namespace: allowed=%v %s", r.Allowed, causes)
	}
}
