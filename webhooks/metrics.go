package webhooks

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// decisions counts decisions per webhook, decision and finding code. A
// decision with several codes counts once per distinct code; one with none
// counts under code "". Labels carry names and codes only, never values.
var decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_webhook_decisions_total",
	Help: "Admission decisions by webhook, decision (allowed, denied, errored) and finding code.",
}, []string{"webhook", "decision", "code"})

func init() {
	metrics.Registry.MustRegister(decisions)
}

func recordDecision(webhook, decision string, findings []policies.Finding) {
	codes := findingCodes(findings)
	if len(codes) == 0 {
		decisions.WithLabelValues(webhook, decision, "").Inc()
		return
	}
	for _, c := range codes {
		decisions.WithLabelValues(webhook, decision, c).Inc()
	}
}
