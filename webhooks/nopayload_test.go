package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestNoPayloadLeaves plants marker values in every place an object can carry
// a secret or a user-chosen value, sends valid and invalid objects through
// every webhook over HTTPS, and proves that no response, warning, log line or
// metric label contains a marker (docs/contracts.md §0.3).
func TestNoPayloadLeaves(t *testing.T) {
	ts := startServer(t)
	const marker = "PLANTED-MARKER"
	m := func(i string) string { return marker + "-" + i }

	pod := secretPod(map[string]any{
		"secrets.kubedoop.dev/class":                   m("class"),
		"secrets.kubedoop.dev/scope":                   "service=" + m("svc") + "=x,,node=" + m("node") + "," + m("unknownkey") + "=v",
		"secrets.kubedoop.dev/format":                  m("format"),
		"secrets.kubedoop.dev/tlsPKCS12Password":       m("password"),
		"secrets.kubedoop.dev/autoTlsCertLifetime":     m("lifetime"),
		"secrets.kubedoop.dev/autoTlsCertJitterFactor": m("jitter"),
	})
	spec := pod["spec"].(map[string]any)
	spec["serviceAccountName"] = m("sa")
	spec["containers"] = []any{map[string]any{
		"name": "app", "image": m("image"), "command": []any{m("command")},
		"env": []any{map[string]any{"name": "PASSWORD", "value": m("envvalue")}},
	}}
	pod["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": "prod", "uid": "1", "controller": true,
	}}

	product := map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster",
		"metadata": map[string]any{"name": "prod", "namespace": "team-a"},
		"spec": map[string]any{
			"clusterConfig": map[string]any{"authentication": []any{map[string]any{"tls": map[string]any{
				"secretClass": m("secretclass"),
				"scope":       map[string]any{"services": []any{m("a") + ",node", m("b") + "=c", ""}, "listenerVolumes": []any{m("lv") + ",pod"}},
			}}}},
			"nameNode": map[string]any{"podOverrides": map[string]any{"spec": map[string]any{
				"serviceAccountName": m("override"), "serviceAccount": m("deprecated"),
			}}},
		},
	}
	productKind := [3]string{"hdfs.kubedoop.dev", "v1alpha1", "HdfsCluster"}
	productResource := [3]string{"hdfs.kubedoop.dev", "v1alpha1", "hdfsclusters"}

	overridesCM := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "unbounded-component-overrides", "namespace": "unbounded-system"},
		"data": map[string]any{"o.yaml": "apiVersion: overrides.unbounded-cloud.io/v1alpha1\noverrides:\n- component: storage\n  kind: DaemonSet\n" +
			"  patch: {spec: {template: {spec: {hostNetwork: true, containers: [{name: run, image: " + m("image2") + ", args: [" + m("arg") + "], " +
			"env: [{name: TOKEN, value: " + m("env2") + "}], command: null}]}}}}\n" +
			"  extraArgs: {run: [" + m("extra") + "]}\n",
			"broken.yaml": "key: [" + m("yaml") + "\n"},
	}
	cmKind := [3]string{"", "v1", "ConfigMap"}
	cmResource := [3]string{"", "v1", "configmaps"}

	var answers bytes.Buffer
	send := func(path string, body []byte) {
		resp, err := ts.client.Post(ts.base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		answers.Write(raw)
	}
	denied := 0
	for _, path := range []string{"/validate/secret-scope", "/validate/service-account"} {
		for _, req := range [][]byte{
			reviewBody(t, "p1", admissionv1.Create, podKind, podResource, pod, nil),
			reviewBody(t, "p2", admissionv1.Update, podKind, podResource, pod, pod),
			reviewBody(t, "c1", admissionv1.Create, productKind, productResource, product, nil),
			reviewBody(t, "c2", admissionv1.Update, productKind, productResource, product, secretPod(nil)),
			// a mismatched review whose object still carries the markers
			reviewBody(t, "bad", admissionv1.Create, [3]string{"apps", "v1", "Deployment"}, podResource, pod, nil),
		} {
			send(path, req)
		}
		_, r := ts.post(t, path, "application/json", reviewBody(t, "check", admissionv1.Create, productKind, productResource, product, nil))
		if !r.Allowed {
			denied++
		}
	}
	for _, req := range [][]byte{
		reviewBodyIn(t, "o1", admissionv1.Create, cmKind, cmResource, "unbounded-system", "unbounded-component-overrides", overridesCM, nil),
		reviewBodyIn(t, "o2", admissionv1.Update, cmKind, cmResource, "unbounded-system", "unbounded-component-overrides", overridesCM, overridesCM),
	} {
		send("/validate/component-overrides", req)
	}
	if !strings.Contains(answers.String(), "OverridePathProtected") || !strings.Contains(answers.String(), "OverrideDocumentInvalid") {
		t.Fatalf("the override answers lack the expected codes; the test would prove nothing")
	}
	if denied != 2 {
		t.Fatalf("the planted product CR must be denied by both webhooks, denied by %d", denied)
	}
	if !strings.Contains(answers.String(), "ScopeNameHasDelimiter") || !strings.Contains(answers.String(), "ServiceAccountMismatch") {
		t.Fatalf("the answers do not carry the expected codes; the test would prove nothing:\n%s", answers.String())
	}

	metricsText := &bytes.Buffer{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		metricsText.WriteString(f.String())
	}
	if testutil.CollectAndCount(decisions) == 0 {
		t.Fatal("no decisions were counted")
	}
	for what, text := range map[string]string{"responses": answers.String(), "logs": logBuffer.String(), "metrics": metricsText.String()} {
		if len(text) == 0 {
			t.Fatalf("%s are empty; the test would prove nothing", what)
		}
		if i := strings.Index(text, marker); i >= 0 {
			lo, hi := max(0, i-200), min(len(text), i+100)
			t.Errorf("%s contain a planted value: ...%s...", what, text[lo:hi])
		}
	}
	if !strings.Contains(logBuffer.String(), `"decision"`) {
		t.Error("no decision log lines were written")
	}
}

// TestDecisionMetric checks the per-webhook counter's labels.
func TestDecisionMetric(t *testing.T) {
	ts := startServer(t)
	before := testutil.ToFloat64(decisions.WithLabelValues("secret-scope", DecisionDenied, "Enforce", "ScopeEntryEmpty"))
	ts.post(t, "/validate/secret-scope", "application/json",
		reviewBody(t, "m", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations(",")), nil))
	after := testutil.ToFloat64(decisions.WithLabelValues("secret-scope", DecisionDenied, "Enforce", "ScopeEntryEmpty"))
	if after != before+1 {
		t.Fatalf("counter went from %v to %v", before, after)
	}
}

// TestNoPayloadLeavesFromTheLabelGuard plants marker label values in
// UPDATEs that harness-labels-guard denies (a scope label changed, added with
// another value, removed; on the main resource and
// through pods/status, separately and combined) and proves that no answer or
// log line contains one.
func TestNoPayloadLeavesFromTheLabelGuard(t *testing.T) {
	ts := harnessServer(t)
	const marker = "PLANTED-LABEL-MARKER"
	before := len(logBuffer.String())
	var answers bytes.Buffer
	codes := map[string]bool{}
	for i, c := range []struct{ obj, old map[string]any }{
		{labelledPod(map[string]any{scopeKey: marker + "-new", "app": marker + "-app"}), labelledPod(map[string]any{scopeKey: "tenant"})},
		{labelledPod(map[string]any{scopeKey: marker + "-added"}), labelledPod(map[string]any{"app": marker + "-app"})},
		{labelledPod(map[string]any{"app": marker + "-app"}), labelledPod(map[string]any{scopeKey: marker + "-old"})},
	} {
		for _, sub := range []string{"", "status"} {
			for _, path := range []string{"/validate/harness-labels-guard", "/validate/combined-fail"} {
				body := asUser(t, operatorAccount, reviewBodyIn(t, fmt.Sprintf("g%d", i), admissionv1.Update, podKind, podResource, "tenant", "worker", c.obj, c.old))
				if sub != "" {
					body = withSubresource(t, sub, body)
				}
				resp, err := ts.client.Post(ts.base+path, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answers.Write(raw)
				var review admissionv1.AdmissionReview
				if err := json.Unmarshal(raw, &review); err != nil || review.Response == nil || review.Response.Allowed || review.Response.Result.Details == nil {
					t.Fatalf("%s %s case %d: not a denial: %s", path, sub, i, raw)
				}
				for _, cause := range review.Response.Result.Details.Causes {
					codes[string(cause.Type)] = true
				}
			}
		}
	}
	if !codes["ScopeLabelChanged"] || !codes["ScopeLabelAdded"] {
		t.Fatalf("codes %v: the test would prove nothing", codes)
	}
	logs := logBuffer.String()[before:]
	for what, text := range map[string]string{"responses": answers.String(), "logs": logs} {
		if len(text) == 0 {
			t.Fatalf("%s are empty; the test would prove nothing", what)
		}
		if i := strings.Index(text, marker); i >= 0 {
			lo, hi := max(0, i-200), min(len(text), i+100)
			t.Errorf("%s contain a planted value: ...%s...", what, text[lo:hi])
		}
	}
}
