package chart

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// gatehouseBin is the gatehouse binary of the repository, built once by
// TestMain.
var gatehouseBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gatehouse-chart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gatehouseBin = filepath.Join(dir, "gatehouse")
	build := exec.Command("go", "build", "-o", gatehouseBin, "./cmd/gatehouse")
	build.Dir = repo
	build.Env = append(os.Environ(), "GOWORK=off")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building gatehouse:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// entryCases are the values TestChartEntriesAreManifests combines: each
// mode a release can default to, per-webhook modes and switches, the
// exemptions of every kind, the configuration keys the entries select by,
// and two release namespaces.
var (
	defaultModes = []any{nil, "Enforce", "Warn", "Audit"}
	webhookSets  = []map[string]any{
		nil,
		{"secret-scope": map[string]any{"mode": "Warn"}},
		{"pod-security-defaults": map[string]any{"mode": "Audit"}, "harness": map[string]any{"mode": "Enforce"}},
		{"service-account": map[string]any{"enabled": false}, "harness-proxy": map[string]any{"mode": "Audit"}},
	}
	exemptionSets = []map[string]any{nil, {
		"namespaces":      []any{"kube-system", "kube-node-lease", "legacy"},
		"namespaceLabels": []any{map[string]any{"key": "team", "operator": "In", "values": []any{"platform"}}, map[string]any{"key": "sandbox", "operator": "Exists"}},
		"usernames":       []any{"alice"},
		"groups":          []any{"ops"},
		"serviceAccounts": []any{"ci/deployer", "argo/*"},
	}}
	releaseNamespaces = []string{namespace, "platform"}
)

// configSets are the chart's default config and testdata/entry-keys-config.yaml,
// which changes every key that shapes the entries.
func configSets(t *testing.T) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/entry-keys-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := yaml.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	return []map[string]any{nil, keys}
}

// TestChartEntriesAreManifests: for every combination of entryCases, the
// chart's Deployment, run with its own arguments and its ConfigMap's
// configuration (`serve ... --print-webhook-configurations`, which prints
// what its leader writes), writes exactly what `gatehouse manifests
// --config` renders for the same values (the config Helm coalesces, with
// defaultMode, webhooks and exemptions; the release's namespace). So `helm
// install --set defaultMode=Audit` (or any other combination) registers the
// entries `gatehouse manifests` shows, with no rendering step in between.
// Beside the equality: in Audit with no webhook overridden every entry
// fails open, and with exemptions every entry's gatehouse-not-exempt
// condition leaves out exactly the exempt requesters (CEL, as the API
// server evaluates it).
func TestChartEntriesAreManifests(t *testing.T) {
	combinations, configs := 0, configSets(t)
	for _, ns := range releaseNamespaces {
		for _, mode := range defaultModes {
			for _, hooks := range webhookSets {
				for _, exemptions := range exemptionSets {
					for _, config := range configs {
						values := map[string]any{}
						if mode != nil {
							values["defaultMode"] = mode
						}
						if hooks != nil {
							values["webhooks"] = hooks
						}
						if mode == "Warn" {
							// The mutating webhooks have no Warn: each
							// needs a mode of its own.
							withOwn := map[string]any{"pod-security-defaults": map[string]any{"mode": "Enforce"},
								"harness-proxy": map[string]any{"mode": "Audit"}, "harness-labels": map[string]any{"mode": "Enforce"}}
							for k, v := range hooks {
								withOwn[k] = v
							}
							values["webhooks"] = withOwn
						}
						if exemptions != nil {
							values["exemptions"] = exemptions
						}
						if config != nil {
							values["config"] = config
						}
						name := fmt.Sprintf("%s mode=%v webhooks=%v exemptions=%v config=%v", ns, mode, hooks != nil, exemptions != nil, config != nil)
						written, rendered := entriesOfRelease(t, ns, values)
						if diff := cmp.Diff(objectsByKey(t, rendered), objectsByKey(t, written)); diff != "" {
							t.Errorf("%s: the release writes other entries than gatehouse manifests renders (-manifests +release):\n%s", name, diff)
							continue
						}
						checkWritten(t, name, objectsByKey(t, written), mode == "Audit" && hooks == nil, exemptions != nil)
						combinations++
					}
				}
			}
		}
	}
	if want := len(releaseNamespaces) * len(defaultModes) * len(webhookSets) * len(exemptionSets) * len(configs); combinations != want {
		t.Errorf("%d of %d combinations compared", combinations, want)
	}
}

// entriesOfRelease renders the chart in ns with values and returns what its
// Deployment writes, and what `gatehouse manifests` renders for the values.
func entriesOfRelease(t *testing.T, ns string, values map[string]any) (written, rendered []byte) {
	t.Helper()
	objs, err := renderChartIn(t, ns, values)
	if err != nil {
		t.Fatalf("%v: %v", values, err)
	}
	dir := t.TempDir()
	served := filepath.Join(dir, "served.yaml")
	cfg := objs[fmt.Sprintf("v1 ConfigMap %s/gatehouse-config", ns)]["data"].(map[string]any)["config.yaml"]
	writeYAML(t, served, cfg)
	container := objs[fmt.Sprintf("apps/v1 Deployment %s/gatehouse", ns)]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	var args []string
	for _, a := range container["args"].([]any) {
		args = append(args, strings.Replace(a.(string), "/etc/gatehouse/config.yaml", served, 1))
	}
	if !strings.Contains(strings.Join(args, " "), "--manage-webhook-configurations") {
		t.Fatalf("the Deployment runs %v: without --manage-webhook-configurations nobody writes the entries", args)
	}
	written = runGatehouse(t, append(args, "--print-webhook-configurations")...)

	// The values as Helm coalesces them, read as the server configuration
	// the chart says it renders: config, with the modes and exemptions.
	c := loadChart(t)
	coalesced, err := chartutil.CoalesceValues(c, values)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "gatehouse.dev/v1alpha1", "kind": "ServerConfig"}
	for k, v := range coalesced["config"].(map[string]any) {
		want[k] = v
	}
	for _, k := range []string{"defaultMode", "webhooks", "exemptions"} {
		if v, ok := values[k]; ok {
			want[k] = v
		}
	}
	asValues := filepath.Join(dir, "values.yaml")
	writeYAML(t, asValues, want)
	rendered = runGatehouse(t, "manifests", "--config", asValues, "--namespace", ns, "--certificate", "")
	return written, rendered
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runGatehouse(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(gatehouseBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gatehouse %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// checkWritten checks what a release writes on its own terms: entries in
// both configurations, every one failing open when allOpen, every one
// leaving out the exempt requesters when exempt.
func checkWritten(t *testing.T, name string, objs map[string]map[string]any, allOpen, exempt bool) {
	t.Helper()
	entries := 0
	for key, obj := range objs {
		hooks, _ := obj["webhooks"].([]any)
		for _, h := range hooks {
			entry := h.(map[string]any)
			entries++
			if allOpen && entry["failurePolicy"] != "Ignore" {
				t.Errorf("%s: %s %s fails closed in Audit", name, key, entry["name"])
			}
			if exempt {
				checkExemptionCondition(t, entry)
			}
		}
	}
	if entries < 5 {
		t.Errorf("%s: only %d entries written", name, entries)
	}
}
