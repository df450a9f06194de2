package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// ModeDrift checks, on every replica, that the registered webhook
// configurations route each enabled webhook by the server's own modes
// (render.ModeDrifts, webhooks/route/drift.go): a configuration changed without
// rolling the pods, or entries rendered for other modes, would otherwise go
// unnoticed, as the server then decides by the stricter reading on its
// combined endpoints and answers in its own mode on the webhooks' own
// paths. Every Interval it reads the two configurations (get on their names
// only, as the selections controller does) and
//   - Ready fails while some entry drifts, naming each webhook, so the
//     Service stops routing to a replica whose configuration is not the
//     registered one (during a rollout, to the old pods);
//   - gatehouse_mode_drift is 1 for each drifting webhook, 0 for the others;
//   - a log line names each drift when the set changes, and when it clears.
//
// A configuration that does not exist drifts nothing; one that cannot be read
// is logged and leaves readiness alone (the check cannot tell).
type ModeDrift struct {
	Reader  client.Reader
	Options route.Options
	// Enabled reports whether the server serves the named webhook.
	Enabled func(name string) bool
	// Configuration names the webhook configurations (both kinds).
	Configuration string
	Interval      time.Duration

	last atomic.Pointer[driftResult]
}

// driftResult is one check's outcome.
type driftResult struct {
	drifts []render.EntryDrift
	err    error
}

// NeedLeaderElection: every replica checks the entries it is called
// through against its own configuration.
func (m *ModeDrift) NeedLeaderElection() bool { return false }

// Start checks at once, then every Interval, until ctx ends.
func (m *ModeDrift) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("mode-drift")
	var previous string
	for {
		drifts, err := m.Check(ctx)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // a stop, not a failure of the check
		}
		now := describe(drifts, err)
		switch {
		case now == previous:
		case err != nil:
			log.Error(err, "cannot read the registered webhook configurations: mode drift unknown", "configuration", m.Configuration)
		case len(drifts) == 0 && previous != "":
			log.Info("the registered webhook configurations agree with the server's modes again", "configuration", m.Configuration)
		default:
			for _, d := range drifts {
				log.Error(nil, "mode drift: a registered entry routes the webhook by another mode than the server's configuration; roll the pods or render the entries again",
					"webhook", d.Webhook, "entry", d.Entry, "mode", d.Mode, "registeredFailurePolicy", d.Registered, "renderedFailurePolicy", d.Rendered)
			}
		}
		previous = now
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(m.Interval):
		}
	}
}

// describe is a check's outcome as text, to tell a change.
func describe(drifts []render.EntryDrift, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var parts []string
	for _, d := range drifts {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// Check reads the registered configurations once, compares them with the
// server's options, publishes gatehouse_mode_drift and keeps the outcome for
// Ready.
func (m *ModeDrift) Check(ctx context.Context) ([]render.EntryDrift, error) {
	drifts, err := m.read(ctx)
	m.last.Store(&driftResult{drifts: drifts, err: err})
	if err == nil {
		publishModeDrift(slices.DeleteFunc(route.Names(), func(name string) bool { return !m.Enabled(name) }), drifts)
	}
	return drifts, err
}

func (m *ModeDrift) read(ctx context.Context) ([]render.EntryDrift, error) {
	// A read that hangs must not keep the replica unready (before the
	// first check) or its last outcome current for long.
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	for _, obj := range []client.Object{mutating, validating} {
		if err := m.Reader.Get(ctx, client.ObjectKey{Name: m.Configuration}, obj); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the webhook configurations %s: %w", m.Configuration, err)
		}
	}
	return render.ModeDrifts(m.Options, m.Enabled, render.RegisteredEntries(mutating, validating)), nil
}

// readTimeout bounds one read of the two configurations.
const readTimeout = 5 * time.Second

// errNotChecked is Ready's answer before the first check.
var errNotChecked = errors.New("the registered webhook configurations have not been compared with the server's modes yet")

// Ready is the readiness check mode-drift: it fails while a registered
// entry drifts, naming each, and before the first check; a check that could
// not read the configurations passes.
func (m *ModeDrift) Ready(*http.Request) error {
	r := m.last.Load()
	switch {
	case r == nil:
		return errNotChecked
	case r.err != nil || len(r.drifts) == 0:
		return nil //nolint:nilerr // configurations that cannot be read are logged and leave readiness alone
	}
	return fmt.Errorf("the registered webhook configurations were rendered for other modes than this server's configuration "+
		"(roll the pods, or render the entries from the configuration again): %s", describe(r.drifts, nil))
}

func init() {
	metrics.Registry.MustRegister(modeDrift)
}

// modeDrift is 1 for each enabled webhook that a registered entry sends
// requests by another mode than the server's configuration, 0 for the
// others; absent until the registered configurations were read
// (controllers.ModeDrift).
var modeDrift = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gatehouse_mode_drift",
	Help: "1 while a registered webhook configuration entry routes the webhook by another mode than the server's configuration (a changed configuration not rolled out, or entries rendered for other modes), else 0.",
}, []string{"webhook"})

// publishModeDrift sets gatehouse_mode_drift from the drifts ModeDrifts
// found: 1 for each webhook among them, 0 for every other one of webhooks.
func publishModeDrift(webhooks []string, drifts []render.EntryDrift) {
	modeDrift.Reset()
	for _, name := range webhooks {
		modeDrift.WithLabelValues(name).Set(0)
	}
	for _, d := range drifts {
		modeDrift.WithLabelValues(d.Webhook).Set(1)
	}
}
