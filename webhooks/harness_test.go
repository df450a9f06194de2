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
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
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
		if o["kind"] == gvk.Kind && o["apiVersion"] == gvk.GroupVersion().String() && slices.Contains(clusterstate.IndexValues(gvk, index, o), value) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (m memState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, _ := m.Objects(gvk, index, value)
	var names []string
	for _, o := range objs {
		names = append(names, route.ObjectKey(o))
	}
	return names, nil
}

func (m memState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	for _, o := range m.objects {
		if o["kind"] == gvk.Kind && o["apiVersion"] == gvk.GroupVersion().String() && route.ObjectKey(o) == name {
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
	return harnessServerWith(t, func(*configv1alpha1.ServerConfig) {})
}

// harnessServerWith is harnessServer with change applied to the default
// configuration.
func harnessServerWith(t *testing.T, change func(*configv1alpha1.ServerConfig)) *testServer {
	t.Helper()
	state := harnessServerState()
	opts := optionsWith(t, change)
	opts.ClusterState, opts.Namespaces = state, state
	return startServerWith(t, opts)
}

// harnessServerState holds the mariadb harness (Enforce, scopeKey,
// injecting the proxy into mariadb-operator's account operator) and the
// namespace tenant, which carries scopeKey.
func harnessServerState() memState {
	return memState{
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
	if changed, findings := proxy.Inject(want, route.OptionsFromConfig(cfg).Proxy); !changed || len(findings) > 0 {
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
// harnessed service account's UPDATE that strips it is denied by the
// fail-closed guard; harness-labels itself no longer takes UPDATEs, and the
// guard takes none by a person (400 when sent anyway).
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
	update := func(path, user string) (int, *admissionv1.AdmissionResponse) {
		return ts.post(t, path, "application/json", asUser(t, user, reviewBodyIn(t, "l2", admissionv1.Update, [3]string{"scheduling.k8s.io", "v1", "PriorityClass"},
			[3]string{"scheduling.k8s.io", "v1", "priorityclasses"}, "", "p", pc, old)))
	}
	if _, r := update("/validate/harness-labels-guard", operatorAccount); !deniedWith(r, "ScopeLabelChanged", "metadata.labels["+scopeKey+"]", "harness-labels-guard") {
		t.Errorf("harnessed account stripping the label: allowed=%v %s", r.Allowed, fmtCauses(r))
	}
	if _, r := update("/validate/harness-labels-guard", "system:serviceaccount:apps:deployer"); !r.Allowed {
		t.Errorf("another account's update was denied: %s", fmtCauses(r))
	}
	if _, r := update("/validate/harness-labels-guard", "alice"); r.Allowed || r.Result == nil || r.Result.Code != 400 {
		t.Errorf("a person's update sent anyway: allowed=%v %+v, want 400", r.Allowed, r.Result)
	}
	if _, r := update("/mutate/harness-labels", operatorAccount); r.Allowed || r.Result == nil || r.Result.Code != 400 {
		t.Errorf("an UPDATE sent to harness-labels: allowed=%v %+v, want 400", r.Allowed, r.Result)
	}
}

const operatorAccount = "system:serviceaccount:mariadb-operator:operator"

// asUser sets the review's userInfo.username.
func asUser(t *testing.T, user string, body []byte) []byte {
	t.Helper()
	var review map[string]any
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	review["request"].(map[string]any)["userInfo"] = map[string]any{"username": user}
	return mustJSON(t, review)
}

// withSubresource sets the review's subResource.
func withSubresource(t *testing.T, sub string, body []byte) []byte {
	t.Helper()
	var review map[string]any
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	review["request"].(map[string]any)["subResource"] = sub
	return mustJSON(t, review)
}

// deniedWith reports whether r is a 422 denial with exactly one cause, code
// at field, attributed to webhook.
func deniedWith(r *admissionv1.AdmissionResponse, code, field, webhook string) bool {
	return !r.Allowed && r.Result != nil && r.Result.Code == 422 && r.Result.Details != nil && len(r.Result.Details.Causes) == 1 &&
		string(r.Result.Details.Causes[0].Type) == code && r.Result.Details.Causes[0].Field == field &&
		strings.HasSuffix(r.Result.Details.Causes[0].Message, "(gatehouse "+webhook+")")
}

// labelledPod is a pod in namespace tenant as the API server sends it on a
// pods/status UPDATE: the whole object, status included.
func labelledPod(podLabels map[string]any) map[string]any {
	meta := map[string]any{"name": "worker", "namespace": "tenant"}
	if podLabels != nil {
		meta["labels"] = podLabels
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": meta,
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}},
		"status": map[string]any{"phase": "Running"},
	}
}

// TestHTTPHarnessLabelsStatusSubresource: a harnessed service account that
// strips the scope label, or adds it with another namespace's value, through
// pods/status is denied by harness-labels-guard, on its own path and on the
// combined validating-fail endpoint (where the member runs and answers with
// its own attribution and audit codes); a status UPDATE that leaves the
// labels alone, or a person's, is allowed.
func TestHTTPHarnessLabelsStatusSubresource(t *testing.T) {
	ts := harnessServer(t)
	statusUpdate := func(uid, user string, obj, old map[string]any) []byte {
		return withSubresource(t, "status", asUser(t, user,
			reviewBodyIn(t, uid, admissionv1.Update, podKind, podResource, "tenant", "worker", obj, old)))
	}
	stored := labelledPod(map[string]any{scopeKey: "tenant", "app": "db"})
	for _, path := range []string{"/validate/harness-labels-guard", "/validate/combined-fail"} {
		t.Run(path, func(t *testing.T) {
			_, r := ts.post(t, path, "application/json", statusUpdate("s1", operatorAccount, labelledPod(map[string]any{"app": "db"}), stored))
			if !deniedWith(r, "ScopeLabelChanged", "metadata.labels["+scopeKey+"]", "harness-labels-guard") {
				t.Errorf("label stripped through pods/status: allowed=%v %s", r.Allowed, fmtCauses(r))
			}
			if path == "/validate/combined-fail" && r.AuditAnnotations["harness-labels-guard.codes"] != "ScopeLabelChanged" {
				t.Errorf("audit annotations %v, want harness-labels-guard.codes", r.AuditAnnotations)
			}
			_, r = ts.post(t, path, "application/json", statusUpdate("s2", operatorAccount,
				labelledPod(map[string]any{scopeKey: "elsewhere"}), labelledPod(nil)))
			if !deniedWith(r, "ScopeLabelAdded", "metadata.labels["+scopeKey+"]", "harness-labels-guard") {
				t.Errorf("label added with another value through pods/status: allowed=%v %s", r.Allowed, fmtCauses(r))
			}
			_, r = ts.post(t, path, "application/json", statusUpdate("s3", operatorAccount,
				labelledPod(map[string]any{scopeKey: "tenant"}), labelledPod(nil)))
			if !r.Allowed {
				t.Errorf("label added with the namespace's value through pods/status: %s", fmtCauses(r))
			}
		})
	}
	// On the combined endpoint a status UPDATE that changes no label, or
	// one by a person, runs no member at all.
	unchanged := labelledPod(map[string]any{scopeKey: "tenant", "app": "db"})
	unchanged["status"] = map[string]any{"phase": "Succeeded"}
	for _, body := range [][]byte{
		statusUpdate("s4", operatorAccount, unchanged, stored),
		statusUpdate("s5", "alice", labelledPod(nil), stored),
	} {
		if _, r := ts.post(t, "/validate/combined-fail", "application/json", body); !r.Allowed || len(r.AuditAnnotations) != 0 {
			t.Errorf("combined: allowed=%v annotations %v %s", r.Allowed, r.AuditAnnotations, fmtCauses(r))
		}
	}
}

// rolesFailing is a StateReader whose view of RBAC roles fails (an unsynced
// or failed informer) while the rest answers.
type rolesFailing struct{ memState }

func (r rolesFailing) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	if gvk == harness.ClusterRoleGVK || gvk == harness.RoleGVK {
		return nil, clusterstate.ErrNotSynced
	}
	return r.memState.Objects(gvk, index, value)
}

// TestHTTPHarnessBindings: a harness binding cluster-admin cluster-wide is
// denied at the binding, through the roles in the server's state; a binding
// to a harmless role passes; a missing role and an unreadable view of roles
// deny, also on an UPDATE that does not touch the binding (they never
// ratchet), while an unchanged dangerous binding ratchets to a warning.
func TestHTTPHarnessBindings(t *testing.T) {
	roles := []map[string]any{
		clusterstate.TrimForLookups(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "cluster-admin", "annotations": map[string]any{"a": "b"}},
			"rules":    []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}}}}),
		clusterstate.TrimForLookups(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "reader"},
			"rules":    []any{map[string]any{"apiGroups": []any{"k8s.mariadb.com"}, "resources": []any{"*"}, "verbs": []any{"get"}}}}),
	}
	harnessBinding := func(role string) map[string]any {
		return map[string]any{"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "metadata": map[string]any{"name": "h"},
			"spec": map[string]any{
				"scopeToLabel":        "requires.helmetica.io/h",
				"operator":            map[string]any{"namespace": "h", "serviceAccounts": []any{"op"}},
				"clusterRoleBindings": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}},
			}}
	}
	kind, resource := [3]string{"vshn.net", "v1", "OperatorHarness"}, [3]string{"vshn.net", "v1", "operatorharnesses"}
	relabelled := func(obj map[string]any) map[string]any {
		var out map[string]any
		if err := json.Unmarshal(mustJSON(t, obj), &out); err != nil {
			t.Fatal(err)
		}
		out["metadata"].(map[string]any)["labels"] = map[string]any{"team": "db"}
		return out
	}
	serve := func(state route.StateReader) *testServer {
		opts := route.OptionsFromConfig(configv1alpha1.Default())
		opts.ClusterState = state
		return startServerWith(t, opts)
	}
	ts := serve(memState{objects: roles})
	failing := serve(rolesFailing{memState{objects: roles}})
	const at = "spec.clusterRoleBindings[0]"
	for _, tc := range []struct {
		name    string
		ts      *testServer
		op      admissionv1.Operation
		obj     map[string]any
		old     map[string]any
		allowed bool
		cause   string
	}{
		{"cluster-admin", ts, admissionv1.Create, harnessBinding("cluster-admin"), nil, false, "HarnessGrantDangerous@" + at},
		{"harmless role", ts, admissionv1.Create, harnessBinding("reader"), nil, true, ""},
		{"missing role", ts, admissionv1.Create, harnessBinding("later"), nil, false, "HarnessRoleNotFound@" + at},
		{"roles unreadable", failing, admissionv1.Create, harnessBinding("reader"), nil, false, "StateUnavailable@" + at},
		{"unchanged dangerous binding ratchets", ts, admissionv1.Update, relabelled(harnessBinding("cluster-admin")), harnessBinding("cluster-admin"), true, ""},
		{"unchanged missing role does not ratchet", ts, admissionv1.Update, relabelled(harnessBinding("later")), harnessBinding("later"), false, "HarnessRoleNotFound@" + at},
		{"unreadable roles do not ratchet", failing, admissionv1.Update, relabelled(harnessBinding("reader")), harnessBinding("reader"), false, "StateUnavailable@" + at},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old any
			if tc.old != nil {
				old = tc.old
			}
			_, r := tc.ts.post(t, "/validate/harness", "application/json", reviewBody(t, "b1", tc.op, kind, resource, tc.obj, old))
			if r.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v: %s", r.Allowed, tc.allowed, fmtCauses(r))
			}
			if tc.cause == "" {
				return
			}
			if r.Result == nil || r.Result.Details == nil || len(r.Result.Details.Causes) != 1 ||
				string(r.Result.Details.Causes[0].Type)+"@"+r.Result.Details.Causes[0].Field != tc.cause {
				t.Errorf("causes %s, want %s", fmtCauses(r), tc.cause)
			}
		})
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
	opts := route.OptionsFromConfig(configv1alpha1.Default())
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
	proxy.Inject(want, route.OptionsFromConfig(cfg).Proxy)
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
	opts := route.OptionsFromConfig(configv1alpha1.Default())
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
	opts := route.OptionsFromConfig(configv1alpha1.Default())
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

// TestHTTPHarnessInExemptNamespace: an OperatorHarness (either group) that
// injects the proxy into a namespace exempt from gatehouse's webhooks (by
// name, gatehouse's own included, or by label) is denied with
// ProxyNamespaceExempt at spec.operator.namespace, on its own path and on
// the combined entry, and without the fail-open warning that told the user
// to label the namespace; in Warn it is admitted with the finding as a
// warning. Not injecting there, or injecting elsewhere, is allowed. An
// UPDATE of a harness stored so ratchets into a warning.
func TestHTTPHarnessInExemptNamespace(t *testing.T) {
	kind, resource := [3]string{"vshn.net", "v1", "OperatorHarness"}, [3]string{"vshn.net", "v1", "operatorharnesses"}
	helmKind, helmResource := [3]string{"helmetica.io", "v1", "OperatorHarness"}, [3]string{"helmetica.io", "v1", "operatorharnesses"}
	harnessIn := func(namespace string, inject bool) map[string]any {
		return map[string]any{
			"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "metadata": map[string]any{"name": "h-" + namespace},
			"spec": map[string]any{"scopeToLabel": "example.com/" + namespace,
				"operator": map[string]any{"namespace": namespace, "serviceAccounts": []any{"operator"}, "injectProxyConfiguration": inject}},
		}
	}
	state := memState{namespaces: map[string]map[string]string{"infra": {"example.com/tier": "infra"}, "operators": {"team": "a"}}}
	serve := func(mode configv1alpha1.Mode) *testServer {
		opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) {
			c.Exemptions.NamespaceLabels = []configv1alpha1.NamespaceLabel{{Key: "example.com/tier", Operator: configv1alpha1.LabelOpIn, Values: []string{"infra"}}}
			if mode != configv1alpha1.ModeEnforce {
				c.Webhooks = map[string]configv1alpha1.Webhook{"harness": {Mode: mode}}
			}
		})
		opts.ClusterState, opts.Namespaces = state, state
		return startServerWith(t, opts)
	}
	ts := serve(configv1alpha1.ModeEnforce)
	const field = "spec.operator.namespace"
	for _, ns := range []string{"kube-system", "kube-node-lease", "gatehouse-system", "infra"} {
		for _, path := range []string{"/validate/harness", "/validate/combined-fail"} {
			_, r := ts.post(t, path, "application/json", reviewBodyIn(t, "x", admissionv1.Create, kind, resource, "", "h-"+ns, harnessIn(ns, true), nil))
			if !deniedWith(r, string(proxy.ProxyNamespaceExempt), field, "harness") {
				t.Errorf("%s, injecting into %s: allowed=%v %s", path, ns, r.Allowed, fmtCauses(r))
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, string(proxy.ProxyNamespaceFailsOpen)) {
					t.Errorf("%s, injecting into %s: warns %q, which cannot help", path, ns, w)
				}
			}
		}
		// An UPDATE that leaves the namespace as stored ratchets.
		_, r := ts.post(t, "/validate/harness", "application/json", reviewBodyIn(t, "u", admissionv1.Update, kind, resource, "", "h-"+ns, harnessIn(ns, true), harnessIn(ns, true)))
		if !r.Allowed || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], string(proxy.ProxyNamespaceExempt)) {
			t.Errorf("unchanged harness injecting into %s: allowed=%v warnings %q %s", ns, r.Allowed, r.Warnings, fmtCauses(r))
		}
	}
	helm := helmeticaHarness("helm-kube-system", "example.com/helm", "kube-system", "operator")
	if _, r := ts.post(t, "/validate/harness", "application/json", reviewBodyIn(t, "x", admissionv1.Create, helmKind, helmResource, "", "helm-kube-system", helm, nil)); !deniedWith(r, string(proxy.ProxyNamespaceExempt), field, "harness") {
		t.Errorf("helmetica harness injecting into kube-system: allowed=%v %s", r.Allowed, fmtCauses(r))
	}
	for name, h := range map[string]map[string]any{
		"not injecting into kube-system": harnessIn("kube-system", false),
		"injecting into operators":       harnessIn("operators", true),
	} {
		_, r := ts.post(t, "/validate/harness", "application/json", reviewBodyIn(t, "x", admissionv1.Create, kind, resource, "", name, h, nil))
		if !r.Allowed {
			t.Errorf("%s: %s", name, fmtCauses(r))
		}
	}
	// In Warn: admitted, saying why.
	_, r := serve(configv1alpha1.ModeWarn).post(t, "/validate/harness", "application/json", reviewBodyIn(t, "x", admissionv1.Create, kind, resource, "", "h", harnessIn("kube-system", true), nil))
	if !r.Allowed || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], string(proxy.ProxyNamespaceExempt)+" at "+field) {
		t.Errorf("in Warn: allowed=%v warnings %q", r.Allowed, r.Warnings)
	}
}
