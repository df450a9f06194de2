package webhooks

import (
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
)

// TestOverrideLimitsNeverRatchet: through the served webhook, an UPDATE that
// keeps a content finding of the old object ratchets to a warning, while one
// that keeps a document past a limit, or unparseable, is denied as a CREATE
// is: those findings are about the review, not a value.
func TestOverrideLimitsNeverRatchet(t *testing.T) {
	ts := startServer(t)
	cmKind, cmResource := [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}
	configMap := func(doc string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "unbounded-component-overrides", "namespace": "unbounded-system"},
			"data":     map[string]any{"o.yaml": "apiVersion: " + overrides.APIVersion + "\n" + doc, "team": "platform"}}
	}
	deep := "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {updateStrategy: " +
		strings.Repeat("{a: ", 120) + "1" + strings.Repeat("}", 120) + "}}}\n"
	for _, tc := range []struct {
		name     string
		doc      string
		code     policies.Code
		ratchets bool
	}{
		{"content finding", "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {hostNetwork: true}}}}}\n",
			overrides.OverridePathProtected, true},
		{"too deep", deep, overrides.OverrideDocumentTooDeep, false},
		{"past the parser's depth", "overrides: " + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + "\n",
			overrides.OverrideDocumentTooDeep, false},
		{"not YAML", "overrides: [\n", overrides.OverrideDocumentInvalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, obj := configMap(tc.doc), configMap(tc.doc)
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"edited": "yes"}
			_, r := ts.post(t, "/validate/component-overrides", "application/json",
				reviewBodyIn(t, "u", admissionv1.Update, cmKind, cmResource, "unbounded-system", "unbounded-component-overrides", obj, old))
			if r.Allowed != tc.ratchets {
				t.Fatalf("allowed %v, want %v: %+v", r.Allowed, tc.ratchets, r.Result)
			}
			if !tc.ratchets && (r.Result == nil || !strings.Contains(fmt.Sprint(r.Result), string(tc.code))) {
				t.Errorf("the denial does not carry %s: %+v", tc.code, r.Result)
			}
		})
	}
}
