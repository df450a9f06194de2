package webhooks

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// decisions counts decisions per webhook, decision, mode and finding code.
// The decision is the contract's (a webhook in Warn or Audit that admits
// what it would deny counts as denied, under its mode). A
// decision with several codes counts once per distinct code; one with none
// counts under code "". Labels carry names and codes only, never values.
var decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_webhook_decisions_total",
	Help: "Admission decisions by webhook, decision (allowed, denied, errored, exempt), mode (Enforce, Warn, Audit) and finding code.",
}, []string{"webhook", "decision", "mode", "code"})

// modeDriftReviews counts the decisions a member of a combined endpoint
// made in the mode of the entry the request came through, not the server's
// (drift.go), per webhook, entry and the server's mode for the webhook.
var modeDriftReviews = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_mode_drift_reviews_total",
	Help: "Reviews decided in Enforce because the registered entry they came through is rendered for another mode than the server's, by webhook, entry and the server's mode.",
}, []string{"webhook", "entry", "mode"})

// modeDrift is 1 for each enabled webhook that a registered entry sends
// requests by another mode than the server's configuration, 0 for the
// others; absent until the registered configurations were read
// (controllers.ModeDrift).
var modeDrift = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gatehouse_mode_drift",
	Help: "1 while a registered webhook configuration entry routes the webhook by another mode than the server's configuration (a changed configuration not rolled out, or entries rendered for other modes), else 0.",
}, []string{"webhook"})

func init() {
	metrics.Registry.MustRegister(decisions, modeDriftReviews, modeDrift)
}

func recordModeDriftReview(webhook string, d ModeDrift) {
	modeDriftReviews.WithLabelValues(webhook, d.Entry, string(d.Configured)).Inc()
}

// PublishModeDrift sets gatehouse_mode_drift from the drifts ModeDrifts
// found: 1 for each webhook among them, 0 for every other one of webhooks.
func PublishModeDrift(webhooks []string, drifts []EntryDrift) {
	modeDrift.Reset()
	for _, name := range webhooks {
		modeDrift.WithLabelValues(name).Set(0)
	}
	for _, d := range drifts {
		modeDrift.WithLabelValues(d.Webhook).Set(1)
	}
}

func recordDecision(webhook, decision string, mode configv1alpha1.Mode, findings []policies.Finding) {
	if mode == "" {
		mode = configv1alpha1.ModeEnforce
	}
	codes := findingCodes(findings)
	if len(codes) == 0 {
		decisions.WithLabelValues(webhook, decision, string(mode), "").Inc()
		return
	}
	for _, c := range codes {
		decisions.WithLabelValues(webhook, decision, string(mode), c).Inc()
	}
}
