package webhooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// secretScopeIn is the default options with secret-scope in mode.
func secretScopeIn(t *testing.T, mode configv1alpha1.Mode) route.Options {
	t.Helper()
	return optionsWith(t, func(c *configv1alpha1.ServerConfig) {
		c.Webhooks = map[string]configv1alpha1.Webhook{"secret-scope": {Mode: mode}}
	})
}

// TestModeDriftDecidesInEnforce: a server whose mode for secret-scope
// differs from the one the combined entry was rendered for (a configuration
// changed and not rolled out, or entries rendered for other modes) decides
// by the stricter reading, Enforce: a Warn or Audit server called through
// the fail-closed entry denies, and so does an Enforce server called through
// the fail-open one. Each such decision carries the audit annotation
// mode-drift, a warning naming the webhook and the entry, is counted in
// gatehouse_mode_drift_reviews_total and logged; a clean object is admitted
// with the annotation and no warning. Before, the member was not in the
// server's group at all, and the request was answered with a plain allow.
func TestModeDriftDecidesInEnforce(t *testing.T) {
	bad := secretPod(scopeAnnotations("pod,,node"))
	good := secretPod(scopeAnnotations("pod"))
	for _, tc := range []struct {
		mode  configv1alpha1.Mode
		path  string
		entry string
	}{
		{configv1alpha1.ModeWarn, "/validate/combined-fail", "validating-fail.gatehouse.dev"},
		{configv1alpha1.ModeAudit, "/validate/combined-fail", "validating-fail.gatehouse.dev"},
		{configv1alpha1.ModeEnforce, "/validate/combined-ignore", "validating-ignore.gatehouse.dev"},
	} {
		t.Run(string(tc.mode)+tc.path, func(t *testing.T) {
			ts := startServerWith(t, secretScopeIn(t, tc.mode))
			drifted := modeDriftReviews.WithLabelValues("secret-scope", tc.entry, string(tc.mode))
			enforced := decisions.WithLabelValues("secret-scope", DecisionDenied, string(configv1alpha1.ModeEnforce), "ScopeEntryEmpty")
			beforeDrift, beforeEnforced := testutil.ToFloat64(drifted), testutil.ToFloat64(enforced)
			uid := "drift-" + string(tc.mode) + "-" + tc.entry

			_, r := ts.post(t, tc.path, "application/json", reviewBody(t, uid, admissionv1.Create, podKind, podResource, bad, nil))
			if r.Allowed || r.Result == nil || r.Result.Details == nil || !hasCause(r.Result.Details.Causes, "ScopeEntryEmpty") {
				t.Fatalf("a %s server called through %s must deny as Enforce: allowed=%v %s", tc.mode, tc.entry, r.Allowed, fmtCauses(r))
			}
			wantWarning := "gatehouse secret-scope: mode drift: entry " + tc.entry + " is rendered for "
			if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], wantWarning) || !strings.Contains(r.Warnings[0], "configuration says "+string(tc.mode)) {
				t.Errorf("warnings %q, want one starting %q and naming the server's mode", r.Warnings, wantWarning)
			}
			if a := r.AuditAnnotations["secret-scope."+AuditAnnotationModeDrift]; !strings.HasPrefix(a, "entry "+tc.entry+" ") || !strings.HasSuffix(a, "decided in Enforce") {
				t.Errorf("audit annotation %s = %q", "secret-scope."+AuditAnnotationModeDrift, a)
			}
			if r.AuditAnnotations["secret-scope."+AuditAnnotationCodes] != "ScopeEntryEmpty" {
				t.Errorf("audit annotations %v, want the codes as in Enforce", r.AuditAnnotations)
			}

			_, r = ts.post(t, tc.path, "application/json", reviewBody(t, uid+"-good", admissionv1.Create, podKind, podResource, good, nil))
			if !r.Allowed || len(r.Warnings) != 0 {
				t.Errorf("a clean pod: allowed=%v warnings=%q, want a quiet allow", r.Allowed, r.Warnings)
			}
			if !strings.HasPrefix(r.AuditAnnotations["secret-scope."+AuditAnnotationModeDrift], "entry "+tc.entry+" ") {
				t.Errorf("a clean pod's allow must still carry the mode-drift annotation: %v", r.AuditAnnotations)
			}

			if got := testutil.ToFloat64(drifted) - beforeDrift; got != 2 {
				t.Errorf("gatehouse_mode_drift_reviews_total{webhook=secret-scope,entry=%s,mode=%s} grew by %v, want 2", tc.entry, tc.mode, got)
			}
			if got := testutil.ToFloat64(enforced) - beforeEnforced; got != 1 {
				t.Errorf("the denial counted under mode Enforce %v times, want 1", got)
			}
			for _, id := range []string{uid, uid + "-good"} {
				if line := logLineOf(t, id); line["webhook"] != "secret-scope" || line["entry"] != tc.entry || line["configuredMode"] != string(tc.mode) {
					t.Errorf("log line of %s: %v, want the webhook, the entry and the configured mode", id, line)
				}
			}
		})
	}
}

// logLineOf is the decision log line of the review uid.
func logLineOf(t *testing.T, uid string) map[string]any {
	t.Helper()
	for _, raw := range strings.Split(logBuffer.String(), "\n") {
		if !strings.Contains(raw, `"requestID":"`+uid+`"`) {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(raw), &line); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if line["msg"] == "decision" {
			return line
		}
	}
	t.Fatalf("no decision log line of %s", uid)
	return nil
}

// TestModeDriftLeavesAgreeingModesAlone: where the entry and the server
// agree, nothing changes: Warn through the fail-open entry warns, Enforce
// through the fail-closed one denies, neither carries a mode-drift
// annotation.
func TestModeDriftLeavesAgreeingModesAlone(t *testing.T) {
	bad := secretPod(scopeAnnotations("pod,,node"))
	_, r := startServerWith(t, secretScopeIn(t, configv1alpha1.ModeWarn)).post(t, "/validate/combined-ignore", "application/json",
		reviewBody(t, "agree-warn", admissionv1.Create, podKind, podResource, bad, nil))
	if !r.Allowed || len(r.Warnings) != 1 || r.AuditAnnotations["secret-scope."+AuditAnnotationModeDrift] != "" {
		t.Errorf("Warn through validating-ignore: allowed=%v warnings=%q annotations=%v", r.Allowed, r.Warnings, r.AuditAnnotations)
	}
	_, r = startServer(t).post(t, "/validate/combined-fail", "application/json",
		reviewBody(t, "agree-enforce", admissionv1.Create, podKind, podResource, bad, nil))
	if r.Allowed || r.AuditAnnotations["secret-scope."+AuditAnnotationModeDrift] != "" || len(r.Warnings) != 0 {
		t.Errorf("Enforce through validating-fail: allowed=%v warnings=%q annotations=%v", r.Allowed, r.Warnings, r.AuditAnnotations)
	}
}

// TestModeDriftMutatingPatchesInEnforce: harness-proxy in Audit called
// through the fail-closed entry it has in Enforce patches the harnessed pod,
// as Enforce does, instead of withholding the patch; in Enforce called
// through the fail-open entry it has in Audit, likewise.
func TestModeDriftMutatingPatchesInEnforce(t *testing.T) {
	for _, tc := range []struct {
		mode        configv1alpha1.Mode
		path, entry string
	}{
		{configv1alpha1.ModeAudit, "/mutate/combined-fail", "mutating-fail.gatehouse.dev"},
		{configv1alpha1.ModeEnforce, "/mutate/combined-ignore-harnessed", "mutating-ignore-harnessed.gatehouse.dev"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ts := harnessServerWith(t, func(c *configv1alpha1.ServerConfig) {
				c.Webhooks = map[string]configv1alpha1.Webhook{"harness-proxy": {Mode: tc.mode}}
			})
			_, r := ts.post(t, tc.path, "application/json",
				reviewBodyIn(t, "proxy-"+string(tc.mode), admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", pluginPod("operator"), nil))
			if !r.Allowed || len(r.Patch) == 0 {
				t.Fatalf("harness-proxy in %s through %s must patch as Enforce: allowed=%v patch=%s annotations=%v", tc.mode, tc.entry, r.Allowed, r.Patch, r.AuditAnnotations)
			}
			if a := r.AuditAnnotations["harness-proxy."+AuditAnnotationModeDrift]; !strings.HasPrefix(a, "entry "+tc.entry+" ") {
				t.Errorf("audit annotations %v, want harness-proxy.mode-drift naming %s", r.AuditAnnotations, tc.entry)
			}
			if r.AuditAnnotations["harness-proxy."+AuditAnnotationWithheld] != "" {
				t.Errorf("the patch was applied, yet listed as withheld: %v", r.AuditAnnotations)
			}
			if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "gatehouse harness-proxy: mode drift: entry "+tc.entry) {
				t.Errorf("warnings %q, want the mode drift named", r.Warnings)
			}
		})
	}
}

// TestServedMembersHoldBothReadings: every combined endpoint runs, besides
// its own members, each webhook its group holds when all enforce or when
// none does, marked with the entry's reading, and each webhook at most once.
func TestServedMembersHoldBothReadings(t *testing.T) {
	for _, managed := range []bool{false, true} {
		opts := route.OptionsFromConfig(configv1alpha1.Default())
		opts.ManagedSelections = managed
		for _, g := range route.Groups() {
			own := g.Members(opts)
			served := g.ServedMembers(opts)
			seen := map[string]bool{}
			for _, m := range served {
				if seen[m.Def.Name] {
					t.Errorf("%s (managed %v): %s served twice", g.Name, managed, m.Def.Name)
				}
				seen[m.Def.Name] = true
				_, isOwn := route.MemberNamed(own, m.Def.Name)
				if isOwn != (m.Drift == nil) {
					t.Errorf("%s (managed %v): %s own=%v drift=%v", g.Name, managed, m.Def.Name, isOwn, m.Drift)
				}
			}
			for _, mode := range []configv1alpha1.Mode{configv1alpha1.ModeEnforce, configv1alpha1.ModeAudit} {
				for _, m := range g.Members(opts.EveryWebhookIn(mode)) {
					if !seen[m.Def.Name] {
						t.Errorf("%s (managed %v): %s, a member when every webhook is in %s, is not served", g.Name, managed, m.Def.Name, mode)
					}
				}
			}
		}
		// With every webhook enforcing, the fail-open validating groups
		// serve the fail-closed webhooks only as drift.
		for _, m := range groupNamed(t, "validating-ignore").ServedMembers(opts) {
			if m.Drift == nil || m.Drift.EntryModes != "Warn or Audit" || m.Drift.Configured != configv1alpha1.ModeEnforce {
				t.Errorf("validating-ignore serves %s with drift %+v", m.Def.Name, m.Drift)
			}
		}
	}
}

func groupNamed(t *testing.T, name string) route.Group {
	t.Helper()
	for _, g := range route.Groups() {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %s", name)
	return route.Group{}
}

// TestMemberExpressionsAreDistinct: ModeDrifts finds a webhook in a
// combined entry by its expression, so within the groups of one selection
// no webhook's expression may contain another webhook's, whatever modes and
// selections the entries were rendered with.
func TestMemberExpressionsAreDistinct(t *testing.T) {
	type candidate struct{ webhook, expr string }
	bySelection := map[[3]any][]candidate{}
	for _, managed := range []bool{false, true} {
		base := route.OptionsFromConfig(configv1alpha1.Default())
		base.ManagedSelections = managed
		for _, opts := range []route.Options{base.EveryWebhookIn(configv1alpha1.ModeEnforce), base.EveryWebhookIn(configv1alpha1.ModeAudit)} {
			for _, def := range route.Registry() {
				for _, p := range def.Placements(opts) {
					k := [3]any{def.Type, p.Namespaces, p.Accounts}
					bySelection[k] = append(bySelection[k], candidate{def.Name, route.Member{Def: def, Places: []route.Placement{p}}.MemberExpression(opts)})
				}
			}
		}
	}
	if len(bySelection) < 5 {
		t.Fatalf("only %d selections", len(bySelection))
	}
	for k, cs := range bySelection {
		for _, a := range cs {
			for _, b := range cs {
				if a.webhook != b.webhook && strings.Contains(b.expr, a.expr) {
					t.Errorf("selection %v: the expression of %s is part of %s's", k, a.webhook, b.webhook)
				}
			}
		}
	}
}
