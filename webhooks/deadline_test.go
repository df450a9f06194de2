package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

func TestReviewTimeout(t *testing.T) {
	for query, want := range map[string]time.Duration{
		"":    DefaultReviewTimeout,
		"10s": 10 * time.Second,
		// The API server sends what is left of the call's deadline.
		"4.999873512s": 4999873512 * time.Nanosecond,
		"1s":           time.Second,
		"250ms":        250 * time.Millisecond,
		"30s":          MaxReviewTimeout,
		"1m0s":         MaxReviewTimeout, // longer than the API server allows: capped
		"24h":          MaxReviewTimeout,
		"0s":           DefaultReviewTimeout,
		"-5s":          DefaultReviewTimeout,
		"10":           DefaultReviewTimeout, // not a duration
		"soon":         DefaultReviewTimeout,
	} {
		if got := reviewTimeout(query); got != want {
			t.Errorf("reviewTimeout(%q) = %s, want %s", query, got, want)
		}
	}
}

func TestReviewBudgetKeepsAMargin(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		time.Second:          900 * time.Millisecond,
		DefaultReviewTimeout: 4500 * time.Millisecond,
		10 * time.Second:     9 * time.Second,
		MaxReviewTimeout:     29 * time.Second,
	} {
		if got := reviewBudget(timeout); got != want {
			t.Errorf("reviewBudget(%s) = %s, want %s", timeout, got, want)
		}
	}
}

// hangingReaders are a StateReader and a WorkloadReader whose every call
// hangs until release is closed (ignoring the context, as a wedged cache or
// a bug would), and report that they were called.
type hangingReaders struct {
	called  chan string
	release chan struct{}
}

func newHangingReaders(t *testing.T) *hangingReaders {
	h := &hangingReaders{called: make(chan string, 100), release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) })
	return h
}

func (h *hangingReaders) hang(what string) {
	select {
	case h.called <- what:
	default:
	}
	<-h.release
}

func (h *hangingReaders) Lookup(schema.GroupVersionKind, string, string) ([]string, error) {
	h.hang("Lookup")
	return nil, nil
}

func (h *hangingReaders) Exists(schema.GroupVersionKind, string) (bool, error) {
	h.hang("Exists")
	return false, nil
}

func (h *hangingReaders) Objects(schema.GroupVersionKind, string, string) ([]map[string]any, error) {
	h.hang("Objects")
	return nil, nil
}

func (h *hangingReaders) NamespaceLabels(string) (map[string]string, error) {
	h.hang("NamespaceLabels")
	return nil, nil
}

func (h *hangingReaders) ListWorkloads(context.Context, string, string, map[string]string) ([]map[string]any, error) {
	h.hang("ListWorkloads")
	return nil, nil
}

// fixtureReview wraps a policy fixture in a CREATE review, resource guessed
// from the kind.
func fixtureReview(t *testing.T, file, resource string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	gv := splitAPIVersion(obj["apiVersion"].(string))
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return reviewBodyIn(t, "uid-"+resource, admissionv1.Create, [3]string{gv[0], gv[1], obj["kind"].(string)}, [3]string{gv[0], gv[1], resource}, ns, name, obj, nil)
}

// serveOnce sends body to w as the API server does (?timeout=...) and
// decodes the answer.
func serveOnce(t *testing.T, w *Webhook, query string, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, w.Path+query, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w.Admission.ServeHTTP(rec, req)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("%s: answer is not an AdmissionReview: %v", w.Name, err)
	}
	return review.Response
}

// TestHungLookupDeniesInTime: every webhook that reads cluster state, given a
// reader that never answers, answers the API server before its ?timeout= with
// a 504 Timeout denial that names the webhook; never an allow. The reader is
// really reached (the test would prove nothing otherwise), and the test ends
// only because the chain stops waiting for it.
func TestHungLookupDeniesInTime(t *testing.T) {
	hung := newHangingReaders(t)
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Workloads, opts.Namespaces = hung, hung, hung
	hooks := map[string]*Webhook{}
	for _, w := range Build(opts, func(string) bool { return true }) {
		hooks[w.Name] = w
	}
	cases := []struct {
		webhook string
		body    []byte
	}{
		{"dependency-group", fixtureReview(t, "../policies/dependencygroup/testdata/pass/group-seed-mariadb.yaml", "dependencygroups")},
		{"crd-source", fixtureReview(t, "../policies/dependencygroup/testdata/pass/source-seed-provides.yaml", "customresourcedefinitionsources")},
		{"harness", fixtureReview(t, "../policies/harness/testdata/pass/mariadb-operator-binds-view.yaml", "operatorharnesses")},
		{"component-overrides", fixtureReview(t, "../policies/overrides/testdata/pass/container-args.yaml", "configmaps")},
		{"harness-proxy", fixtureReview(t, "../policies/proxy/testdata/pass/pod-service-account-admitted.yaml", "pods")},
	}
	for _, tc := range cases {
		t.Run(tc.webhook, func(t *testing.T) {
			w := hooks[tc.webhook]
			if w.FailurePolicy != admissionregistrationv1.Fail {
				t.Fatalf("%s is not fail-closed; this case expects a denial", w.Name)
			}
			r := serveOnce(t, w, "?timeout=1s", tc.body)
			select {
			case <-hung.called:
			default:
				t.Fatal("the hanging reader was never called; the case proves nothing")
			}
			if r.Allowed {
				t.Fatal("a review whose lookup hung was allowed")
			}
			if string(r.UID) != "uid-"+resourceOf(tc.body) {
				t.Errorf("UID not echoed: %q", r.UID)
			}
			if r.Result == nil || r.Result.Code != http.StatusGatewayTimeout || r.Result.Reason != metav1.StatusReasonTimeout {
				t.Fatalf("want a 504 Timeout status, got %+v", r.Result)
			}
			for _, want := range []string{ReasonReviewTimeout, "webhook " + w.Name, "within 900ms of the API server's 1s timeout", "(gatehouse " + w.Name + ")"} {
				if !strings.Contains(r.Result.Message, want) {
					t.Errorf("message lacks %q: %s", want, r.Result.Message)
				}
			}
		})
	}
}

func resourceOf(body []byte) string {
	var review admissionv1.AdmissionReview
	_ = json.Unmarshal(body, &review)
	return review.Request.Resource.Resource
}

// TestHungEvaluationFollowsTheFailurePolicy drives the handler with an
// evaluator that hangs: a Fail webhook denies, an Ignore webhook admits
// unchanged with a warning (what the API server would do for it after the
// timeout), and without ?timeout the default applies.
func TestHungEvaluationFollowsTheFailurePolicy(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	hang := adapters.EvaluatorFunc(func(context.Context, *adapters.Review) (adapters.Result, error) {
		<-release
		return adapters.Result{}, nil
	})
	base, _ := route.Lookup("secret-scope")
	body := reviewBody(t, "uid-hang", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod")), nil)
	for _, tc := range []struct {
		policy      admissionregistrationv1.FailurePolicyType
		query       string
		wantAllowed bool
		wantText    string
	}{
		{admissionregistrationv1.Fail, "?timeout=1s", false, "within 900ms of the API server's 1s timeout"},
		{admissionregistrationv1.Fail, "?timeout=not-a-duration", false, "within 4.5s of the API server's 5s timeout"},
		{admissionregistrationv1.Ignore, "?timeout=1s", true, "admitted unchanged"},
	} {
		t.Run(string(tc.policy)+tc.query, func(t *testing.T) {
			def := base
			def.FailurePolicy = tc.policy
			w := Build(route.Options{}, func(n string) bool { return n == def.Name })[0]
			w.Admission.Handler = ownEndpoint(def, hang)
			r := serveOnce(t, w, tc.query, body)
			if r.Allowed != tc.wantAllowed {
				t.Fatalf("allowed = %v, want %v: %+v", r.Allowed, tc.wantAllowed, r.Result)
			}
			text := strings.Join(r.Warnings, "\n")
			if r.Result != nil {
				text += r.Result.Message
			}
			if !strings.Contains(text, tc.wantText) || !strings.Contains(text, ReasonReviewTimeout) {
				t.Errorf("answer lacks %q: %s", tc.wantText, text)
			}
			if tc.wantAllowed && len(r.Patch) != 0 {
				t.Error("a timed-out mutating review must not patch")
			}
		})
	}
}

// TestPanicInEvaluationStillRecovered: the evaluation runs on its own
// goroutine now, and a panic there must still become controller-runtime's
// denying 500, not a crash of the server.
func TestPanicInEvaluationStillRecovered(t *testing.T) {
	def, _ := route.Lookup("secret-scope")
	w := Build(route.Options{}, func(n string) bool { return n == def.Name })[0]
	w.Admission.Handler = ownEndpoint(def, adapters.EvaluatorFunc(func(context.Context, *adapters.Review) (adapters.Result, error) {
		panic("evaluator bug")
	}))
	r := serveOnce(t, w, "?timeout=5s", reviewBody(t, "uid-panic", admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod")), nil))
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusInternalServerError || r.UID != "uid-panic" {
		t.Fatalf("want a denying 500 echoing the UID, got allowed=%v %+v", r.Allowed, r.Result)
	}
}

// TestCancelledRequestContextStillDecides: the server cancels the contexts
// of in-flight requests when it starts draining on SIGTERM; those reviews
// must get their real answer, not a timeout.
func TestCancelledRequestContextStillDecides(t *testing.T) {
	w := Build(route.Options{}, func(n string) bool { return n == "secret-scope" })[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, findings := decide(ctx, w, admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,,node"))))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity || len(findings) == 0 {
		t.Fatalf("want the real 422 denial, got allowed=%v %+v", resp.Allowed, resp.Result)
	}
}

// TestCombinedHungNamespaceReadAnswersInTime: a combined group whose
// namespace read hangs answers before the API server's timeout, as its
// failure policy says, naming the member it was waiting for: the
// failing-closed group denies, the failing-open group admits unchanged (one
// deadline per review: the members after the hung read never run).
func TestCombinedHungNamespaceReadAnswersInTime(t *testing.T) {
	hung := newHangingReaders(t)
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Workloads, opts.Namespaces = hung, hung, hung
	groups := map[string]*Combined{}
	for _, c := range BuildCombined(Build(opts, func(string) bool { return true }), opts) {
		groups[c.Name] = c
	}
	body := fixtureReview(t, "../policies/proxy/testdata/pass/pod-service-account-admitted.yaml", "pods")
	serve := func(c *Combined) *admissionv1.AdmissionResponse {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, c.Path+"?timeout=1s", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		c.Admission.ServeHTTP(rec, req)
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
			t.Fatalf("%s: answer is not an AdmissionReview: %v", c.Name, err)
		}
		return review.Response
	}
	if r := serve(groups["mutating-fail"]); r.Allowed || r.Result == nil || r.Result.Code != http.StatusGatewayTimeout ||
		!strings.Contains(r.Result.Message, ReasonReviewTimeout) || !strings.Contains(r.Result.Message, "webhook harness-proxy did not decide") {
		t.Errorf("mutating-fail with a hung namespace read: allowed=%v %+v, want a timeout denial", r.Allowed, r.Result)
	}
	select {
	case <-hung.called:
	default:
		t.Fatal("the hanging namespace reader was never called; the case proves nothing")
	}
	r := serve(groups["mutating-ignore"])
	if !r.Allowed || len(r.Patch) != 0 || !slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "gatehouse harness-proxy: "+ReasonReviewTimeout) && strings.Contains(w, "admitted unchanged")
	}) {
		t.Errorf("mutating-ignore with a hung namespace read: allowed=%v patch=%s warnings %v, want admitted unchanged with harness-proxy's timeout",
			r.Allowed, r.Patch, r.Warnings)
	}
}
