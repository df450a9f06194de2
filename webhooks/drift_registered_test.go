package webhooks

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// registeredFor renders the webhook configurations for opts in layout and
// reads them back as the drift check reads the registered ones.
func registeredFor(t *testing.T, opts route.Options, layout string) []render.RegisteredEntry {
	t.Helper()
	out, err := render.WebhookConfigurations(route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal([]byte(doc), mutating); err != nil {
				t.Fatal(err)
			}
		case "ValidatingWebhookConfiguration":
			validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.Unmarshal([]byte(doc), validating); err != nil {
				t.Fatal(err)
			}
		}
	}
	if validating == nil {
		t.Fatalf("%s renders no ValidatingWebhookConfiguration", layout)
	}
	return render.RegisteredEntries(mutating, validating)
}

// TestModeDriftsCompareTheRegisteredEntries: the entries rendered for the
// server's own modes show no drift, in every layout and with or without
// managed selections; entries rendered for other modes show exactly the
// webhooks whose mode differs, each with the entry that routes it by the
// other failure policy.
func TestModeDriftsCompareTheRegisteredEntries(t *testing.T) {
	all := func(string) bool { return true }
	for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined, route.LayoutInProcess} {
		for _, managed := range []bool{false, true} {
			opts := func(change func(*configv1alpha1.ServerConfig)) route.Options {
				return optionsWith(t, func(c *configv1alpha1.ServerConfig) {
					c.Harness.ManageSelections = managed
					change(c)
				})
			}
			enforce := opts(func(*configv1alpha1.ServerConfig) {})
			warn := opts(func(c *configv1alpha1.ServerConfig) {
				c.Webhooks = map[string]configv1alpha1.Webhook{"secret-scope": {Mode: configv1alpha1.ModeWarn}, "harness-proxy": {Mode: configv1alpha1.ModeAudit}}
			})
			audit := opts(func(c *configv1alpha1.ServerConfig) {
				c.DefaultMode = configv1alpha1.ModeAudit
			})
			for name, o := range map[string]route.Options{"Enforce": enforce, "Warn": warn, "Audit": audit} {
				if got := render.ModeDrifts(o, all, registeredFor(t, o, layout)); len(got) != 0 {
					t.Errorf("%s, managed %v, %s behind its own entries: drifts %v", layout, managed, name, got)
				}
			}
			// Configuration Warn (secret-scope) and Audit (harness-proxy),
			// entries rendered for Enforce, and back.
			got := render.ModeDrifts(warn, all, registeredFor(t, enforce, layout))
			webhooksOf := func(ds []render.EntryDrift) map[string]bool {
				out := map[string]bool{}
				for _, d := range ds {
					out[d.Webhook] = true
				}
				return out
			}
			if w := webhooksOf(got); len(w) != 2 || !w["secret-scope"] || !w["harness-proxy"] {
				t.Errorf("%s, managed %v: Warn server behind Enforce entries: drifts %v, want secret-scope and harness-proxy", layout, managed, got)
			}
			for _, d := range got {
				if d.Registered != admissionregistrationv1.Fail || d.Rendered != admissionregistrationv1.Ignore {
					t.Errorf("%s, managed %v: %v", layout, managed, d)
				}
			}
			back := render.ModeDrifts(enforce, all, registeredFor(t, warn, layout))
			if w := webhooksOf(back); len(w) != 2 || !w["secret-scope"] || !w["harness-proxy"] {
				t.Errorf("%s, managed %v: Enforce server behind Warn entries: drifts %v, want secret-scope and harness-proxy", layout, managed, back)
			}
			// Audit everywhere behind Enforce entries: every webhook that
			// fails closed in Enforce; a disabled one is not the server's.
			want := map[string]bool{}
			for _, def := range route.Registry() {
				if def.FailurePolicy == admissionregistrationv1.Fail {
					want[def.Name] = true
				}
			}
			if w := webhooksOf(render.ModeDrifts(audit, all, registeredFor(t, enforce, layout))); len(w) != len(want) {
				t.Errorf("%s, managed %v: Audit server behind Enforce entries: drifts in %v, want %v", layout, managed, w, want)
			}
			notHarness := func(name string) bool { return name != "harness" }
			if w := webhooksOf(render.ModeDrifts(audit, notHarness, registeredFor(t, enforce, layout))); w["harness"] || len(w) != len(want)-1 {
				t.Errorf("%s, managed %v: a disabled webhook reported: %v", layout, managed, w)
			}
		}
	}
	if got := render.ModeDrifts(route.OptionsFromConfig(configv1alpha1.Default()), all, nil); len(got) != 0 {
		t.Errorf("nothing registered: %v", got)
	}
}
