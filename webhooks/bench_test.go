package webhooks

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// BenchmarkAdapter measures the whole adapter path of every webhook without
// the network: controller-runtime's decode of the AdmissionReview, the
// evaluator, patch generation for the mutating ones, and the encode of the
// answer, for a Pod with two containers, an init container and a secret
// volume.
func BenchmarkAdapter(b *testing.B) {
	pod := secretPod(scopeAnnotations("pod,node,service=web"))
	spec := pod["spec"].(map[string]any)
	container := func(name string) map[string]any {
		return map[string]any{
			"name": name, "image": "registry.example/" + name + ":1.2.3",
			"args":  []any{"--port=8080", "--log-level=info"},
			"env":   []any{map[string]any{"name": "MODE", "value": "production"}, map[string]any{"name": "REGION", "value": "eu-west"}},
			"ports": []any{map[string]any{"containerPort": 8080, "name": "http"}},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
				"limits":   map[string]any{"memory": "256Mi"},
			},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/ready", "port": 8080}},
			"volumeMounts":   []any{map[string]any{"name": "tls", "mountPath": "/etc/tls"}},
		}
	}
	spec["containers"] = []any{container("app"), container("sidecar")}
	spec["initContainers"] = []any{container("init")}
	logBuffer.mu.Lock()
	logBuffer.discard = true
	logBuffer.mu.Unlock()
	defer func() {
		logBuffer.mu.Lock()
		logBuffer.discard = false
		logBuffer.mu.Unlock()
	}()
	body := reviewBody(b, "bench", admissionv1.Create, podKind, podResource, pod, nil)
	b.Logf("review size: %d bytes", len(body))
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.Namespaces = everyNamespaceLabelled{opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value, opts.HarnessedNamespaceLabel: ""}
	opts.ClusterState = memState{}
	hooks := Build(opts, func(string) bool { return true })
	endpoints := map[string]http.Handler{}
	var paths []string
	for _, w := range hooks {
		endpoints[w.Name], paths = w.Admission, append(paths, w.Name)
	}
	// The combined endpoints, in a namespace that opts in to every member:
	// one review runs every webhook of the group that intercepts a Pod.
	for _, c := range BuildCombined(hooks, opts) {
		endpoints["combined-"+c.Name], paths = c.Admission, append(paths, "combined-"+c.Name)
	}
	for _, name := range paths {
		h := endpoints[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
