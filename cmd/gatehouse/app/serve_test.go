package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/certs"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// serving is a `gatehouse serve` process run in-process through Run.
type serving struct {
	port, probe, metrics string
	stdout, stderr       *lockedBuffer
	exit                 chan int
	cancel               context.CancelFunc
}

func startServe(t *testing.T, extra ...string) *serving {
	t.Helper()
	s := &serving{port: freePort(t), probe: freePort(t), metrics: freePort(t), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exit: make(chan int, 1)}
	args := append([]string{"serve", "--port", s.port, "--host", "127.0.0.1",
		"--probe-address", "127.0.0.1:" + s.probe, "--metrics-address", "127.0.0.1:" + s.metrics,
		"--shutdown-delay", "0s", "--cert-poll-interval", "100ms"}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.exit <- Run(ctx, args, strings.NewReader(""), s.stdout, s.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-s.exit:
			if code != exitOK {
				t.Errorf("serve exited %d: %s", code, s.stderr.String())
			}
		case <-time.After(90 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return s
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

func (s *serving) readyz() error {
	resp, err := http.Get("http://127.0.0.1:" + s.probe + "/readyz?verbose")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz %d: %s", resp.StatusCode, body)
	}
	return nil
}

func clientFor(t *testing.T, caFile string) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no CA in " + caFile)
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

const deniedPodReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"dev-1",
"kind":{"group":"","version":"v1","kind":"PersistentVolumeClaim"},"resource":{"group":"","version":"v1","resource":"persistentvolumeclaims"},
"operation":"CREATE","namespace":"team-a","name":"c","userInfo":{"username":"alice"},
"object":{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c","annotations":{"secrets.kubedoop.dev/class":"tls","secrets.kubedoop.dev/scope":"node=x"}}}}}`

// TestServeDev runs `gatehouse serve --dev` and sends it an AdmissionReview
// over HTTPS, trusting only the CA bundle it printed.
func TestServeDev(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, "--dev", "--dev-dir", dir)
	eventually(t, "ready", s.readyz)
	caFile := filepath.Join(dir, certs.CAFile)
	if !strings.Contains(s.stdout.String(), "CA bundle: "+caFile) {
		t.Fatalf("serve --dev did not print the CA bundle path: %q", s.stdout.String())
	}
	client := clientFor(t, caFile)
	resp, err := client.Post("https://127.0.0.1:"+s.port+"/validate/secret-scope", "application/json", strings.NewReader(deniedPodReview))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 1 {
		t.Errorf("HTTP/%d negotiated; HTTP/2 must be off unless asked for", resp.ProtoMajor)
	}
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
		t.Fatal(err)
	}
	r := review.Response
	if r == nil || r.UID != "dev-1" || r.Allowed || r.Result.Code != 422 || r.Result.Details.Causes[0].Type != "ScopeUnexpectedValue" {
		t.Fatalf("unexpected answer: %+v", r)
	}

	// TLS 1.0 and 1.1 handshakes are refused.
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+s.port, &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
		if err == nil {
			conn.Close()
			t.Errorf("TLS version %x accepted", v)
		}
	}

	metricsResp, err := http.Get("http://127.0.0.1:" + s.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer metricsResp.Body.Close()
	body, _ := io.ReadAll(metricsResp.Body)
	for _, want := range []string{
		`gatehouse_webhook_decisions_total{code="ScopeUnexpectedValue",decision="denied",mode="Enforce",webhook="secret-scope"}`,
		`controller_runtime_webhook_requests_total`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestServeReloadsCertificate starts with an empty --cert-dir (not ready, no
// handshake), then writes a certificate (ready, served), then replaces it: the
// new one is served without a restart.
func TestServeReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	// No cluster here, so the webhooks that read cluster state are switched
	// off: with them on, readiness would (rightly) wait for a cluster.
	s := startServe(t, "--cert-dir", dir, "--disable-webhook", strings.Join(stateWebhooks, ","))
	eventually(t, "probe listener", func() error {
		err := s.readyz()
		if err == nil {
			return fmt.Errorf("ready without a certificate")
		}
		if !strings.Contains(err.Error(), "certificate") {
			return err
		}
		return nil
	})

	first, err := certs.Dev(dir, certs.DevHosts(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "ready after the certificate appeared", s.readyz)
	eventually(t, "first certificate served", func() error { return servedIs(s.port, first.CertFile) })

	second, err := certs.Dev(dir, certs.DevHosts(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "replaced certificate served", func() error { return servedIs(s.port, second.CertFile) })
	if err := s.readyz(); err != nil {
		t.Fatal(err)
	}
}

// servedIs reports whether the server presents the certificate in certFile.
func servedIs(port, certFile string) error {
	raw, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return fmt.Errorf("no PEM in %s", certFile)
	}
	conn, err := tls.Dial("tcp", "127.0.0.1:"+port, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	if !bytes.Equal(conn.ConnectionState().PeerCertificates[0].Raw, block.Bytes) {
		return fmt.Errorf("server presents another certificate")
	}
	return nil
}

func TestServeRejectsBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve"}, // no certificate source
		{"serve", "--dev", "--tls-min-version", "1.1"},
		{"serve", "--dev", "--disable-webhook", "no-such-webhook"},
		{"serve", "--config", "/nonexistent/config.yaml"},
	} {
		code, _, stderr := run(t, "", args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestReadinessSaysWhichWebhooksCannotDecide: a gatehouse that finds no
// cluster to read (not --dev) keeps its state-reading webhooks, which can
// then only deny, so it must not report Ready; the reason names them.
func TestReadinessSaysWhichWebhooksCannotDecide(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	cfg := configv1alpha1.Default()
	cfg.Serving.ProbeAddress = "127.0.0.1:0"
	s, err := NewServer(cfg, logr.Discard(), 0, time.Second, kubeFlags{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.probeListener.Close()
	rec := httptest.NewRecorder()
	s.probeMux().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz/cluster-state", nil))
	if rec.Code == http.StatusOK {
		t.Fatalf("/readyz/cluster-state answered 200 without cluster access")
	}
	for _, name := range stateWebhooks {
		if !strings.Contains(rec.Body.String(), name) {
			t.Errorf("/readyz/cluster-state does not name %s: %q", name, rec.Body.String())
		}
	}

	// With every state-reading webhook switched off there is nothing to wait for.
	s2, err := NewServer(withoutStateWebhooks(cfg), logr.Discard(), 0, time.Second, kubeFlags{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.probeListener.Close()
	rec = httptest.NewRecorder()
	s2.probeMux().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz/cluster-state", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("/readyz/cluster-state with no state-reading webhook: %d, want 404 (no such check)", rec.Code)
	}
}

// TestServeDevServesNoStateWebhooks: serve --dev reads no cluster, so the
// webhooks that judge against cluster state are not served on their own
// paths (a review sent to one gets 404, which a Fail policy turns into a
// denial), the combined endpoints deny what they would judge, and readiness
// does not wait for caches that will never exist.
func TestServeDevServesNoStateWebhooks(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, "--dev", "--dev-dir", dir)
	eventually(t, "ready", s.readyz)
	client := clientFor(t, filepath.Join(dir, certs.CAFile))
	for _, name := range stateWebhooks {
		def, _ := route.Lookup(name)
		resp, err := client.Post("https://127.0.0.1:"+s.port+def.Path, "application/json", strings.NewReader(deniedPodReview))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 (not served without cluster access)", def.Path, resp.StatusCode)
		}
	}
	if !strings.Contains(s.stderr.String(), "the combined endpoints deny what they would judge") {
		t.Errorf("serve --dev did not say what becomes of the state-reading webhooks: %s", s.stderr.String())
	}
	if n := strings.Count(s.stderr.String(), "serving without cluster access"); n != 1 {
		t.Errorf("serve --dev said %d times that it serves without cluster access, want once:\n%s", n, s.stderr.String())
	}

	// The combined validating endpoint still takes the writes the
	// state-reading webhooks judge, and denies them: they cannot decide.
	for _, review := range []string{dependencyGroupReview, operatorHarnessReview} {
		resp, err := client.Post("https://127.0.0.1:"+s.port+"/validate/combined-fail", "application/json", strings.NewReader(review))
		if err != nil {
			t.Fatal(err)
		}
		var out admissionv1.AdmissionReview
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if out.Response == nil || out.Response.Allowed || out.Response.Result == nil || !strings.Contains(out.Response.Result.Message, "StateUnavailable") {
			t.Errorf("combined-fail answered %+v, want a StateUnavailable denial", out.Response)
		}
	}
}

// Reviews of a DependencyGroup and an OperatorHarness, which only webhooks
// that read cluster state judge.
const (
	dependencyGroupReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"dev-dg",
"kind":{"group":"helmetica.io","version":"v1","kind":"DependencyGroup"},"resource":{"group":"helmetica.io","version":"v1","resource":"dependencygroups"},
"operation":"CREATE","name":"g","userInfo":{"username":"alice"},
"object":{"apiVersion":"helmetica.io/v1","kind":"DependencyGroup","metadata":{"name":"g"},"spec":{"crds":[{"name":"widgets.example.com"}]}}}}`
	operatorHarnessReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"dev-h",
"kind":{"group":"vshn.net","version":"v1","kind":"OperatorHarness"},"resource":{"group":"vshn.net","version":"v1","resource":"operatorharnesses"},
"operation":"CREATE","name":"h","userInfo":{"username":"alice"},
"object":{"apiVersion":"vshn.net/v1","kind":"OperatorHarness","metadata":{"name":"h"},"spec":{"scopeToLabel":"example.com/scope","operator":{"namespace":"op","serviceAccounts":["op"]}}}}}`
)

// withoutStateWebhooks returns cfg with every state-reading webhook off.
func withoutStateWebhooks(cfg configv1alpha1.ServerConfig) configv1alpha1.ServerConfig {
	hooks := make(map[string]configv1alpha1.Webhook, len(cfg.Webhooks)+len(stateWebhooks))
	for name, w := range cfg.Webhooks {
		hooks[name] = w
	}
	off := false
	for _, name := range stateWebhooks {
		w := hooks[name]
		w.Enabled = &off
		hooks[name] = w
	}
	cfg.Webhooks = hooks
	return cfg
}

// TestServeDevAnswersTheDocumentedReview: the curl of docs/configuration.md
// posts a file of the repository to a path `serve --dev` serves, and gets
// the denial the document says.
func TestServeDevAnswersTheDocumentedReview(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`https://localhost:9443(/\S+) -d @(\S+)`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("docs/configuration.md has no curl of https://localhost:9443/... -d @FILE")
	}
	path, file := m[1], m[2]
	review, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(file)))
	if err != nil {
		t.Fatalf("docs/configuration.md posts %s: %v", file, err)
	}
	dir := t.TempDir()
	s := startServe(t, "--dev", "--dev-dir", dir)
	eventually(t, "ready", s.readyz)
	resp, err := clientFor(t, filepath.Join(dir, certs.CAFile)).Post("https://127.0.0.1:"+s.port+path, "application/json", bytes.NewReader(review))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	r := answer.Response
	if r == nil || r.Allowed || r.Result == nil || r.Result.Code != 422 || r.Result.Details == nil || len(r.Result.Details.Causes) == 0 ||
		r.Result.Details.Causes[0].Type != "ScopeUnexpectedValue" {
		t.Fatalf("%s posted to %s: %+v, want the denial ScopeUnexpectedValue", file, path, r)
	}
}

// TestServeProfilingIsOffByDefault: Go's profiles are served on the metrics
// address only with --enable-profiling; without it /debug/pprof/ is not
// found there.
func TestServeProfilingIsOffByDefault(t *testing.T) {
	for _, on := range []bool{false, true} {
		args := []string{"--dev", "--dev-dir", t.TempDir()}
		if on {
			args = append(args, "--enable-profiling")
		}
		s := startServe(t, args...)
		eventually(t, "serve --dev ready", s.readyz)
		resp, err := http.Get("http://127.0.0.1:" + s.metrics + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		served := resp.StatusCode == http.StatusOK && strings.Contains(string(body), "heap profile")
		if served != on {
			t.Errorf("--enable-profiling=%v: /debug/pprof/heap answered %d (profile: %v)", on, resp.StatusCode, served)
		}
	}
}
