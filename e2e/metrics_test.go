package e2e

import (
	"bytes"
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// parseMetrics parses a Prometheus text exposition into its families.
func parseMetrics(t *testing.T, raw []byte) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parsing metrics: %v", err)
	}
	return families
}

// apiServerMetrics scrapes the API server's own /metrics.
func apiServerMetrics(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("scraping the API server: %v", err)
	}
	return parseMetrics(t, raw)
}

// sampleValue sums the counter or gauge samples of a family whose labels
// include all of want.
func sampleValue(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
	mf, ok := families[name]
	if !ok {
		return 0
	}
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
