package perf

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// emptyState is a cluster with no DependencyGroups, CRD sources or
// OperatorHarnesses: the state webhooks evaluate instead of denying for
// want of a view.
type emptyState struct{}

func (emptyState) Lookup(schema.GroupVersionKind, string, string) ([]string, error) { return nil, nil }
func (emptyState) Exists(schema.GroupVersionKind, string) (bool, error)             { return false, nil }

// Objects is part of the StateReader of later versions of the registry.
func (emptyState) Objects(schema.GroupVersionKind, string, string) ([]map[string]any, error) {
	return nil, nil
}

// BenchmarkAdapterCorpus measures the whole adapter path of every webhook
// over its share of the corpus (every golden fixture it intercepts, pass and
// fail, dressed as the API server sends it): controller-runtime's decode of
// the AdmissionReview, the evaluator, patch generation for the mutating
// ones, the decision log line (JSON, discarded) and the encode of the
// answer. One op is one review; the reviews of a webhook are cycled.
func BenchmarkAdapterCorpus(b *testing.B) {
	repo := repoRoot(b)
	fixtures, err := ReadFixtures(repo)
	if err != nil {
		b.Fatal(err)
	}
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	corpus, err := Build(fixtures, route.Registry(), opts)
	if err != nil {
		b.Fatal(err)
	}
	enc := zap.NewProductionEncoderConfig()
	logf.SetLogger(zapr.NewLogger(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(io.Discard), zapcore.InfoLevel))))
	opts.ClusterState = emptyState{}
	byWebhook := map[string][]Review{}
	for _, r := range corpus.Reviews {
		byWebhook[r.Webhook] = append(byWebhook[r.Webhook], r)
	}
	for _, w := range webhooks.Build(opts, func(string) bool { return true }) {
		reviews := byWebhook[w.Name]
		if len(reviews) == 0 {
			continue
		}
		b.Run(w.Name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := reviews[i%len(reviews)]
				i++
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, w.Path, bytes.NewReader(r.Body))
				req.Header.Set("Content-Type", "application/json")
				w.Admission.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: status %d", r.Fixture, rec.Code)
				}
			}
		})
	}
}

// BenchmarkFloorCorpus is BenchmarkAdapterCorpus for the floor: the same
// reviews through controller-runtime's admission.Webhook with a handler
// that allows everything, which is the least any webhook costs.
func BenchmarkFloorCorpus(b *testing.B) {
	fixtures, err := ReadFixtures(repoRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	corpus, err := Build(fixtures, route.Registry(), route.OptionsFromConfig(configv1alpha1.Default()))
	if err != nil {
		b.Fatal(err)
	}
	floor := &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := corpus.Reviews[i%len(corpus.Reviews)]
		i++
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, r.Path, bytes.NewReader(r.Body))
		req.Header.Set("Content-Type", "application/json")
		floor.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: status %d", r.Fixture, rec.Code)
		}
	}
}
