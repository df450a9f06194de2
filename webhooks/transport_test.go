package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// post serves body (with content type ct) through h and decodes the answer.
func post(t testing.TB, h http.Handler, ct string, body []byte) (admissionv1.AdmissionReview, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	var reader io.Reader = http.NoBody
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req := httptest.NewRequest(http.MethodPost, "/", reader)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d", rec.Code)
	}
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil || ar.Response == nil {
		t.Fatalf("answer %q is not a review: %v", rec.Body.String(), err)
	}
	return ar, rec.Body.Bytes()
}

// transportBodies are reviews and non-reviews a hand-made request may send:
// the two readers of a review must answer each alike.
func transportBodies(t testing.TB) map[string][]byte {
	pod := reviewBody(t, "uid-7", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,node")), nil)
	var doc map[string]any
	if err := json.Unmarshal(pod, &doc); err != nil {
		t.Fatal(err)
	}
	with := func(change func(map[string]any)) []byte {
		d := map[string]any{}
		for k, v := range doc {
			d[k] = v
		}
		change(d)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return map[string][]byte{
		"v1":            pod,
		"v1beta1":       with(func(d map[string]any) { d["apiVersion"] = "admission.k8s.io/v1beta1" }),
		"no type":       with(func(d map[string]any) { delete(d, "apiVersion"); delete(d, "kind") }),
		"no request":    with(func(d map[string]any) { delete(d, "request") }),
		"null request":  with(func(d map[string]any) { d["request"] = nil }),
		"denied":        reviewBody(t, "uid-8", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,,node")), nil),
		"another kind":  with(func(d map[string]any) { d["kind"] = "Pod" }),
		"another group": with(func(d map[string]any) { d["apiVersion"] = "example.com/v1" }),
		"not JSON":      []byte("request: {}"),
		"a JSON array":  []byte("[]"),
		"only a kind":   []byte(`{"kind":"AdmissionReview","request":{"uid":"0"}}`),
		"KIND":          []byte(`{"apiVersion":"admission.k8s.io/v1","KIND":"Pod","request":{"uid":"0"}}`),
		"a wrong field": []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}}`),
	}
}

// TestReviewHandlerAnswersAsControllerRuntime: over the same chain, the
// one-pass reader answers every review as controller-runtime's own
// admission.Webhook does, byte for byte, and a body that is not a review
// with the same status code (the error's wording is the decoder's).
func TestReviewHandlerAnswersAsControllerRuntime(t *testing.T) {
	ours := secretScopeHandler()
	for name, body := range transportBodies(t) {
		if diff := answersDiffer(t, ours, body); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

// FuzzReviewHandler holds the one-pass reader to controller-runtime's on
// any body.
func FuzzReviewHandler(f *testing.F) {
	for _, body := range transportBodies(f) {
		f.Add(body)
	}
	ours := secretScopeHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 {
			body = nil
		}
		if diff := answersDiffer(t, ours, body); diff != "" {
			t.Error(diff)
		}
	})
}

// secretScopeHandler serves secret-scope's own endpoint.
func secretScopeHandler() ReviewHandler {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState = memState{}
	return Build(opts, func(name string) bool { return name == "secret-scope" })[0].Admission
}

// answersDiffer says how ours and controller-runtime's ServeHTTP over the
// same chain answer body differently; "" when they agree. Where the two
// readers differ on purpose (ReviewHandler), ours must refuse or answer as
// a review that names no type.
func answersDiffer(t testing.TB, ours ReviewHandler, body []byte) string {
	got, gotRaw := post(t, ours, "application/json", body)
	want, wantRaw := post(t, ours.Webhook, "application/json", body)
	refused := func(r *admissionv1.AdmissionResponse) bool {
		return r.Result != nil && r.Result.Code == http.StatusBadRequest && !r.Allowed && r.UID == "" &&
			len(r.Warnings) == 0 && len(r.Patch) == 0
	}
	switch variant := typeKeyInAnotherCase(body); {
	case !utilyaml.IsJSONBuffer(body):
		if !refused(got.Response) {
			return fmt.Sprintf("a body that is not JSON is answered %s", gotRaw)
		}
	case refused(want.Response) && !variant:
		if !refused(got.Response) {
			return fmt.Sprintf("answered %s, controller-runtime refuses it with 400", gotRaw)
		}
	case variant:
		// Only the answer's type may differ.
		if !refused(got.Response) && !refused(want.Response) && !reflect.DeepEqual(got.Response, want.Response) {
			return fmt.Sprintf("\n got %s\nwant %s", gotRaw, wantRaw)
		}
	case !bytes.Equal(gotRaw, wantRaw):
		return fmt.Sprintf("\n got %s\nwant %s", gotRaw, wantRaw)
	}
	return ""
}

// typeKeyInAnotherCase reports whether body's top level has an apiVersion or
// kind key spelled in another case, which controller-runtime's deserializer
// reads and ReviewHandler does not.
func typeKeyInAnotherCase(body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	for k := range top {
		for _, name := range []string{"apiVersion", "kind"} {
			if k != name && strings.EqualFold(k, name) {
				return true
			}
		}
	}
	return false
}

// TestReviewHandlerLimits: the limits controller-runtime kept, kept.
func TestReviewHandlerLimits(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState = memState{}
	h := Build(opts, func(name string) bool { return name == "secret-scope" })[0].Admission
	body := transportBodies(t)["v1"]
	for _, tc := range []struct {
		name string
		ct   string
		body []byte
		code int32
		msg  string
	}{
		{"an empty body", "application/json", nil, http.StatusBadRequest, "request body is empty"},
		{"a body past 7 MiB", "application/json", append(body, bytes.Repeat([]byte(" "), maxReviewBytes)...), http.StatusRequestEntityTooLarge, "too large"},
		{"another content type", "text/plain", body, http.StatusBadRequest, "expected application/json"},
		{"no content type", "", body, http.StatusBadRequest, "expected application/json"},
	} {
		ar, _ := post(t, h, tc.ct, tc.body)
		r := ar.Response
		if r.Allowed || r.Result == nil || r.Result.Code != tc.code || !strings.Contains(r.Result.Message, tc.msg) {
			t.Errorf("%s: answered %+v, want %d %q", tc.name, r, tc.code, tc.msg)
		}
	}
	ar, _ := post(t, h, "application/json", transportBodies(t)["v1beta1"])
	if ar.APIVersion != "admission.k8s.io/v1beta1" || ar.Kind != "AdmissionReview" || ar.Response.UID != "uid-7" {
		t.Errorf("a v1beta1 review is answered as %s %s for %q", ar.APIVersion, ar.Kind, ar.Response.UID)
	}
}

// TestReviewHandlerRecoversPanics: an evaluator that panics denies the
// review with a 500 naming the panic, for its UID, and the server lives.
func TestReviewHandlerRecoversPanics(t *testing.T) {
	def, _ := route.Lookup("secret-scope")
	h := ReviewHandler{&admission.Webhook{Handler: ownEndpoint(def, adapters.EvaluatorFunc(func(context.Context, *adapters.Review) (adapters.Result, error) {
		panic("evaluator bug")
	})), WithContextFunc: withReviewDeadline, LogConstructor: requestLogger}}
	ar, _ := post(t, h, "application/json", transportBodies(t)["v1"])
	r := ar.Response
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusInternalServerError || r.UID != "uid-7" || !strings.Contains(r.Result.Message, "panic") {
		t.Errorf("a panicking evaluator answered %+v", r)
	}
}

// TestReadBodyWhateverTheStatedLength: the body is read whole and exactly
// whether the Content-Length is right, short, long, unknown or past the
// buffer it may reserve.
func TestReadBodyWhateverTheStatedLength(t *testing.T) {
	for _, size := range []int{0, 1, 511, 512, 513, 40_000, maxBodyHint + 3} {
		body := bytes.Repeat([]byte("gatehouse "), size/10+1)[:size]
		for _, hint := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, 10 * int64(size), maxReviewBytes} {
			// The body arrives in two pieces.
			got, err := readBody(io.MultiReader(bytes.NewReader(body[:size/2]), bytes.NewReader(body[size/2:])), hint)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("%d bytes stated as %d: read %d bytes (%v)", size, hint, len(got), err)
			}
			if hint > 0 && cap(got) > max(int(min(hint, maxBodyHint))+1, 2*size+512) {
				t.Errorf("%d bytes stated as %d: reserved %d bytes", size, hint, cap(got))
			}
		}
	}
}
