package webhooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// FuzzUndecodableNeverAllowed feeds reviews of built-in kinds to every
// webhook and combined endpoint. Property: an object of a built-in kind that
// does not decode into its Go type is never allowed, whatever the webhook's
// failure policy (the old walkers skipped what was not a list and allowed).
func FuzzUndecodableNeverAllowed(f *testing.F) {
	seedFromFixtures(f)
	pod := undecodablePod()
	f.Add(reviewBody(f, "seed", admissionv1.Create, podKind, podResource, pod, nil))
	for _, field := range []string{"volumes", "initContainers", "ephemeralContainers", "securityContext", "serviceAccountName", "hostUsers"} {
		p := secretPod(scopeAnnotations("pod"))
		p["spec"].(map[string]any)[field] = "x"
		f.Add(reviewBody(f, "seed", admissionv1.Create, podKind, podResource, p, nil))
	}
	f.Add([]byte(`{"request":{"uid":"x","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"operation":"CREATE","object":{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","securityContext":{"runAsUser":"0"}}]}}}}}}`))
	f.Add([]byte(`{"request":{"uid":"x","kind":{"version":"v1","kind":"ConfigMap"},"resource":{"version":"v1","resource":"configmaps"},"namespace":"unbounded-system","name":"unbounded-component-overrides","operation":"CREATE","object":{"apiVersion":"v1","kind":"ConfigMap","data":{"a":1}}}}`))
	// Every namespace opts in to everything, so every member runs.
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	state := everyNamespaceLabelled{opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value, opts.HarnessedNamespaceLabel: "true"}
	opts.ClusterState, opts.Namespaces = memState{}, state
	hooks := Build(opts, func(string) bool { return true })
	combined := BuildCombined(hooks, opts)
	f.Fuzz(func(t *testing.T, body []byte) {
		var in admissionv1.AdmissionReview
		if json.Unmarshal(body, &in) != nil || in.Request == nil {
			return
		}
		gvk := schema.GroupVersionKind(in.Request.Kind)
		if !apidefaults.IsBuiltin(gvk) {
			return
		}
		objectDecodes := true
		for _, raw := range [][]byte{in.Request.Object.Raw, in.Request.OldObject.Raw} {
			if len(raw) > 0 {
				if _, err := apidefaults.Decode(gvk, raw); err != nil {
					objectDecodes = false
				}
			}
		}
		if objectDecodes {
			return
		}
		for _, w := range hooks {
			if r := serveFuzz(t, w, body); r.Allowed {
				t.Fatalf("%s allowed a %s that does not decode into its type", w.Name, gvk.Kind)
			}
		}
		// A combined endpoint answers only for its members: a request
		// none of them takes (which the API server never sends it) is a
		// plain allow, decoded by nobody.
		req := admission.Request{AdmissionRequest: *in.Request}
		for _, c := range combined {
			h := c.Admission.Handler.(*endpoint).chain
			if !slices.ContainsFunc(h.members, func(m member) bool { return m.SelectsRequest(&req, opts) }) {
				continue
			}
			rec := httptest.NewRecorder()
			httpReq := httptest.NewRequest(http.MethodPost, c.Path, bytes.NewReader(body))
			httpReq.Header.Set("Content-Type", "application/json")
			c.Admission.ServeHTTP(rec, httpReq)
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("%s: answer is not an AdmissionReview: %v", c.Name, err)
			}
			if out.Response.Allowed {
				t.Fatalf("%s allowed a %s that does not decode into its type", c.Name, gvk.Kind)
			}
		}
	})
}

// everyNamespaceLabelled answers the same labels for every namespace.
type everyNamespaceLabelled map[string]string

func (l everyNamespaceLabelled) NamespaceLabels(string) (map[string]string, error) { return l, nil }
