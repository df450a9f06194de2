package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestDeployedWebhookConfigurationsMatchTheRegistry keeps deploy/ equal to
// what the registry renders for the configuration deploy/default runs
// with: a webhook added, removed or re-routed in the registry, or a
// configuration that selects otherwise (harness.manageSelections),
// fails here until `make manifests` regenerates deploy/.
func TestDeployedWebhookConfigurationsMatchTheRegistry(t *testing.T) {
	raw, err := os.ReadFile("../../../deploy/default/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "manifests", "--config", config)
	if code != exitOK {
		t.Fatalf("manifests: exit %d: %s", code, stderr)
	}
	onDisk, err := os.ReadFile("../../../deploy/webhooks/webhookconfigurations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != stdout {
		t.Fatalf("deploy/webhooks/webhookconfigurations.yaml is stale; run `make manifests`\n--- rendered\n%s", stdout)
	}
}

// TestChartSchemaNamesTheRegistry: the Helm chart's values.schema.json
// takes a mode for exactly the registry's webhooks, and no Warn for a
// mutating one (it patches or it is off), so a webhook added to the
// registry cannot be missing from the chart's values.
func TestChartSchemaNamesTheRegistry(t *testing.T) {
	raw, err := os.ReadFile("../../../charts/gatehouse/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Webhooks struct {
				Properties map[string]struct {
					Properties struct {
						Mode struct {
							Enum []string `json:"enum"`
						} `json:"mode"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"webhooks"`
		} `json:"properties"`
	}
	if err := yaml.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	inSchema := schema.Properties.Webhooks.Properties
	for _, d := range route.Registry() {
		modes, ok := inSchema[d.Name]
		if !ok {
			t.Errorf("values.schema.json: webhooks.%s is missing", d.Name)
			continue
		}
		want := []string{ModeEnforce, ModeWarn, ModeAudit}
		if d.Type == route.Mutating {
			want = []string{ModeEnforce, ModeAudit}
		}
		if !slices.Equal(modes.Properties.Mode.Enum, want) {
			t.Errorf("values.schema.json: webhooks.%s.mode takes %v, want %v", d.Name, modes.Properties.Mode.Enum, want)
		}
		delete(inSchema, d.Name)
	}
	for name := range inSchema {
		t.Errorf("values.schema.json: webhooks.%s is not in the registry", name)
	}
}

// entryKeys are the configuration keys that change the webhook
// configurations `gatehouse manifests` renders, besides the modes, the
// webhooks switched off and the exemptions (which the chart handles itself).
var entryKeys = []string{
	"harness.failClosedNamespaceLabel",
	"harness.manageSelections",
	"harness.scopedNamespaceLabel",
	"overrides.configMapName",
	"overrides.namespace",
	"podSecurity.namespaceLabel",
	"products.groupSuffixes",
}

// chartHandled are the configuration keys the chart renders into its own
// webhook configurations, or refuses, by other means.
var chartHandled = []string{"apiVersion", "kind", "webhooks", "defaultMode", "exemptions"}

// configLeaves are the JSON paths of the leaves of ServerConfig (a list of
// structs is one leaf, and so is a struct that encodes itself, such as
// metav1.Duration), chartHandled excluded.
func configLeaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		path := strings.TrimPrefix(prefix+"."+name, ".")
		if slices.Contains(chartHandled, path) {
			continue
		}
		if f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(reflect.TypeFor[json.Marshaler]()) {
			out = append(out, configLeaves(f.Type, path)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

// TestEveryKeyThatShapesTheEntriesIsCombined: every key of the server
// configuration is changed in turn to another valid value, and the webhook
// configurations are rendered again (as the chart's own were, from
// deploy/default's configuration): exactly entryKeys change them. The
// chart's e2e/chart/testdata/entry-keys-config.yaml changes exactly those,
// so that TestChartEntriesAreManifests combines every key that shapes the
// entries with the modes and exemptions.
func TestEveryKeyThatShapesTheEntriesIsCombined(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	yes := func(v bool) *bool { return &v }
	change := map[string]func(*configv1alpha1.ServerConfig){
		"serving.port":            func(c *configv1alpha1.ServerConfig) { c.Serving.Port = 8443 },
		"serving.host":            func(c *configv1alpha1.ServerConfig) { c.Serving.Host = "127.0.0.1" },
		"serving.certDir":         func(c *configv1alpha1.ServerConfig) { c.Serving.CertDir = "/other" },
		"serving.tlsMinVersion":   func(c *configv1alpha1.ServerConfig) { c.Serving.TLSMinVersion = "1.3" },
		"serving.enableHTTP2":     func(c *configv1alpha1.ServerConfig) { c.Serving.EnableHTTP2 = true },
		"serving.enableProfiling": func(c *configv1alpha1.ServerConfig) { c.Serving.EnableProfiling = true },
		"serving.probeAddress":    func(c *configv1alpha1.ServerConfig) { c.Serving.ProbeAddress = ":9081" },
		"serving.metricsAddress":  func(c *configv1alpha1.ServerConfig) { c.Serving.MetricsAddress = ":9080" },
		"products.groupSuffixes":  func(c *configv1alpha1.ServerConfig) { c.Products.GroupSuffixes = []string{".example.org"} },
		"serviceAccounts.preset":  func(c *configv1alpha1.ServerConfig) { c.ServiceAccounts.Preset = configv1alpha1.PresetDerived },
		"serviceAccounts.products": func(c *configv1alpha1.ServerConfig) {
			c.ServiceAccounts.Products = []configv1alpha1.ProductServiceAccount{{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster", Rule: configv1alpha1.RuleNone}}
		},
		"podSecurity.namespaceLabel":                    func(c *configv1alpha1.ServerConfig) { c.PodSecurity.NamespaceLabel = "example.org/hardened=yes" },
		"podSecurity.defaults.runAsUser":                func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.RunAsUser = i64(2000) },
		"podSecurity.defaults.runAsGroup":               func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.RunAsGroup = i64(2000) },
		"podSecurity.defaults.fsGroup":                  func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.FSGroup = i64(2000) },
		"podSecurity.defaults.fsGroupChangePolicy":      func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.FSGroupChangePolicy = str("Always") },
		"podSecurity.defaults.runAsNonRoot":             func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.RunAsNonRoot = yes(true) },
		"podSecurity.defaults.seccompProfileType":       func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.SeccompProfileType = str("Unconfined") },
		"podSecurity.defaults.allowPrivilegeEscalation": func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.AllowPrivilegeEscalation = yes(false) },
		"podSecurity.defaults.capabilitiesDrop":         func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.CapabilitiesDrop = []string{"NET_RAW"} },
		"overrides.namespace":                           func(c *configv1alpha1.ServerConfig) { c.Overrides.Namespace = "ops" },
		"overrides.configMapName":                       func(c *configv1alpha1.ServerConfig) { c.Overrides.ConfigMapName = "overrides" },
		"overrides.componentLabel":                      func(c *configv1alpha1.ServerConfig) { c.Overrides.ComponentLabel = "example.org/component" },
		"overrides.componentTable":                      func(c *configv1alpha1.ServerConfig) { c.Overrides.ComponentTable = "upstream-26f231b" },
		"overrides.components": func(c *configv1alpha1.ServerConfig) {
			c.Overrides.ComponentTable = ""
			c.Overrides.Components = []configv1alpha1.OverrideComponent{{Name: "net", Kinds: []string{"DaemonSet"}, Scope: configv1alpha1.ScopeSingleton}}
		},
		"harness.proxy.host":               func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.Host = "proxy.example.svc" },
		"harness.proxy.port":               func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.Port = 8443 },
		"harness.proxy.caConfigMap":        func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.CAConfigMap = "other-ca" },
		"harness.failClosedNamespaceLabel": func(c *configv1alpha1.ServerConfig) { c.Harness.FailClosedNamespaceLabel = "example.org/harnessed" },
		"harness.scopedNamespaceLabel":     func(c *configv1alpha1.ServerConfig) { c.Harness.ScopedNamespaceLabel = "example.org/scoped" },
		"harness.manageSelections":         func(c *configv1alpha1.ServerConfig) { c.Harness.ManageSelections = false },
		"exceptions.namespaced":            func(c *configv1alpha1.ServerConfig) { c.Exceptions.Namespaced = true },
		"exceptions.maxDuration":           func(c *configv1alpha1.ServerConfig) { c.Exceptions.MaxDuration.Duration = 168 * time.Hour },
		"audit.interval":                   func(c *configv1alpha1.ServerConfig) { c.Audit.Interval = "5m" },
		"audit.pageSize":                   func(c *configv1alpha1.ServerConfig) { c.Audit.PageSize = 50 },
		"audit.qps":                        func(c *configv1alpha1.ServerConfig) { c.Audit.QPS = 5 },
		"audit.burst":                      func(c *configv1alpha1.ServerConfig) { c.Audit.Burst = 10 },
		"audit.reports.apis": func(c *configv1alpha1.ServerConfig) {
			c.Audit.Reports.APIs = []configv1alpha1.ReportAPI{configv1alpha1.ReportAPIOpenReports}
		},
	}
	base := func() configv1alpha1.ServerConfig {
		cfg := configv1alpha1.Default()
		cfg.Harness.ManageSelections = true // deploy/default's, and the chart's
		return cfg
	}
	render := func(cfg configv1alpha1.ServerConfig) string {
		t.Helper()
		if err := route.ValidateConfig(cfg); err != nil {
			t.Fatal(err)
		}
		out, err := render.WebhookConfigurations(route.ManifestOptions{Namespace: DefaultNamespace, Service: DefaultService,
			Certificate: DefaultCertificate, Options: route.OptionsFromConfig(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	own := render(base())
	var shaping []string
	for _, path := range configLeaves(reflect.TypeFor[configv1alpha1.ServerConfig](), "") {
		f, ok := change[path]
		if !ok {
			t.Errorf("configuration key %s: no change to try; add one", path)
			continue
		}
		cfg := base()
		f(&cfg)
		if render(cfg) != own {
			shaping = append(shaping, path)
		}
		delete(change, path)
	}
	for path := range change {
		t.Errorf("%s is not a key of the configuration", path)
	}
	slices.Sort(shaping)
	if !slices.Equal(shaping, entryKeys) {
		t.Errorf("the keys that change the webhook configurations are %v, entryKeys says %v", shaping, entryKeys)
	}

	// The chart test's file: exactly these keys, each changed.
	raw, err := os.ReadFile("../../../e2e/chart/testdata/entry-keys-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var combined map[string]any
	if err := yaml.Unmarshal(raw, &combined); err != nil {
		t.Fatal(err)
	}
	var set []string
	var leaves func(prefix string, v any)
	leaves = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, sub := range m {
				leaves(strings.TrimPrefix(prefix+"."+k, "."), sub)
			}
			return
		}
		set = append(set, prefix)
	}
	leaves("", combined)
	if slices.Sort(set); !slices.Equal(set, entryKeys) {
		t.Errorf("e2e/chart/testdata/entry-keys-config.yaml sets %v, want exactly %v", set, entryKeys)
	}
	cfg := base()
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	chart, changed := jsonData(t, base()), jsonData(t, cfg)
	for _, key := range entryKeys {
		if reflect.DeepEqual(lookupPath(chart, key), lookupPath(changed, key)) {
			t.Errorf("e2e/chart/testdata/entry-keys-config.yaml: %s keeps the chart's value %v", key, lookupPath(chart, key))
		}
	}
}

// lookupPath is the value at a dotted path of data.
func lookupPath(data any, path string) any {
	for _, part := range strings.Split(path, ".") {
		m, _ := data.(map[string]any)
		data = m[part]
	}
	return data
}

// jsonData is v as encoding/json decodes it into any.
func jsonData(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServePrintsWhatManifestsRenders: what the leader of `serve
// --manage-webhook-configurations` writes (--print-webhook-configurations)
// is what `gatehouse manifests` renders for the same configuration, modes
// and namespace, without a cert-manager Certificate (the leader writes the
// caBundle itself), byte for byte.
func TestServePrintsWhatManifestsRenders(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--default-mode", "Audit"},
		{"--manage-selections", "--namespace", "platform", "--mode", "secret-scope=Warn"},
	} {
		code, served, stderr := run(t, "", append([]string{"serve", "--print-webhook-configurations"}, args...)...)
		if code != 0 {
			t.Fatalf("serve %v: exit %d: %s", args, code, stderr)
		}
		code, rendered, stderr := run(t, "", append([]string{"manifests", "--certificate", ""}, args...)...)
		if code != 0 {
			t.Fatalf("manifests %v: exit %d: %s", args, code, stderr)
		}
		if served != rendered {
			t.Errorf("serve --print-webhook-configurations %v differs from manifests:\n--- serve\n%s\n--- manifests\n%s", args, served, rendered)
		}
		if !strings.Contains(served, "kind: ValidatingWebhookConfiguration") || strings.Contains(served, "inject-ca-from") {
			t.Errorf("serve --print-webhook-configurations %v: no validating configuration, or a cainjector annotation:\n%s", args, served)
		}
	}
}

// TestManifestsDefaultsPolicy: --defaults-policy adds the PSC defaults'
// MutatingAdmissionPolicy to the in-process layout, and is a usage error
// with another layout rather than silently ignored.
func TestManifestsDefaultsPolicy(t *testing.T) {
	code, stdout, stderr := run(t, "", "manifests", "--layout", "in-process", "--defaults-policy")
	if code != exitOK || !strings.Contains(stdout, "kind: MutatingAdmissionPolicy\n") || !strings.Contains(stdout, "name: gatehouse-pod-security-defaults\n") {
		t.Errorf("in-process with the policy: exit %d, stderr %q, policy rendered: %v", code, stderr, strings.Contains(stdout, "MutatingAdmissionPolicy"))
	}
	if code, stdout, _ := run(t, "", "manifests", "--layout", "in-process"); code != exitOK || strings.Contains(stdout, "MutatingAdmissionPolicy") {
		t.Errorf("in-process without the policy: exit %d, policy rendered: %v", code, strings.Contains(stdout, "MutatingAdmissionPolicy"))
	}
	code, _, stderr = run(t, "", "manifests", "--defaults-policy")
	if code != exitUsage || !strings.Contains(stderr, "--defaults-policy") || !strings.Contains(stderr, "--layout in-process") {
		t.Errorf("combined with the policy: exit %d, stderr %q, want a usage error naming both flags", code, stderr)
	}
}
