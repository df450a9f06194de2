package v1alpha1

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var knownWebhooks = []string{"secret-scope", "service-account"}

func ptr[T any](v T) *T { return &v }

// lines is errs one a line, as gatehouse prints them.
func lines(errs field.ErrorList) string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return strings.Join(out, "\n")
}

// writeConfig writes content to a fresh file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefault(t *testing.T) {
	want := ServerConfig{
		APIVersion: "gatehouse.dev/v1alpha1",
		Kind:       "ServerConfig",
		Serving: Serving{
			Port:           9443,
			TLSMinVersion:  "1.2",
			ProbeAddress:   ":8081",
			MetricsAddress: ":8080",
		},
		Products:        Products{GroupSuffixes: []string{".kubedoop.dev"}},
		ServiceAccounts: ServiceAccounts{Preset: PresetReleased},
		PodSecurity:     PodSecurity{NamespaceLabel: "gatehouse.dev/security-defaults=enabled"},
		Overrides: Overrides{Namespace: "unbounded-system", ConfigMapName: "unbounded-component-overrides", ComponentLabel: "app.kubernetes.io/component",
			ComponentTable: DefaultComponentTable},
		// The proxy's defaults are the policy's, laid over these when the
		// options are built (webhooks/route/options.go).
		Harness:     Harness{FailClosedNamespaceLabel: "gatehouse.dev/harnessed", ScopedNamespaceLabel: "gatehouse.dev/scoped"},
		DefaultMode: ModeEnforce,
		Exemptions:  Exemptions{Namespaces: []string{"kube-system", "kube-node-lease"}},
		Exceptions:  Exceptions{MaxDuration: metav1.Duration{Duration: 720 * time.Hour}},
		Audit: Audit{Interval: "1h", PageSize: 500, QPS: 20, Burst: 40,
			Reports: AuditReports{APIs: []ReportAPI{ReportAPIPolicyReport}}},
	}
	got := Default()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Default() = %+v, want %+v", got, want)
	}
	if err := got.Validate(knownWebhooks, PolicyChecks{}); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
	// Each call returns its own slice: changing one default must not change the next.
	got.Products.GroupSuffixes[0] = ".changed"
	if again := Default(); again.Products.GroupSuffixes[0] != ".kubedoop.dev" {
		t.Errorf("Default() shares GroupSuffixes between calls: %v", again.Products.GroupSuffixes)
	}
}

func TestSetDefaultsKeepsSetFields(t *testing.T) {
	c := ServerConfig{
		APIVersion: "other/v1",
		Kind:       "Other",
		Serving: Serving{
			Port:           1,
			TLSMinVersion:  "1.3",
			ProbeAddress:   ":1",
			MetricsAddress: "0",
		},
		Products:        Products{GroupSuffixes: []string{".example.com"}},
		ServiceAccounts: ServiceAccounts{Preset: PresetDerived},
		PodSecurity:     PodSecurity{NamespaceLabel: "team.example/psc=on"},
		Overrides: Overrides{Namespace: "ops", ConfigMapName: "cm", ComponentLabel: "c",
			Components: []OverrideComponent{{Name: "net", Kinds: []string{"DaemonSet"}, Scope: ScopeSingleton}}},
		Harness: Harness{Proxy: HarnessProxy{Host: "h", Port: 1, CAConfigMap: "ca"}, FailClosedNamespaceLabel: "l",
			ScopedNamespaceLabel: "s", ManageSelections: true},
		DefaultMode: ModeAudit,
		// An empty list is kept: no namespace is exempt by name.
		Exemptions: Exemptions{Namespaces: []string{}},
		Exceptions: Exceptions{Namespaced: true, MaxDuration: metav1.Duration{Duration: time.Hour}},
		Audit: Audit{Interval: "0", PageSize: 7, QPS: 1, Burst: 2,
			Reports: AuditReports{APIs: []ReportAPI{ReportAPIOpenReports}}},
	}
	want := c
	want.Products.GroupSuffixes = []string{".example.com"}
	c.SetDefaults()
	if !reflect.DeepEqual(c, want) {
		t.Errorf("SetDefaults() = %+v, want %+v", c, want)
	}
}

func TestLoadFull(t *testing.T) {
	path := writeConfig(t, `apiVersion: gatehouse.dev/v1alpha1
kind: ServerConfig
serving:
  port: 8443
  host: 0.0.0.0
  certDir: /var/run/certs
  tlsMinVersion: "1.3"
  enableHTTP2: true
  probeAddress: ":9091"
  metricsAddress: "0"
webhooks:
  secret-scope:
    enabled: false
  service-account:
    enabled: true
    mode: Warn
defaultMode: Audit
exemptions:
  namespaces: [kube-system, cni-system]
  namespaceLabels:
    - {key: example.com/tier, operator: In, values: [infra]}
    - {key: example.com/unmanaged, operator: Exists}
  usernames: [system:kube-scheduler]
  groups: [system:nodes]
  serviceAccounts: [cert-manager/cert-manager, cni-system/*]
exceptions:
  namespaced: true
  maxDuration: 168h
products:
  groupSuffixes:
    - .example.com
    - .stackable.tech
serviceAccounts:
  preset: Derived
  products:
    - {group: db.example.com, kind: DatabaseCluster, rule: Named, name: "{name}-db"}
    - {group: web.example.com, kind: WebCluster, rule: None}
podSecurity:
  namespaceLabel: team.example/psc=on
  defaults:
    runAsUser: 2000
    capabilitiesDrop: [ALL, NET_RAW]
overrides:
  namespace: operators
  configMapName: component-overrides
  componentLabel: example.com/component
  componentTable: upstream-9064e39
harness:
  proxy:
    host: harness-proxy.harness.svc
    port: 8443
    caConfigMap: harness-ca
  failClosedNamespaceLabel: example.com/harnessed
  scopedNamespaceLabel: example.com/scoped
  manageSelections: true
audit:
  interval: 30m
  pageSize: 100
  qps: 5
  burst: 10
  reports:
    apis: [wgpolicyk8s.io/v1alpha2, openreports.io/v1alpha1]
`)
	want := ServerConfig{
		APIVersion: APIVersion,
		Kind:       Kind,
		Serving: Serving{
			Port:           8443,
			Host:           "0.0.0.0",
			CertDir:        "/var/run/certs",
			TLSMinVersion:  "1.3",
			EnableHTTP2:    true,
			ProbeAddress:   ":9091",
			MetricsAddress: "0",
		},
		Webhooks: map[string]Webhook{
			"secret-scope":    {Enabled: ptr(false)},
			"service-account": {Enabled: ptr(true), Mode: ModeWarn},
		},
		DefaultMode: ModeAudit,
		Exemptions: Exemptions{
			Namespaces: []string{"kube-system", "cni-system"},
			NamespaceLabels: []NamespaceLabel{
				{Key: "example.com/tier", Operator: LabelOpIn, Values: []string{"infra"}},
				{Key: "example.com/unmanaged", Operator: LabelOpExists},
			},
			Usernames:       []string{"system:kube-scheduler"},
			Groups:          []string{"system:nodes"},
			ServiceAccounts: []string{"cert-manager/cert-manager", "cni-system/*"},
		},
		Exceptions: Exceptions{Namespaced: true, MaxDuration: metav1.Duration{Duration: 168 * time.Hour}},
		Products:   Products{GroupSuffixes: []string{".example.com", ".stackable.tech"}},
		ServiceAccounts: ServiceAccounts{Preset: PresetDerived, Products: []ProductServiceAccount{
			{Group: "db.example.com", Kind: "DatabaseCluster", Rule: RuleNamed, Name: "{name}-db"},
			{Group: "web.example.com", Kind: "WebCluster", Rule: RuleNone},
		}},
		PodSecurity: PodSecurity{NamespaceLabel: "team.example/psc=on", Defaults: PodSecurityDefaults{
			RunAsUser: ptr(int64(2000)), CapabilitiesDrop: []string{"ALL", "NET_RAW"},
		}},
		Overrides: Overrides{Namespace: "operators", ConfigMapName: "component-overrides", ComponentLabel: "example.com/component",
			ComponentTable: "upstream-9064e39"},
		Harness: Harness{
			Proxy:                    HarnessProxy{Host: "harness-proxy.harness.svc", Port: 8443, CAConfigMap: "harness-ca"},
			FailClosedNamespaceLabel: "example.com/harnessed",
			ScopedNamespaceLabel:     "example.com/scoped",
			ManageSelections:         true,
		},
		Audit: Audit{Interval: "30m", PageSize: 100, QPS: 5, Burst: 10,
			Reports: AuditReports{APIs: []ReportAPI{ReportAPIPolicyReport, ReportAPIOpenReports}}},
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load() = %+v, want %+v", got, want)
	}
	if err := got.Validate(knownWebhooks, PolicyChecks{}); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	if got.Enabled("secret-scope") {
		t.Errorf("Enabled(secret-scope) = true, want false")
	}
	if !got.Enabled("service-account") {
		t.Errorf("Enabled(service-account) = false, want true")
	}
}

func TestLoadDefaults(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    ServerConfig
	}{
		{
			name:    "header only",
			content: "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n",
			want:    Default(),
		},
		{
			name:    "partial serving",
			content: "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\nserving:\n  port: 10250\n  certDir: /certs\n",
			want: func() ServerConfig {
				c := Default()
				c.Serving.Port = 10250
				c.Serving.CertDir = "/certs"
				return c
			}(),
		},
		{
			name:    "empty group suffix list defaults",
			content: "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\nproducts:\n  groupSuffixes: []\n",
			want:    Default(),
		},
		{
			name:    "webhook without enabled",
			content: "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\nwebhooks:\n  secret-scope: {}\n",
			want: func() ServerConfig {
				c := Default()
				c.Webhooks = map[string]Webhook{"secret-scope": {}}
				return c
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(writeConfig(t, tt.content))
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Load() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadRejects(t *testing.T) {
	const header = "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"
	tests := []struct {
		name    string
		content string
		wantErr string // substring of the error
	}{
		{name: "unknown top-level field", content: header + "servng:\n  port: 1\n", wantErr: `unknown field "servng"`},
		{name: "unknown serving field", content: header + "serving:\n  prot: 8443\n", wantErr: `unknown field "serving.prot"`},
		{name: "unknown webhook field", content: header + "webhooks:\n  secret-scope:\n    enable: false\n", wantErr: `unknown field "webhooks.secret-scope.enable"`},
		{name: "unknown products field", content: header + "products:\n  groups: [.a]\n", wantErr: `unknown field "products.groups"`},
		{name: "duplicate key", content: header + "serving:\n  port: 1\n  port: 2\n", wantErr: `"port" already set`},
		{name: "wrong type", content: header + "serving:\n  port: high\n", wantErr: "port"},
		{name: "a duration in days", content: header + "exceptions:\n  maxDuration: 30d\n", wantErr: `unknown unit "d"`},
		{name: "not yaml", content: header + "serving: [\n", wantErr: "yaml"},
		{name: "empty file", content: "", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "missing apiVersion", content: "kind: ServerConfig\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "missing kind", content: "apiVersion: gatehouse.dev/v1alpha1\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "wrong apiVersion", content: "apiVersion: gatehouse.dev/v1\nkind: ServerConfig\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "other group", content: "apiVersion: example.com/v1alpha1\nkind: ServerConfig\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "wrong kind", content: "apiVersion: gatehouse.dev/v1alpha1\nkind: Config\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "kind lower case", content: "apiVersion: gatehouse.dev/v1alpha1\nkind: serverconfig\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "body without header", content: "serving:\n  port: 8443\n", wantErr: "must start with apiVersion: gatehouse.dev/v1alpha1 and kind: ServerConfig"},
		{name: "two unknown fields", content: header + "servng: {}\nproducts:\n  groups: [.a]\n", wantErr: `unknown field "products.groups"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.content)
			got, err := Load(path)
			if err == nil {
				t.Fatalf("Load() = %+v, nil; want error containing %q", got, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Load() error = %q, want it to contain %q", err, tt.wantErr)
			}
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if !strings.HasPrefix(line, path+": ") {
					t.Errorf("Load() error = %q, want each line to start with the path %q", err, path)
				}
			}
			if !reflect.DeepEqual(got, ServerConfig{}) {
				t.Errorf("Load() returned %+v with an error, want zero config", got)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	got, err := Load(path)
	if !os.IsNotExist(err) {
		t.Errorf("Load(absent) error = %v, want a not-exist error", err)
	}
	if !reflect.DeepEqual(got, ServerConfig{}) {
		t.Errorf("Load(absent) = %+v, want zero config", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *ServerConfig)
		known   []string
		wantErr string // exact errors, one a line; empty for none
	}{
		{name: "default", mutate: func(c *ServerConfig) {}},
		{name: "port 1", mutate: func(c *ServerConfig) { c.Serving.Port = 1 }},
		{name: "port 65535", mutate: func(c *ServerConfig) { c.Serving.Port = 65535 }},
		{name: "port 0", mutate: func(c *ServerConfig) { c.Serving.Port = 0 }, wantErr: "serving.port: Invalid value: 0: must be between 1 and 65535"},
		{name: "port -1", mutate: func(c *ServerConfig) { c.Serving.Port = -1 }, wantErr: "serving.port: Invalid value: -1: must be between 1 and 65535"},
		{name: "port 65536", mutate: func(c *ServerConfig) { c.Serving.Port = 65536 }, wantErr: "serving.port: Invalid value: 65536: must be between 1 and 65535"},
		{name: "port 70000", mutate: func(c *ServerConfig) { c.Serving.Port = 70000 }, wantErr: "serving.port: Invalid value: 70000: must be between 1 and 65535"},
		{name: "tls 1.3", mutate: func(c *ServerConfig) { c.Serving.TLSMinVersion = "1.3" }},
		{name: "tls 1.1", mutate: func(c *ServerConfig) { c.Serving.TLSMinVersion = "1.1" }, wantErr: `serving.tlsMinVersion: Unsupported value: "1.1": supported values: "1.2", "1.3"`},
		{name: "tls 1.0", mutate: func(c *ServerConfig) { c.Serving.TLSMinVersion = "1.0" }, wantErr: `serving.tlsMinVersion: Unsupported value: "1.0": supported values: "1.2", "1.3"`},
		{name: "tls empty", mutate: func(c *ServerConfig) { c.Serving.TLSMinVersion = "" }, wantErr: `serving.tlsMinVersion: Unsupported value: "": supported values: "1.2", "1.3"`},
		{name: "tls VersionTLS12", mutate: func(c *ServerConfig) { c.Serving.TLSMinVersion = "VersionTLS12" }, wantErr: `serving.tlsMinVersion: Unsupported value: "VersionTLS12": supported values: "1.2", "1.3"`},
		{name: "modes", mutate: func(c *ServerConfig) {
			c.DefaultMode = ModeWarn
			c.Webhooks = map[string]Webhook{"secret-scope": {Mode: ModeAudit}}
		}},
		{name: "service accounts", mutate: func(c *ServerConfig) {
			c.ServiceAccounts = ServiceAccounts{Preset: PresetDerived, Products: []ProductServiceAccount{
				{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster", Rule: RuleNamed, Name: "{name}-sa"},
				{Group: "zookeeper.kubedoop.dev", Kind: "ZookeeperCluster", Rule: RuleNamed, Name: "zookeeper"},
				{Group: "trino.kubedoop.dev", Kind: "TrinoCluster", Rule: RuleNone},
				{Group: "kafka.kubedoop.dev", Kind: "KafkaCluster", Rule: RuleDerived},
			}}
		}},
		{name: "service account preset unknown", mutate: func(c *ServerConfig) { c.ServiceAccounts.Preset = "v0.12" },
			wantErr: `serviceAccounts.preset: Unsupported value: "v0.12": supported values: "Released", "Derived"`},
		{name: "service account rules invalid", mutate: func(c *ServerConfig) {
			c.ServiceAccounts.Products = []ProductServiceAccount{
				{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster", Rule: RuleNamed},
				{Group: "example.com", Kind: "Widget", Rule: RuleNamed, Name: "{cluster}-sa"},
				{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster", Rule: RuleNone, Name: "x"},
				{Group: "Bad_Group", Kind: "9x", Rule: "named"},
			}
		}, wantErr: "serviceAccounts.products[0].name: Required value: must be a ServiceAccount name, where {name} may stand for the cluster's name\n" +
			`serviceAccounts.products[1].group: Invalid value: "example.com": must end in one of products.groupSuffixes, or gatehouse never judges the product` + "\n" +
			`serviceAccounts.products[1].name: Invalid value: "{cluster}-sa": must be a ServiceAccount name, where {name} may stand for the cluster's name` + "\n" +
			"serviceAccounts.products[2]: Duplicate value: the same group and kind as serviceAccounts.products[0]\n" +
			"serviceAccounts.products[2].name: Forbidden: only a Named rule takes a name\n" +
			`serviceAccounts.products[3].group: Invalid value: "Bad_Group": must be an API group` + "\n" +
			`serviceAccounts.products[3].kind: Invalid value: "9x": must be a kind` + "\n" +
			`serviceAccounts.products[3].rule: Unsupported value: "named": supported values: "Named", "None", "Derived"`},
		{name: "default mode misspelt", mutate: func(c *ServerConfig) { c.DefaultMode = "enforce" },
			wantErr: `defaultMode: Unsupported value: "enforce": supported values: "Enforce", "Warn", "Audit"`},
		{name: "webhook mode unknown", mutate: func(c *ServerConfig) { c.Webhooks = map[string]Webhook{"secret-scope": {Mode: "Dryrun"}} },
			wantErr: `webhooks[secret-scope].mode: Unsupported value: "Dryrun": supported values: "Enforce", "Warn", "Audit"`},
		{name: "exemptions", mutate: func(c *ServerConfig) {
			c.Exemptions = Exemptions{Namespaces: []string{}, NamespaceLabels: []NamespaceLabel{{Key: "a.io/b", Operator: LabelOpExists}},
				Usernames: []string{"u"}, Groups: []string{"g"}, ServiceAccounts: []string{"ns/sa", "ns/*"}}
		}},
		{name: "exemptions refused", mutate: func(c *ServerConfig) {
			c.Exemptions = Exemptions{Namespaces: []string{"Kube_System"},
				NamespaceLabels: []NamespaceLabel{{Key: "a b", Operator: "NotIn"}, {Key: "k", Operator: LabelOpIn}, {Key: "k", Operator: LabelOpExists, Values: []string{"v"}}, {Key: "k", Operator: LabelOpIn, Values: []string{"bad value"}}},
				Usernames:       []string{" "}, Groups: []string{""}, ServiceAccounts: []string{"sa", "ns/", "NS/sa"}}
		}, wantErr: `exemptions.namespaces[0]: Invalid value: "Kube_System": must be a namespace name
exemptions.namespaceLabels[0].key: Invalid value: "a b": must be a label key
exemptions.namespaceLabels[0].operator: Unsupported value: "NotIn": supported values: "In", "Exists"
exemptions.namespaceLabels[1].values: Required value: operator In needs at least one value
exemptions.namespaceLabels[2].values: Forbidden: operator Exists takes no values
exemptions.namespaceLabels[3].values[0]: Invalid value: "bad value": must be a label value
exemptions.usernames[0]: Required value: must not be empty
exemptions.groups[0]: Required value: must not be empty
exemptions.serviceAccounts[0]: Invalid value: "sa": must be "namespace/name" or "namespace/*"
exemptions.serviceAccounts[1]: Invalid value: "ns/": must be "namespace/name" or "namespace/*"
exemptions.serviceAccounts[2]: Invalid value: "NS/sa": must be "namespace/name" or "namespace/*"`},
		{
			name: "known webhooks",
			mutate: func(c *ServerConfig) {
				c.Webhooks = map[string]Webhook{"secret-scope": {Enabled: ptr(false)}, "service-account": {}}
			},
		},
		{
			name:    "unknown webhook",
			mutate:  func(c *ServerConfig) { c.Webhooks = map[string]Webhook{"secret-scop": {Enabled: ptr(false)}} },
			wantErr: `webhooks[secret-scop]: Unsupported value: "secret-scop": supported values: "secret-scope", "service-account"`,
		},
		{
			name:    "unknown webhook beside a known one",
			mutate:  func(c *ServerConfig) { c.Webhooks = map[string]Webhook{"secret-scope": {}, "pod-security": {}} },
			wantErr: `webhooks[pod-security]: Unsupported value: "pod-security": supported values: "secret-scope", "service-account"`,
		},
		{
			name:    "webhook with no known webhooks",
			mutate:  func(c *ServerConfig) { c.Webhooks = map[string]Webhook{"secret-scope": {}} },
			known:   []string{},
			wantErr: `webhooks[secret-scope]: Unsupported value: "secret-scope"`,
		},
		{name: "other suffix", mutate: func(c *ServerConfig) { c.Products.GroupSuffixes = []string{".example.com", ".a"} }},
		{name: "no suffixes", mutate: func(c *ServerConfig) { c.Products.GroupSuffixes = nil }},
		{
			name:    "suffix without dot",
			mutate:  func(c *ServerConfig) { c.Products.GroupSuffixes = []string{"kubedoop.dev"} },
			wantErr: `products.groupSuffixes[0]: Invalid value: "kubedoop.dev": must start with "." and name a domain`,
		},
		{
			name:    "second suffix without dot",
			mutate:  func(c *ServerConfig) { c.Products.GroupSuffixes = []string{".kubedoop.dev", "example.com"} },
			wantErr: `products.groupSuffixes[1]: Invalid value: "example.com": must start with "." and name a domain`,
		},
		{
			name:    "suffix only dot",
			mutate:  func(c *ServerConfig) { c.Products.GroupSuffixes = []string{"."} },
			wantErr: `products.groupSuffixes[0]: Invalid value: ".": must start with "." and name a domain`,
		},
		{
			name:    "empty suffix",
			mutate:  func(c *ServerConfig) { c.Products.GroupSuffixes = []string{""} },
			wantErr: `products.groupSuffixes[0]: Invalid value: "": must start with "." and name a domain`,
		},
		{
			name:    "proxy CA ConfigMap not a name",
			mutate:  func(c *ServerConfig) { c.Harness.Proxy.CAConfigMap = "CA/crt" },
			wantErr: `harness.proxy.caConfigMap: Invalid value: "CA/crt": must be a ConfigMap name`,
		},
		{
			name:    "fail-closed label not a key",
			mutate:  func(c *ServerConfig) { c.Harness.FailClosedNamespaceLabel = "a=b" },
			wantErr: `harness.failClosedNamespaceLabel: Invalid value: "a=b": must be a label key`,
		},
		{
			name:    "bad scoped namespace label",
			mutate:  func(c *ServerConfig) { c.Harness.ScopedNamespaceLabel = "a b" },
			wantErr: `harness.scopedNamespaceLabel: Invalid value: "a b": must be a label key`,
		},
		{
			name:    "one label for both selections",
			mutate:  func(c *ServerConfig) { c.Harness.ScopedNamespaceLabel = c.Harness.FailClosedNamespaceLabel },
			wantErr: `harness.scopedNamespaceLabel: Invalid value: "gatehouse.dev/harnessed": must differ from harness.failClosedNamespaceLabel`,
		},
		{name: "audit off", mutate: func(c *ServerConfig) { c.Audit.Interval = "0" }},
		{name: "audit every 5m", mutate: func(c *ServerConfig) { c.Audit.Interval = "5m" }},
		{
			name:    "audit interval not a duration",
			mutate:  func(c *ServerConfig) { c.Audit.Interval = "hourly" },
			wantErr: `audit.interval: Invalid value: "hourly": must be a duration such as "1h", or "0" for off`,
		},
		{
			name:    "audit interval too short",
			mutate:  func(c *ServerConfig) { c.Audit.Interval = "10s" },
			wantErr: `audit.interval: Invalid value: "10s": must be at least 1m0s, or "0" for off`,
		},
		{
			name:    "audit page size",
			mutate:  func(c *ServerConfig) { c.Audit.PageSize = -1 },
			wantErr: "audit.pageSize: Invalid value: -1: must be between 1 and 10000",
		},
		{name: "exceptions for a year", mutate: func(c *ServerConfig) { c.Exceptions.MaxDuration.Duration = 8760 * time.Hour }},
		{
			name:    "exceptions past a year",
			mutate:  func(c *ServerConfig) { c.Exceptions.MaxDuration.Duration = 8761 * time.Hour },
			wantErr: `exceptions.maxDuration: Invalid value: "8761h0m0s": must be positive and at most 8760h0m0s`,
		},
		{
			name:    "exceptions negative",
			mutate:  func(c *ServerConfig) { c.Exceptions.MaxDuration.Duration = -time.Hour },
			wantErr: `exceptions.maxDuration: Invalid value: "-1h0m0s": must be positive and at most 8760h0m0s`,
		},
		{name: "both report APIs", mutate: func(c *ServerConfig) { c.Audit.Reports.APIs = []ReportAPI{ReportAPIOpenReports, ReportAPIPolicyReport} }},
		{
			name:    "no report API",
			mutate:  func(c *ServerConfig) { c.Audit.Reports.APIs = []ReportAPI{} },
			wantErr: `audit.reports.apis: Required value: name one or both of wgpolicyk8s.io/v1alpha2 and openreports.io/v1alpha1`,
		},
		{
			name: "a report API gatehouse does not write, one twice",
			mutate: func(c *ServerConfig) {
				c.Audit.Reports.APIs = []ReportAPI{ReportAPIOpenReports, "reports.x-k8s.io/v1beta2", ReportAPIOpenReports}
			},
			wantErr: `audit.reports.apis[1]: Unsupported value: "reports.x-k8s.io/v1beta2": supported values: "wgpolicyk8s.io/v1alpha2", "openreports.io/v1alpha1"
audit.reports.apis[2]: Duplicate value: "openreports.io/v1alpha1": the same API as audit.reports.apis[0]`,
		},
		{name: "wrong apiVersion", mutate: func(c *ServerConfig) { c.APIVersion = "gatehouse.dev/v1" }, wantErr: `apiVersion: Unsupported value: "gatehouse.dev/v1": supported values: "gatehouse.dev/v1alpha1"`},
		{name: "wrong kind", mutate: func(c *ServerConfig) { c.Kind = "Config" }, wantErr: `kind: Unsupported value: "Config": supported values: "ServerConfig"`},
		{
			name: "several errors in field order",
			mutate: func(c *ServerConfig) {
				c.Kind = ""
				c.Serving.Port = 0
				c.Serving.TLSMinVersion = "1.1"
				c.Webhooks = map[string]Webhook{"nope": {}}
				c.Products.GroupSuffixes = []string{"x"}
			},
			wantErr: `kind: Unsupported value: "": supported values: "ServerConfig"
serving.port: Invalid value: 0: must be between 1 and 65535
serving.tlsMinVersion: Unsupported value: "1.1": supported values: "1.2", "1.3"
webhooks[nope]: Unsupported value: "nope": supported values: "secret-scope", "service-account"
products.groupSuffixes[0]: Invalid value: "x": must start with "." and name a domain`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			known := tt.known
			if known == nil {
				known = knownWebhooks
			}
			errs := c.Validate(known, PolicyChecks{})
			if tt.wantErr == "" {
				if len(errs) > 0 {
					t.Errorf("Validate() = %v, want none", errs)
				}
				return
			}
			if got := lines(errs); got != tt.wantErr {
				t.Errorf("Validate() =\n%s\nwant\n%s", got, tt.wantErr)
			}
		})
	}
}

// TestMutatingWebhooksHaveNoWarnMode: Warn is refused for a mutating
// webhook, set on it or inherited from defaultMode; Audit is not.
func TestMutatingWebhooksHaveNoWarnMode(t *testing.T) {
	checks := PolicyChecks{Mutating: func(name string) bool { return name == "secret-scope" }}
	c := Default()
	c.Webhooks = map[string]Webhook{"secret-scope": {Mode: ModeWarn}}
	want := `webhooks[secret-scope].mode: Invalid value: "Warn": mutating webhooks have no Warn mode: they patch (Enforce) or record what they would patch (Audit)`
	if got := lines(c.Validate(knownWebhooks, checks)); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	c.Webhooks, c.DefaultMode = nil, ModeWarn
	want = `defaultMode: Invalid value: "Warn": mutating webhooks have no Warn mode; give secret-scope a mode of their own (Enforce or Audit)`
	if got := lines(c.Validate(knownWebhooks, checks)); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	c.Webhooks = map[string]Webhook{"secret-scope": {Mode: ModeAudit}}
	if err := c.Validate(knownWebhooks, checks); len(err) > 0 {
		t.Errorf("Validate() = %v, want nil", err)
	}
	if got := c.ModeOf("secret-scope"); got != ModeAudit {
		t.Errorf("ModeOf(secret-scope) = %q, want Audit", got)
	}
	if got := c.ModeOf("service-account"); got != ModeWarn {
		t.Errorf("ModeOf(service-account) = %q, want the default, Warn", got)
	}
}

func TestValidateNilKnownWebhooks(t *testing.T) {
	c := Default()
	if err := c.Validate(nil, PolicyChecks{}); len(err) > 0 {
		t.Errorf("Validate(nil) without webhooks = %v, want nil", err)
	}
	c.Webhooks = map[string]Webhook{"secret-scope": {}}
	if err := c.Validate(nil, PolicyChecks{}); len(err) == 0 {
		t.Errorf("Validate(nil) with a webhook = nil, want error")
	}
}

func TestEnabled(t *testing.T) {
	c := ServerConfig{Webhooks: map[string]Webhook{
		"on":    {Enabled: ptr(true)},
		"off":   {Enabled: ptr(false)},
		"unset": {},
	}}
	tests := []struct {
		name string
		want bool
	}{
		{"on", true},
		{"off", false},
		{"unset", true},
		{"unlisted", true},
		{"", true},
		{"OFF", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Enabled(tt.name); got != tt.want {
				t.Errorf("Enabled(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}

	var empty ServerConfig
	if !empty.Enabled("secret-scope") {
		t.Errorf("Enabled with no webhooks map = false, want true")
	}
}

func TestLoadRejectsMiscasedAndDuplicatedKeys(t *testing.T) {
	for _, body := range []string{
		"Serving:\n  port: 8443\n",
		"serving:\n  PORT: 8443\n",
		"serving:\n  port: 8443\n  Port: 1\n",
		"webhooks:\n  secret-scope:\n    Enabled: false\n",
		"serving:\n  port: 8443\n  port: 1\n",
	} {
		path := writeConfig(t, "apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\n"+body)
		if c, err := Load(path); err == nil {
			t.Errorf("Load(%q) = %+v, nil; want an error", body, c.Serving)
		}
	}
}

func TestValidateErrorIsDeterministic(t *testing.T) {
	c := Default()
	c.Webhooks = map[string]Webhook{"a": {}, "b": {}, "c": {}, "d": {}}
	first := lines(c.Validate(knownWebhooks, PolicyChecks{}))
	for range 50 {
		if got := lines(c.Validate(knownWebhooks, PolicyChecks{})); got != first {
			t.Fatalf("Validate() error differs between calls:\n%s\n%s", first, got)
		}
	}
}

// TestValidateRunsPolicyChecks: the checks passed in see the configured
// values, and their errors are attributed to the field and reported in field
// order; a failing proxy check hides the CA ConfigMap's own check, which
// would only repeat it. The checks themselves are tested with the policies
// (webhooks/route/options_test.go).
func TestValidateRunsPolicyChecks(t *testing.T) {
	c := Default()
	c.PodSecurity.Defaults.RunAsUser = ptr(int64(0))
	c.Harness.Proxy = HarnessProxy{Port: 7, CAConfigMap: "CA/crt"}
	var sawDefaults PodSecurityDefaults
	var sawProxy HarnessProxy
	var sawPaths []string
	errs := c.Validate(knownWebhooks, PolicyChecks{
		PodSecurityDefaults: func(at *field.Path, d PodSecurityDefaults) field.ErrorList {
			sawDefaults, sawPaths = d, append(sawPaths, at.String())
			return field.ErrorList{field.Invalid(at.Child("runAsUser"), field.OmitValueType{}, "defaults refused")}
		},
		HarnessProxy: func(at *field.Path, p HarnessProxy) field.ErrorList {
			sawProxy, sawPaths = p, append(sawPaths, at.String())
			return field.ErrorList{field.Invalid(at, field.OmitValueType{}, "proxy refused")}
		},
	})
	want := "podSecurity.defaults.runAsUser: Invalid value: defaults refused\nharness.proxy: Invalid value: proxy refused"
	if got := lines(errs); got != want {
		t.Errorf("Validate() =\n%s\nwant\n%s", got, want)
	}
	if !slices.Equal(sawPaths, []string{"podSecurity.defaults", "harness.proxy"}) {
		t.Errorf("checks were given the paths %q", sawPaths)
	}
	if !reflect.DeepEqual(sawDefaults, c.PodSecurity.Defaults) || sawProxy != c.Harness.Proxy {
		t.Errorf("checks saw %+v and %+v, want the configured values", sawDefaults, sawProxy)
	}
	passing := PolicyChecks{HarnessProxy: func(*field.Path, HarnessProxy) field.ErrorList { return nil }}
	if got := lines(c.Validate(knownWebhooks, passing)); got != `harness.proxy.caConfigMap: Invalid value: "CA/crt": must be a ConfigMap name` {
		t.Errorf("Validate() with a passing proxy check = %q, want the CA ConfigMap's error alone", got)
	}
}

func TestSecurityDefaultsLabel(t *testing.T) {
	for label, ok := range map[string]bool{
		"gatehouse.dev/security-defaults=enabled": true,
		"psc=on":             true,
		"no-value":           false,
		"key=":               false,
		"bad key!=x":         false,
		"k=value with space": false,
	} {
		c := Default()
		c.PodSecurity.NamespaceLabel = label
		_, _, err := c.SecurityDefaultsLabel()
		if (err == nil) != ok {
			t.Errorf("%q: err = %v, want ok=%v", label, err, ok)
		}
		if verr := c.Validate(knownWebhooks, PolicyChecks{}); (len(verr) == 0) != ok {
			t.Errorf("%q: Validate = %v, want ok=%v", label, verr, ok)
		}
	}
}

func TestValidateOverrides(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*Overrides)
	}{
		{"namespace", func(o *Overrides) { o.Namespace = "Not_A_Namespace" }},
		{"configMapName", func(o *Overrides) { o.ConfigMapName = "bad name" }},
		{"componentLabel", func(o *Overrides) { o.ComponentLabel = "bad key!" }},
		{"componentTable", func(o *Overrides) {
			o.Components = []OverrideComponent{{Name: "net", Kinds: []string{"DaemonSet"}, Scope: ScopeSingleton}}
		}},
		{"components[0].scope", func(o *Overrides) {
			o.ComponentTable = ""
			o.Components = []OverrideComponent{{Name: "net", Kinds: []string{"DaemonSet"}, Scope: "Cluster"}}
		}},
	} {
		c := Default()
		tc.modify(&c.Overrides)
		errs := c.Validate(knownWebhooks, PolicyChecks{})
		if len(errs) != 1 || errs[0].Field != "overrides."+tc.name {
			t.Errorf("%s: Validate() = %v", tc.name, errs)
		}
	}
}

// TestValidateOverrideComponentsAttributed: the policy's check of the
// component table is given the path of overrides, and every error it
// returns is reported, in its order.
func TestValidateOverrideComponentsAttributed(t *testing.T) {
	c := Default()
	c.Overrides.ComponentTable = "upstream-x"
	errs := c.Validate(knownWebhooks, PolicyChecks{OverrideComponents: func(at *field.Path, o Overrides) field.ErrorList {
		return field.ErrorList{
			field.NotSupported(at.Child("componentTable"), o.ComponentTable, []string{"any"}),
			field.Invalid(at.Child("components").Index(1).Child("kinds").Index(0), field.OmitValueType{}, "bad"),
		}
	}})
	want := `overrides.componentTable: Unsupported value: "upstream-x": supported values: "any"` + "\n" +
		"overrides.components[1].kinds[0]: Invalid value: bad"
	if got := lines(errs); got != want {
		t.Errorf("Validate() =\n%s\nwant\n%s", got, want)
	}
}
