package webhooks

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// decisions counts decisions per webhook, decision, mode and finding code.
// The decision is the contract's (a webhook in Warn or Audit that admits
// what it would deny counts as denied, under its mode). A
// decision with several codes counts once per distinct code; one with none
// counts under code "". A decision whose every denying finding an exception
// excused counts as excused (webhooks/exceptions.go), under the codes it
// excused; the exception's name is in the warning, the audit annotation
// and the log line, not in a label (a label per exception would grow
// without bound). Labels carry names and codes only, never values.
var decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_webhook_decisions_total",
	Help: "Admission decisions by webhook, decision (allowed, denied, excused, errored, exempt), mode (Enforce, Warn, Audit) and finding code.",
}, []string{"webhook", "decision", "mode", "code"})

// modeDriftReviews counts the decisions a member of a combined endpoint
// made in the mode of the entry the request came through, not the server's
// (webhooks/route/drift.go), per webhook, entry and the server's mode for the webhook.
var modeDriftReviews = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_mode_drift_reviews_total",
	Help: "Reviews decided in Enforce because the registered entry they came through is rendered for another mode than the server's, by webhook, entry and the server's mode.",
}, []string{"webhook", "entry", "mode"})

func init() {
	metrics.Registry.MustRegister(decisions, modeDriftReviews)
}

func recordModeDriftReview(webhook string, d route.ModeDrift) {
	modeDriftReviews.WithLabelValues(webhook, d.Entry, string(d.Configured)).Inc()
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
