package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	admissionv1 "k8s.io/api/admission/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/certs"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// logBuffer collects every log line the webhooks write during the tests, so
// the no-payload test can read them.
var logBuffer = &syncBuffer{}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// discard drops writes (benchmarks: the server writes its log lines,
	// but an ever-growing buffer would distort the allocation figures).
	discard bool
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.discard {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMain(m *testing.M) {
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(logBuffer), zapcore.DebugLevel)
	ctrl.SetLogger(zapr.NewLogger(zap.New(core)))
	os.Exit(m.Run())
}

// testServer is a real controller-runtime webhook server over TLS on
// loopback, serving every webhook of the registry.
type testServer struct {
	base   string
	client *http.Client
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerWith(t, route.OptionsFromConfig(configv1alpha1.Default()))
}

// startServerWith serves every webhook of the registry built from opts.
func startServerWith(t testing.TB, opts route.Options) *testServer {
	t.Helper()
	bundle, err := certs.Dev(t.TempDir(), certs.DevHosts(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	srv := webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: port, CertDir: bundle.Dir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			c.NextProtos = []string{"http/1.1"}
		}},
	})
	hooks := Build(opts, func(string) bool { return true })
	for _, w := range hooks {
		srv.Register(w.Path, w.Admission)
	}
	for _, c := range BuildCombined(hooks, opts) {
		srv.Register(c.Path, c.Admission)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	ca, err := os.ReadFile(bundle.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ts := &testServer{base: "https://127.0.0.1:" + strconv.Itoa(port), client: client}
	waitFor(t, func() error {
		resp, err := client.Get(ts.base + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	return ts
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t testing.TB, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends body to path and decodes the AdmissionReview answer.
func (ts *testServer) post(t testing.TB, path, contentType string, body []byte) (int, *admissionv1.AdmissionResponse) {
	t.Helper()
	resp, err := ts.client.Post(ts.base+path, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
		t.Fatalf("answer is not an AdmissionReview: %v", err)
	}
	if review.Response == nil {
		t.Fatal("AdmissionReview without response")
	}
	return resp.StatusCode, review.Response
}

// reviewBody builds an AdmissionReview for obj, named team-a/web.
func reviewBody(t testing.TB, uid string, op admissionv1.Operation, kind, resource [3]string, obj, old any) []byte {
	t.Helper()
	return reviewBodyIn(t, uid, op, kind, resource, "team-a", "web", obj, old)
}

// reviewBodyIn builds an AdmissionReview for obj named namespace/name.
func reviewBodyIn(t testing.TB, uid string, op admissionv1.Operation, kind, resource [3]string, namespace, name string, obj, old any) []byte {
	t.Helper()
	req := map[string]any{
		"uid":       uid,
		"kind":      map[string]string{"group": kind[0], "version": kind[1], "kind": kind[2]},
		"resource":  map[string]string{"group": resource[0], "version": resource[1], "resource": resource[2]},
		"operation": op,
		"namespace": namespace,
		"name":      name,
		"userInfo":  map[string]any{"username": "alice"},
		"object":    obj,
	}
	if old != nil {
		req["oldObject"] = old
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

var (
	podKind     = [3]string{"", "v1", "Pod"}
	podResource = [3]string{"", "v1", "pods"}
)

// secretPod is a Pod with one secret-operator volume whose annotations are
// given.
func secretPod(annotations map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "team-a"},
		"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}},
			"volumes": []any{map[string]any{
				"name": "tls",
				"ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
					"metadata": map[string]any{"annotations": annotations},
					"spec": map[string]any{
						"storageClassName": "secrets.kubedoop.dev",
						"accessModes":      []any{"ReadWriteOnce"},
						"resources":        map[string]any{"requests": map[string]any{"storage": "1Mi"}},
					},
				}},
			}},
		},
	}
}

func scopeAnnotations(scope string) map[string]any {
	return map[string]any{"secrets.kubedoop.dev/class": "tls", "secrets.kubedoop.dev/scope": scope}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fmtCauses(r *admissionv1.AdmissionResponse) string {
	if r.Result == nil || r.Result.Details == nil {
		return "<no causes>"
	}
	return fmt.Sprintf("%+v", r.Result.Details.Causes)
}

// admissionRequest builds the request Decide takes, as the HTTP layer would
// decode it.
func admissionRequest(t testing.TB, op admissionv1.Operation, kind, resource [3]string, obj any) admission.Request {
	t.Helper()
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(reviewBody(t, "direct", op, kind, resource, obj, nil), &review); err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: *review.Request}
}
