package webhooks

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const scopeField = "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]"

func TestHTTPDenialIs422WithCauses(t *testing.T) {
	ts := startServer(t)
	body := reviewBody(t, "uid-deny", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,,node")), nil)
	status, r := ts.post(t, "/validate/secret-scope", "application/json", body)
	if status != http.StatusOK {
		t.Fatalf("HTTP status %d", status)
	}
	if r.UID != "uid-deny" {
		t.Errorf("UID not echoed: %q", r.UID)
	}
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusUnprocessableEntity || r.Result.Reason != "Invalid" {
		t.Fatalf("want a 422 Invalid denial, got allowed=%v result=%+v", r.Allowed, r.Result)
	}
	causes := r.Result.Details.Causes
	if len(causes) != 1 || causes[0].Type != "ScopeEntryEmpty" || causes[0].Field != scopeField {
		t.Fatalf("causes: %s", fmtCauses(r))
	}
	if r.Result.Details.Kind != "Pod" || r.Result.Details.Name != "web" {
		t.Errorf("details name the wrong object: %+v", r.Result.Details)
	}
	if !strings.Contains(r.Result.Message, scopeField) {
		t.Errorf("message does not name the field path: %s", r.Result.Message)
	}
	if !strings.HasPrefix(causes[0].Message, "ScopeEntryEmpty: ") || !strings.HasSuffix(causes[0].Message, " (gatehouse secret-scope)") {
		t.Errorf("cause message must lead with the code and name the webhook: %q", causes[0].Message)
	}
	if got := r.AuditAnnotations[AuditAnnotationCodes]; got != "ScopeEntryEmpty" {
		t.Errorf("audit annotation %q", got)
	}
}

func TestHTTPWarningsReachTheClient(t *testing.T) {
	ts := startServer(t)
	body := reviewBody(t, "uid-warn", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,future=x")), nil)
	_, r := ts.post(t, "/validate/secret-scope", "application/json", body)
	if !r.Allowed {
		t.Fatalf("denied: %s", fmtCauses(r))
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "gatehouse secret-scope: ScopeUnknownKey at "+scopeField+": ") {
		t.Fatalf("warnings: %q", r.Warnings)
	}
}

func TestHTTPBadRequests(t *testing.T) {
	ts := startServer(t)
	valid := secretPod(scopeAnnotations("pod"))
	cases := []struct {
		name        string
		path        string
		contentType string
		body        []byte
		wantCode    int32
	}{
		{"malformed JSON", "/validate/secret-scope", "application/json", []byte(`{"apiVersion": "admission.k8s.io/v1", "request": {`), http.StatusBadRequest},
		{"wrong content type", "/validate/secret-scope", "text/plain", reviewBody(t, "u", admissionv1.Create, podKind, podResource, valid, nil), http.StatusBadRequest},
		{"body over the limit", "/validate/secret-scope", "application/json", bytes.Repeat([]byte(" "), 8<<20), http.StatusRequestEntityTooLarge},
		{"kind and resource disagree", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Create, [3]string{"apps", "v1", "Deployment"}, podResource, valid, nil), http.StatusBadRequest},
		{"object disagrees with kind", "/validate/service-account", "application/json",
			reviewBody(t, "u", admissionv1.Create, [3]string{"apps", "v1", "StatefulSet"}, [3]string{"apps", "v1", "statefulsets"}, valid, nil), http.StatusBadRequest},
		{"resource not intercepted", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Create, [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}, map[string]any{"kind": "ConfigMap"}, nil), http.StatusBadRequest},
		{"operation not intercepted", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Delete, podKind, podResource, valid, nil), http.StatusBadRequest},
		{"object missing", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Create, podKind, podResource, nil, nil), http.StatusBadRequest},
		{"object not a JSON object", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Create, podKind, podResource, []any{1, 2}, nil), http.StatusBadRequest},
		{"a ConfigMap other than the override ConfigMap", "/validate/component-overrides", "application/json",
			reviewBody(t, "u", admissionv1.Create, [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}, map[string]any{"kind": "ConfigMap", "apiVersion": "v1"}, nil), http.StatusBadRequest},
		{"UPDATE without oldObject", "/validate/secret-scope", "application/json",
			reviewBody(t, "u", admissionv1.Update, podKind, podResource, valid, nil), http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, r := ts.post(t, tc.path, tc.contentType, tc.body)
			if r.Allowed {
				t.Fatal("allowed")
			}
			if r.Result == nil || r.Result.Code != tc.wantCode {
				t.Fatalf("want code %d, got %+v", tc.wantCode, r.Result)
			}
		})
	}
}

func TestHTTPUpdateRatchetsUnchangedValues(t *testing.T) {
	ts := startServer(t)
	bad := secretPod(scopeAnnotations("pod,,node"))
	relabelled := secretPod(scopeAnnotations("pod,,node"))
	relabelled["metadata"].(map[string]any)["labels"] = map[string]any{"team": "a"}
	changed := secretPod(scopeAnnotations("node,,pod"))

	_, r := ts.post(t, "/validate/secret-scope", "application/json",
		reviewBody(t, "u1", admissionv1.Update, podKind, podResource, relabelled, bad))
	if !r.Allowed {
		t.Fatalf("an unchanged offending value must be ratcheted: %s", fmtCauses(r))
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "ScopeEntryEmpty") {
		t.Errorf("ratcheted finding must stay visible as a warning: %q", r.Warnings)
	}

	_, r = ts.post(t, "/validate/secret-scope", "application/json",
		reviewBody(t, "u2", admissionv1.Update, podKind, podResource, changed, bad))
	if r.Allowed {
		t.Fatal("a changed offending value must be denied")
	}
}

// TestHTTPNoClusterStateDenies: a webhook that needs cluster state and has
// none (here: no state reader at all) denies with StateUnavailable; it never
// allows without its view.
func TestHTTPNoClusterStateDenies(t *testing.T) {
	ts := startServer(t)
	group := map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
		"metadata": map[string]any{"name": "mariadb"},
		"spec":     map[string]any{"crds": []any{map[string]any{"name": "backups.k8s.mariadb.com"}}},
	}
	_, r := ts.post(t, "/validate/dependency-group", "application/json",
		reviewBodyIn(t, "s1", admissionv1.Create, [3]string{"helmetica.io", "v1", "DependencyGroup"}, [3]string{"helmetica.io", "v1", "dependencygroups"}, "", "mariadb", group, nil))
	if r.Allowed || r.Result == nil || r.Result.Details == nil || len(r.Result.Details.Causes) == 0 || r.Result.Details.Causes[0].Type != "StateUnavailable" {
		t.Fatalf("want a StateUnavailable denial, got allowed=%v %+v", r.Allowed, r.Result)
	}
}

// TestHTTPUpdateNeverRatchetsAnUnavailableView: on UPDATE the old object
// "has" the same StateUnavailable finding (no view, no evidence), which once
// downgraded the denial to a warning, so a CRD could be claimed or a harness
// relabelled while the view was down. Findings about the view never
// ratchet, through the per-webhook and the combined endpoint alike.
func TestHTTPUpdateNeverRatchetsAnUnavailableView(t *testing.T) {
	ts := startServer(t)
	group := func(crds ...string) map[string]any {
		list := []any{}
		for _, c := range crds {
			list = append(list, map[string]any{"name": c})
		}
		return map[string]any{
			"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
			"metadata": map[string]any{"name": "mariadb"},
			"spec":     map[string]any{"crds": list},
		}
	}
	harness := func(label string) map[string]any {
		return map[string]any{
			"apiVersion": "vshn.net/v1", "kind": "OperatorHarness",
			"metadata": map[string]any{"name": "mariadb"},
			"spec": map[string]any{
				"scopeToLabel": label,
				"operator":     map[string]any{"namespace": "mariadb-operator", "serviceAccounts": []any{"operator"}},
			},
		}
	}
	cases := []struct {
		name, path     string
		kind, resource [3]string
		obj, old       map[string]any
	}{
		{"DependencyGroup adds a CRD", "/validate/dependency-group",
			[3]string{"helmetica.io", "v1", "DependencyGroup"}, [3]string{"helmetica.io", "v1", "dependencygroups"},
			group("backups.k8s.mariadb.com", "clusters.k8s.mariadb.com"), group("backups.k8s.mariadb.com")},
		{"OperatorHarness switches its label", "/validate/harness",
			[3]string{"vshn.net", "v1", "OperatorHarness"}, [3]string{"vshn.net", "v1", "operatorharnesses"},
			harness("requires.helmetica.io/other"), harness("requires.helmetica.io/operator-mariadb")},
	}
	for _, c := range cases {
		for _, path := range []string{c.path, "/validate/combined-fail"} {
			t.Run(c.name+" "+path, func(t *testing.T) {
				_, r := ts.post(t, path, "application/json",
					reviewBodyIn(t, "v1", admissionv1.Update, c.kind, c.resource, "", "mariadb", c.obj, c.old))
				if r.Allowed {
					t.Fatalf("an UPDATE judged without the view was admitted (warnings %q)", r.Warnings)
				}
				if r.Result == nil || r.Result.Details == nil || !hasCause(r.Result.Details.Causes, "StateUnavailable") {
					t.Fatalf("want a StateUnavailable denial, got %+v", r.Result)
				}
			})
		}
	}
}

func hasCause(causes []metav1.StatusCause, code string) bool {
	for _, c := range causes {
		if string(c.Type) == code {
			return true
		}
	}
	return false
}
