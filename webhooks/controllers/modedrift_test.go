package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// renderedConfigurations are the two webhook configurations `gatehouse
// manifests --manage-selections` renders for cfg.
func renderedConfigurations(t *testing.T, cfg configv1alpha1.ServerConfig) []client.Object {
	t.Helper()
	out, err := render.WebhookConfigurations(route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: route.OptionsFromConfig(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var obj client.Object
		switch {
		case strings.Contains(doc, "kind: MutatingWebhookConfiguration"):
			obj = &admissionregistrationv1.MutatingWebhookConfiguration{}
		case strings.Contains(doc, "kind: ValidatingWebhookConfiguration"):
			obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
		default:
			continue
		}
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	if len(objs) != 2 {
		t.Fatalf("rendered %d configurations, want 2", len(objs))
	}
	return objs
}

func driftScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func managed(change func(*configv1alpha1.ServerConfig)) configv1alpha1.ServerConfig {
	cfg := configv1alpha1.Default()
	cfg.Harness.ManageSelections = true
	change(&cfg)
	return cfg
}

// driftGauge reads gatehouse_mode_drift{webhook=name}; false when absent.
func driftGauge(t *testing.T, name string) (float64, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "gatehouse_mode_drift" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelIs(m, "webhook", name) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func labelIs(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestModeDriftReadiness: a server in Warn for secret-scope behind entries
// rendered for Enforce (a helm upgrade whose pods were not rolled) is not
// ready, and says which webhook and entry drift, and gatehouse_mode_drift is
// 1 for it and 0 for the others; once the entries are rendered for its
// configuration it is ready again and the gauge falls to 0. Before the
// first check it is not ready; without registered configurations nothing
// drifts; a check that cannot read them leaves readiness alone.
func TestModeDriftReadiness(t *testing.T) {
	ctx := context.Background()
	warn := managed(func(c *configv1alpha1.ServerConfig) {
		c.Webhooks = map[string]configv1alpha1.Webhook{"secret-scope": {Mode: configv1alpha1.ModeWarn}}
	})
	c := fake.NewClientBuilder().WithScheme(driftScheme(t)).WithObjects(renderedConfigurations(t, managed(func(*configv1alpha1.ServerConfig) {}))...).Build()
	check := &ModeDrift{Reader: c, Options: route.OptionsFromConfig(warn), Enabled: warn.Enabled, Configuration: render.ConfigurationName}
	if err := check.Ready(nil); err == nil {
		t.Error("ready before the registered configurations were compared")
	}
	drifts, err := check.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(drifts) != 1 || drifts[0].Webhook != "secret-scope" || drifts[0].Entry != "validating-fail.gatehouse.dev" || drifts[0].Mode != configv1alpha1.ModeWarn {
		t.Fatalf("drifts %v, want secret-scope in validating-fail.gatehouse.dev", drifts)
	}
	err = check.Ready(nil)
	if err == nil || !strings.Contains(err.Error(), "secret-scope: entry validating-fail.gatehouse.dev has failurePolicy Fail, and the server's mode Warn renders Ignore") {
		t.Errorf("Ready: %v, want the drift named", err)
	}
	if v, ok := driftGauge(t, "secret-scope"); !ok || v != 1 {
		t.Errorf("gatehouse_mode_drift{webhook=secret-scope} = %v (present %v), want 1", v, ok)
	}
	if v, ok := driftGauge(t, "service-account"); !ok || v != 0 {
		t.Errorf("gatehouse_mode_drift{webhook=service-account} = %v (present %v), want 0", v, ok)
	}

	// The entries rendered again, from the server's configuration.
	for _, obj := range renderedConfigurations(t, warn) {
		live := obj.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			t.Fatal(err)
		}
		obj.SetResourceVersion(live.GetResourceVersion())
		if err := c.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if drifts, err := check.Check(ctx); err != nil || len(drifts) != 0 {
		t.Fatalf("after rendering the entries again: drifts %v, %v", drifts, err)
	}
	if err := check.Ready(nil); err != nil {
		t.Errorf("Ready after rendering the entries again: %v", err)
	}
	if v, _ := driftGauge(t, "secret-scope"); v != 0 {
		t.Errorf("gatehouse_mode_drift{webhook=secret-scope} = %v after rendering again, want 0", v)
	}

	// Nothing registered: nothing drifts.
	empty := &ModeDrift{Reader: fake.NewClientBuilder().WithScheme(driftScheme(t)).Build(), Options: route.OptionsFromConfig(warn),
		Enabled: warn.Enabled, Configuration: render.ConfigurationName}
	if drifts, err := empty.Check(ctx); err != nil || len(drifts) != 0 || empty.Ready(nil) != nil {
		t.Errorf("without registered configurations: drifts %v, %v, ready %v", drifts, err, empty.Ready(nil))
	}

	// Unreadable: unknown, logged, readiness left alone.
	forbidden := fake.NewClientBuilder().WithScheme(driftScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, "gatehouse", errors.New("no"))
		},
	}).Build()
	unreadable := &ModeDrift{Reader: forbidden, Options: route.OptionsFromConfig(warn), Enabled: warn.Enabled, Configuration: render.ConfigurationName}
	if _, err := unreadable.Check(ctx); err == nil || unreadable.Ready(nil) != nil {
		t.Errorf("unreadable configurations: check error %v, ready %v; want an error and ready", err, unreadable.Ready(nil))
	}
}
