package webhooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	evanjsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// FuzzHandler feeds random AdmissionReview bodies to every webhook's HTTP
// handler, for panics, OOMs and stack overflows (as cert-manager's
// FuzzValidate does). Properties: every answer is a well-formed
// AdmissionReview; no answer is a recovered panic (500); an allowed answer
// echoes the request's UID; and every mutating webhook, sent the object its
// own patch produced, patches nothing more (docs/contracts.md §0.5).
func FuzzHandler(f *testing.F) {
	seedFromFixtures(f)
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"resource":{"resource":"pods","version":"v1"},"operation":"CREATE","object":{"spec":{"volumes":[{"ephemeral":{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/scope":",="}}}}}]}}}}`))
	f.Add([]byte(`{"request":{"uid":"x","kind":{"group":"a.kubedoop.dev","kind":"X","version":"v1"},"resource":{"group":"a.kubedoop.dev","resource":"xs","version":"v1"},"operation":"UPDATE","object":{"a":[[[[{"podOverrides":{"spec":{"serviceAccount":1}}}]]]]},"oldObject":{}}}`))
	// harness-labels-guard: a pods/status UPDATE by a service account that
	// changes a label.
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"resource":{"resource":"pods","version":"v1"},"subResource":"status","operation":"UPDATE",` +
		`"userInfo":{"username":"system:serviceaccount:ns:sa"},"object":{"metadata":{"labels":{"a":"b"}}},"oldObject":{"metadata":{"labels":{"a":"c"}},"status":{}}}}`))
	hooks := Build(route.OptionsFromConfig(configv1alpha1.Default()), func(string) bool { return true })
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, w := range hooks {
			r := serveFuzz(t, w, body)
			if r.Allowed {
				var in admissionv1.AdmissionReview
				if err := json.Unmarshal(body, &in); err != nil || in.Request == nil || in.Request.UID != r.UID {
					t.Fatalf("%s: allowed an answer that does not echo a request UID", w.Name)
				}
			}
			if w.Type == route.Mutating && r.Allowed && len(r.Patch) > 0 {
				again := serveFuzz(t, w, withPatchedObject(t, w.Name, body, r.Patch))
				if len(again.Patch) > 0 {
					t.Fatalf("%s patched its own output again: %s", w.Name, again.Patch)
				}
			}
		}
	})
}

// serveFuzz sends body to w's HTTP handler and checks the answer is a
// well-formed AdmissionReview that is not a recovered panic (500).
func serveFuzz(t *testing.T, w *Webhook, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, w.Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w.Admission.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("%s: answer is not an AdmissionReview: %v: %s", w.Name, err, rec.Body.String())
	}
	r := review.Response
	if r.Result != nil && r.Result.Code == http.StatusInternalServerError {
		t.Fatalf("%s: recovered panic or internal error: %s", w.Name, r.Result.Message)
	}
	return r
}

// withPatchedObject is body with request.object replaced by the object
// patch produces from it, as the API server would send it on reinvocation.
func withPatchedObject(t *testing.T, webhook string, body, patch []byte) []byte {
	t.Helper()
	var review map[string]json.RawMessage
	var request map[string]json.RawMessage
	if json.Unmarshal(body, &review) != nil || json.Unmarshal(review["request"], &request) != nil {
		t.Fatalf("%s patched a request that is not a JSON object", webhook)
	}
	decoded, err := evanjsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("%s answered a patch that does not decode: %v", webhook, err)
	}
	patched, err := decoded.Apply(request["object"])
	if err != nil {
		t.Fatalf("%s answered a patch that does not apply to the object: %v", webhook, err)
	}
	request["object"] = patched
	if review["request"], err = json.Marshal(request); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// seedFromFixtures wraps every policy fixture in a CREATE review.
func seedFromFixtures(f *testing.F) {
	for _, body := range fixtureReviews(f) {
		f.Add(body)
	}
}

// fixtureReviews is every policy fixture wrapped in a CREATE review. It
// fails when the pattern finds none, so that a moved testdata directory
// cannot leave a test without the fixtures. (The policies' own helper,
// policies/internal/golden.ReadFixtures, is internal to policies/.)
func fixtureReviews(tb testing.TB) [][]byte {
	files, err := filepath.Glob("../policies/*/testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no policy fixtures (%v)", err)
	}
	var out [][]byte
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			continue
		}
		kind, _ := obj["kind"].(string)
		apiVersion, _ := obj["apiVersion"].(string)
		gv := splitAPIVersion(apiVersion)
		out = append(out, reviewBody(tb, "seed", admissionv1.Create, [3]string{gv[0], gv[1], kind}, [3]string{gv[0], gv[1], guessResource(kind)}, obj, nil))
	}
	return out
}

func splitAPIVersion(v string) [2]string {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == '/' {
			return [2]string{v[:i], v[i+1:]}
		}
	}
	return [2]string{"", v}
}

func guessResource(kind string) string {
	for _, r := range route.PodResources() {
		if r.Kind == kind {
			return r.GVR.Resource
		}
	}
	if kind == "PersistentVolumeClaim" {
		return "persistentvolumeclaims"
	}
	return "things"
}
