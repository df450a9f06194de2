package webhooks

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// optionsWith is the default options with cfg's changes applied.
func optionsWith(t *testing.T, change func(*configv1alpha1.ServerConfig)) route.Options {
	t.Helper()
	cfg := configv1alpha1.Default()
	change(&cfg)
	if err := route.ValidateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return route.OptionsFromConfig(cfg)
}

// TestModesAnswer: the same denying pod through secret-scope in each mode.
// Enforce denies; Warn admits with each finding as a warning; Audit admits
// with nothing for the requester and the findings in audit annotations.
// The contract's decision, and so the metric, is the same in all three.
func TestModesAnswer(t *testing.T) {
	bad := secretPod(scopeAnnotations("pod,,node"))
	for _, mode := range []configv1alpha1.Mode{configv1alpha1.ModeEnforce, configv1alpha1.ModeWarn, configv1alpha1.ModeAudit} {
		t.Run(string(mode), func(t *testing.T) {
			ts := startServerWith(t, optionsWith(t, func(c *configv1alpha1.ServerConfig) {
				c.Webhooks = map[string]configv1alpha1.Webhook{"secret-scope": {Mode: mode}}
			}))
			counter := decisions.WithLabelValues("secret-scope", DecisionDenied, string(mode), "ScopeEntryEmpty")
			before := testutil.ToFloat64(counter)
			for _, path := range []string{"/validate/secret-scope", "/validate/combined-fail", "/validate/combined-ignore"} {
				if mode != configv1alpha1.ModeEnforce && path == "/validate/combined-fail" || mode == configv1alpha1.ModeEnforce && path == "/validate/combined-ignore" {
					// The group of the other reading: the entry was
					// rendered for another mode (TestModeDriftDecidesInEnforce).
					continue
				}
				_, r := ts.post(t, path, "application/json", reviewBody(t, "m", admissionv1.Create, podKind, podResource, bad, nil))
				switch mode {
				case configv1alpha1.ModeEnforce:
					if r.Allowed || !hasCause(r.Result.Details.Causes, "ScopeEntryEmpty") {
						t.Errorf("%s: Enforce must deny with ScopeEntryEmpty: %s", path, fmtCauses(r))
					}
				case configv1alpha1.ModeWarn:
					if !r.Allowed || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "gatehouse secret-scope (Warn, would deny): ScopeEntryEmpty at "+scopeField+": ") {
						t.Errorf("%s: Warn must admit with the finding as a warning: allowed=%v warnings=%q", path, r.Allowed, r.Warnings)
					}
				case configv1alpha1.ModeAudit:
					if !r.Allowed || len(r.Warnings) != 0 {
						t.Errorf("%s: Audit must admit silently: allowed=%v warnings=%q", path, r.Allowed, r.Warnings)
					}
				}
				if mode != configv1alpha1.ModeEnforce {
					prefix := ""
					if path != "/validate/secret-scope" {
						prefix = "secret-scope." // a combined endpoint names the member
					}
					a := r.AuditAnnotations
					if a[prefix+AuditAnnotationMode] != string(mode) || a[prefix+AuditAnnotationCodes] != "ScopeEntryEmpty" ||
						a[prefix+AuditAnnotationFindings] != "ScopeEntryEmpty at "+scopeField {
						t.Errorf("%s: audit annotations %v", path, a)
					}
				}
			}
			if got := testutil.ToFloat64(counter) - before; got != 2 {
				t.Errorf("denied decisions counted under mode %s: %v, want 2 (own endpoint and its group)", mode, got)
			}
		})
	}
}

// TestMutatingAuditWithholdsItsPatch: pod-security-defaults in Audit
// patches nothing, and records the patch it would have made; the members
// after it see the object as sent.
func TestMutatingAuditWithholdsItsPatch(t *testing.T) {
	opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) {
		c.Webhooks = map[string]configv1alpha1.Webhook{"pod-security-defaults": {Mode: configv1alpha1.ModeAudit}}
	})
	ts := startServerWith(t, opts)
	pod := secretPod(scopeAnnotations("pod"))
	_, r := ts.post(t, "/mutate/pod-security-defaults", "application/json", reviewBody(t, "a", admissionv1.Create, podKind, podResource, pod, nil))
	if !r.Allowed || len(r.Patch) != 0 {
		t.Fatalf("Audit must admit without a patch: allowed=%v patch=%s", r.Allowed, r.Patch)
	}
	withheld := r.AuditAnnotations[AuditAnnotationWithheld]
	if !strings.Contains(withheld, "add /spec/securityContext") || r.AuditAnnotations[AuditAnnotationMode] != "Audit" {
		t.Errorf("audit annotations must list the withheld patch: %v", r.AuditAnnotations)
	}
	// Enforce patches the same object.
	_, r = startServer(t).post(t, "/mutate/pod-security-defaults", "application/json", reviewBody(t, "e", admissionv1.Create, podKind, podResource, pod, nil))
	if !r.Allowed || len(r.Patch) == 0 {
		t.Fatalf("Enforce must patch: allowed=%v", r.Allowed)
	}
	// Offline: the object the validating members see is the one sent.
	opts.Namespaces = nsLabels{"team-a": {"gatehouse.dev/security-defaults": "enabled"}}
	hooks := Build(opts, func(string) bool { return true })
	decisions, admitted := NewOffline(hooks, opts).Review(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "o", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "team-a", Name: "web", Operation: admissionv1.Create, UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Object: runtime.RawExtension{Raw: mustJSON(t, pod)},
	}})
	found := false
	for _, d := range decisions {
		if d.Webhook == "pod-security-defaults" {
			found = true
			if len(d.Withheld) == 0 || d.Mutated || len(d.Response.Patches) > 0 {
				t.Errorf("offline pod-security-defaults in Audit: withheld=%v mutated=%v", d.Withheld, d.Mutated)
			}
		}
	}
	if !found {
		t.Fatalf("pod-security-defaults did not decide offline: %+v", decisions)
	}
	if spec, _ := admitted["spec"].(map[string]any); spec != nil && spec["securityContext"] != nil {
		t.Errorf("the object after the mutating members carries the withheld defaults")
	}
}

// TestModesRenderFailurePolicyIgnore: every entry of a webhook in Warn or
// Audit fails open, in both layouts; in Enforce the registry's own policy
// holds; and every placement of every webhook lands in exactly one group
// whatever the modes.
func TestModesRenderFailurePolicyIgnore(t *testing.T) {
	for _, managed := range []bool{false, true} {
		for _, mode := range []configv1alpha1.Mode{configv1alpha1.ModeEnforce, configv1alpha1.ModeAudit} {
			opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) {
				c.DefaultMode = mode
				c.Harness.ManageSelections = managed
			})
			for _, def := range route.Registry() {
				for _, p := range def.Placements(opts) {
					if mode != configv1alpha1.ModeEnforce && p.FailurePolicy != admissionregistrationv1.Ignore {
						t.Errorf("managed=%v %s%s in %s: failurePolicy %s", managed, def.Name, p.Suffix, mode, p.FailurePolicy)
					}
					n := 0
					for _, g := range route.Groups() {
						if g.Type == def.Type && g.FailurePolicy == p.FailurePolicy && g.Namespaces == p.Namespaces && g.Accounts == p.Accounts {
							n++
						}
					}
					if n != 1 {
						t.Errorf("managed=%v %s%s in %s: in %d groups, want 1", managed, def.Name, p.Suffix, mode, n)
					}
				}
			}
			for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined} {
				for _, e := range renderEntries(t, route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts}) {
					if mode != configv1alpha1.ModeEnforce && e.failure != admissionregistrationv1.Ignore {
						t.Errorf("%s %s in %s: failurePolicy %s", layout, e.name, mode, e.failure)
					}
				}
			}
		}
	}
}

// nsLabels is a NamespaceReader over fixed labels.
type nsLabels map[string]map[string]string

func (n nsLabels) NamespaceLabels(name string) (map[string]string, error) { return n[name], nil }

// TestExemptionsAreNeverJudged: requests exempt by namespace name, namespace
// label, username, group or service account are answered with a plain
// allow and counted as exempt, by the server; the rest are judged.
func TestExemptionsAreNeverJudged(t *testing.T) {
	opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) {
		c.Exemptions = configv1alpha1.Exemptions{
			Namespaces:      []string{"kube-system", "cni-system"},
			NamespaceLabels: []configv1alpha1.NamespaceLabel{{Key: "example.com/tier", Operator: "In", Values: []string{"infra"}}},
			Usernames:       []string{"breakglass"},
			Groups:          []string{"ops"},
			ServiceAccounts: []string{"cert-manager/*", "flux/kustomize"},
		}
	})
	opts.Namespaces = nsLabels{"infra-a": {"example.com/tier": "infra"}, "team-a": {"example.com/tier": "apps"}}
	hooks := Build(opts, func(string) bool { return true })
	var scope *Webhook
	for _, w := range hooks {
		if w.Name == "secret-scope" {
			scope = w
		}
	}
	bad := mustJSON(t, secretPod(scopeAnnotations(",")))
	cases := []struct {
		name, namespace, user string
		groups                []string
		exempt                bool
	}{
		{"judged", "team-a", "alice", nil, false},
		{"namespace by name", "cni-system", "alice", nil, true},
		{"default list replaced", "kube-node-lease", "alice", nil, false},
		{"namespace by label", "infra-a", "alice", nil, true},
		{"username", "team-a", "breakglass", nil, true},
		{"group", "team-a", "alice", []string{"system:authenticated", "ops"}, true},
		{"service account by namespace", "team-a", "system:serviceaccount:cert-manager:cainjector", []string{"system:serviceaccounts:cert-manager"}, true},
		{"service account by name", "team-a", "system:serviceaccount:flux:kustomize", nil, true},
		{"other service account", "team-a", "system:serviceaccount:flux:helm", nil, false},
	}
	for _, tc := range cases {
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID: "x", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: tc.namespace, Name: "web", Operation: admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{Username: tc.user, Groups: tc.groups}, Object: runtime.RawExtension{Raw: bad},
		}}
		counter := decisions.WithLabelValues("secret-scope", DecisionExempt, "Enforce", "")
		before := testutil.ToFloat64(counter)
		v := scope.Admission.Handler.(*endpoint).Handle(context.Background(), req)
		exempt := testutil.ToFloat64(counter) > before
		if tc.exempt != v.Allowed || tc.exempt != exempt {
			t.Errorf("%s: allowed=%v counted exempt=%v, want exempt=%v", tc.name, v.Allowed, exempt, tc.exempt)
		}
		// The rendered condition decides the user exemptions alike.
		cond := opts.ExemptionCondition()
		prg := compile(t, cond[0].Expression)
		sent, err := route.EvalMatchCondition(prg, route.CelRequest(&req), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if byUser := opts.ExemptRequester(&req); sent == byUser {
			t.Errorf("%s: matchCondition sends=%v, server exempts the requester=%v", tc.name, sent, byUser)
		}
		// The rendered namespaceSelector decides the namespace exemptions alike.
		sel, err := metav1.LabelSelectorAsSelector(opts.ExemptionSelector("gatehouse-system"))
		if err != nil {
			t.Fatal(err)
		}
		nsl := map[string]string{"kubernetes.io/metadata.name": tc.namespace}
		for k, val := range opts.Namespaces.(nsLabels)[tc.namespace] {
			nsl[k] = val
		}
		if selected := sel.Matches(labels.Set(nsl)); selected == (exempt && !opts.ExemptRequester(&req)) {
			t.Errorf("%s: namespaceSelector sends=%v", tc.name, selected)
		}
	}
	// The server's own namespace is always left out of the rendered selector.
	sel := opts.ExemptionSelector("gatehouse-system")
	if !slices.Contains(sel.MatchExpressions[0].Values, "gatehouse-system") {
		t.Errorf("own namespace not exempt: %v", sel.MatchExpressions)
	}
}

// TestExemptionConditionInEveryEntry: with exempt requesters, every
// rendered entry of both layouts carries the condition, first.
func TestExemptionConditionInEveryEntry(t *testing.T) {
	opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) { c.Exemptions.Usernames = []string{"breakglass"} })
	for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined} {
		entries := renderEntries(t, route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts})
		if len(entries) == 0 {
			t.Fatal("nothing rendered")
		}
		for _, e := range entries {
			if len(e.conditions) == 0 || e.conditions[0].Name != route.ExemptionConditionName {
				t.Errorf("%s %s: conditions %v", layout, e.name, e.conditions)
			}
			if !e.sends(t, admissionregistrationv1.Create, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "", "team-a", "web", "breakglass", false, map[string]string{"kubernetes.io/metadata.name": "team-a"}) {
				continue
			}
			t.Errorf("%s %s sends the exempt user's request", layout, e.name)
		}
	}
	// Without exemptions by user no condition is added (deploy/ unchanged).
	for _, e := range renderEntries(t, route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: route.OptionsFromConfig(configv1alpha1.Default())}) {
		for _, c := range e.conditions {
			if c.Name == route.ExemptionConditionName {
				t.Errorf("%s carries %s with no exempt requester", e.name, c.Name)
			}
		}
	}
}
