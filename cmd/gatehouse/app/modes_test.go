package app

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// badScopePod is a Pod whose secret-operator scope has an empty entry:
// secret-scope denies it in Enforce.
const badScopePod = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a}
spec:
  containers: [{name: app, image: registry.example/app:1}]
  volumes:
    - name: tls
      ephemeral:
        volumeClaimTemplate:
          metadata:
            annotations: {secrets.kubedoop.dev/class: tls, secrets.kubedoop.dev/scope: "pod,,node"}
          spec:
            storageClassName: secrets.kubedoop.dev
            accessModes: [ReadWriteOnce]
            resources: {requests: {storage: 1Mi}}
`

// TestCheckModes: check decides as a server in the same modes. Enforce
// denies (exit 1); Warn and Audit admit (exit 0) and still name the
// findings, saying the object was admitted only because of the mode.
func TestCheckModes(t *testing.T) {
	code, stdout, _ := run(t, badScopePod, "check", "-f", "-", "--namespace-labels", "team-a")
	if code != exitDenied || !strings.Contains(stdout, "secret-scope: denied") {
		t.Fatalf("Enforce: exit %d\n%s", code, stdout)
	}
	for _, mode := range []string{"Warn", "Audit"} {
		code, stdout, stderr := run(t, badScopePod, "check", "-f", "-", "--mode", "secret-scope="+mode, "--namespace-labels", "team-a")
		if code != 0 {
			t.Fatalf("%s: exit %d, want 0 (stderr %q)\n%s", mode, code, stderr, stdout)
		}
		for _, want := range []string{
			"warned    Pod team-a/web",
			"secret-scope: would deny, admitted in " + mode,
			"ScopeEntryEmpty",
			"1 object, 3 results: 0 denied, 0 undecided, 1 warned, 0 allowed, 0 skipped",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: output lacks %q:\n%s", mode, want, stdout)
			}
		}
		_, stdout, _ = run(t, badScopePod, "check", "-f", "-", "-o", "json", "--default-mode", "Audit", "--mode", "secret-scope="+mode, "--namespace-labels", "team-a")
		var out struct {
			Results []CheckResult `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range out.Results {
			if r.Webhook == "secret-scope" {
				found = true
				if !r.Allowed || r.Mode != mode || len(r.Findings) == 0 || r.Findings[0].Code != "ScopeEntryEmpty" {
					t.Errorf("%s: JSON result %+v", mode, r)
				}
			} else if r.Mode != "Audit" {
				t.Errorf("%s: %s has mode %q, want the default, Audit", mode, r.Webhook, r.Mode)
			}
		}
		if !found {
			t.Errorf("%s: no secret-scope result", mode)
		}
	}
}

// TestCheckModeFlagsAreValidated: a mode a webhook cannot take is a usage
// error naming the flag or the webhook and why, on one line, each thing
// said once: a bad value as every bad enum value is phrased
// (`<flag>: Unsupported value: "x": supported values: "A", "B", "C"`), a
// configuration the flags make invalid as every invalid configuration.
func TestCheckModeFlagsAreValidated(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--default-mode Warn", `gatehouse: invalid configuration with flags: defaultMode: Invalid value: "Warn": mutating webhooks have no Warn mode; ` +
			"give pod-security-defaults, harness-proxy and harness-labels a mode of their own (Enforce or Audit)"},
		{"--default-mode enforce", `gatehouse: --default-mode: Unsupported value: "enforce": supported values: "Enforce", "Warn", "Audit"`},
		{"--mode pod-security-defaults=Warn", `gatehouse: invalid configuration with flags: webhooks[pod-security-defaults].mode: Invalid value: "Warn": ` +
			"mutating webhooks have no Warn mode: they patch (Enforce) or record what they would patch (Audit)"},
		{"--mode secret-scope=warn", `gatehouse: --mode secret-scope: Unsupported value: "warn": supported values: "Enforce", "Warn", "Audit"`},
		{"--mode secret-scope", `gatehouse: --mode "secret-scope": must be NAME=MODE, e.g. secret-scope=Warn`},
		{"--mode no-such=Warn", `gatehouse: --mode NAME: Unsupported value: "no-such": supported values: "pod-security-defaults", "harness-proxy", ` +
			`"harness-labels", "secret-scope", "service-account", "component-overrides", "harness", "dependency-group", "crd-source", ` +
			`"harness-labels-guard", "pod-security", "exception"`},
	} {
		args := append([]string{"check", "-f", "-"}, strings.Fields(tc.args)...)
		code, _, stderr := run(t, badScopePod, args...)
		if code != 2 || stderr != tc.want+"\n" {
			t.Errorf("%s: exit %d, stderr\n %q\nwant 2 and\n %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestCheckExemptions: an object in an exempt namespace is never judged.
func TestCheckExemptions(t *testing.T) {
	exempt := strings.Replace(badScopePod, "namespace: team-a", "namespace: kube-system", 1)
	code, stdout, _ := run(t, exempt, "check", "-f", "-")
	if code != 0 || !strings.Contains(stdout, "secret-scope: exempt") {
		t.Errorf("exit %d, want 0 and secret-scope exempt:\n%s", code, stdout)
	}
}

// TestCheckExemptionByLabelsNeedsTheNamespace: with an exemption by
// namespace labels, an object whose Namespace check was not given may be
// exempt, so no webhook's verdict on it stands: every result is undecided,
// in the in-process layout too (whose policies would otherwise decide
// secret-scope). Given the namespace, it is exempt or judged.
func TestCheckExemptionByLabelsNeedsTheNamespace(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\nexemptions:\n"+
		"  namespaceLabels: [{key: example.com/unmanaged, operator: Exists}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outcomes := func(wantCode int, args ...string) string {
		t.Helper()
		code, stdout, stderr := run(t, badScopePod, append([]string{"check", "-f", "-", "-o", "json", "--config", cfg}, args...)...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, wantCode, stderr)
		}
		var out struct {
			Results []CheckResult `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range out.Results {
			o := r.Outcome
			if r.Exempt {
				o = "exempt"
			}
			seen[o+" "+strings.Join(r.Missing, ",")] = true
		}
		return strings.Join(slices.Sorted(maps.Keys(seen)), "; ")
	}
	for _, layout := range []string{"combined", "in-process"} {
		if got := outcomes(exitUndecided, "--layout", layout); got != "undecided Namespace team-a" {
			t.Errorf("%s, the namespace not given: %s, want every result undecided", layout, got)
		}
	}
	if got := outcomes(exitOK, "--namespace-labels", "team-a=example.com/unmanaged=yes"); got != "exempt " {
		t.Errorf("an exempt namespace: %s", got)
	}
	if got := outcomes(exitDenied, "--namespace-labels", "team-a"); !strings.Contains(got, "denied ") || strings.Contains(got, "undecided") {
		t.Errorf("a namespace that is not exempt: %s", got)
	}
}
