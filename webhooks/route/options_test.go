package route

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
)

func ptr[T any](v T) *T { return &v }

// TestOptionsFromConfigLaysTheConfigOverThePoliciesDefaults: an unset proxy
// field and an unset pod security default take the policy's built-in value;
// a set one replaces just that value.
func TestOptionsFromConfigLaysTheConfigOverThePoliciesDefaults(t *testing.T) {
	opts := OptionsFromConfig(configv1alpha1.Default())
	if opts.Proxy != proxy.BuiltinConfig() {
		t.Errorf("default proxy = %+v, want the built-in %+v", opts.Proxy, proxy.BuiltinConfig())
	}
	if !reflect.DeepEqual(opts.PodDefaults, podsecurity.BuiltinDefaults()) {
		t.Errorf("default pod defaults = %+v, want the built-in table", opts.PodDefaults)
	}

	cfg := configv1alpha1.Default()
	cfg.Harness.Proxy.Port = 8443
	cfg.PodSecurity.Defaults = configv1alpha1.PodSecurityDefaults{RunAsUser: ptr(int64(2000)), RunAsNonRoot: ptr(false)}
	opts = OptionsFromConfig(cfg)
	wantProxy := proxy.BuiltinConfig()
	wantProxy.Port = 8443
	if opts.Proxy != wantProxy {
		t.Errorf("proxy = %+v, want %+v", opts.Proxy, wantProxy)
	}
	wantDefaults := podsecurity.BuiltinDefaults()
	wantDefaults.RunAsUser, wantDefaults.RunAsNonRoot = 2000, false
	if !reflect.DeepEqual(opts.PodDefaults, wantDefaults) {
		t.Errorf("pod defaults = %+v, want %+v", opts.PodDefaults, wantDefaults)
	}
}

// TestValidateConfig: the policies' rules for the values they read are
// checked with the configuration's own, each error named by its field, in
// field order.
func TestValidateConfig(t *testing.T) {
	runAsRoot := "podSecurity.defaults.runAsUser: Invalid value: 0 together with runAsNonRoot: true would make " +
		"every pod that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false"
	tests := []struct {
		name    string
		mutate  func(c *configv1alpha1.ServerConfig)
		wantErr string // exact errors, one a line; empty for none
	}{
		{name: "default", mutate: func(c *configv1alpha1.ServerConfig) {}},
		{name: "proxy port 65535", mutate: func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.Port = 65535 }},
		{name: "proxy fields unset take the built-in", mutate: func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy = configv1alpha1.HarnessProxy{} }},
		{
			name:    "proxy port -1",
			mutate:  func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.Port = -1 },
			wantErr: "harness.proxy.port: Invalid value: -1 is outside 1..65535",
		},
		{
			name:    "proxy port 70000",
			mutate:  func(c *configv1alpha1.ServerConfig) { c.Harness.Proxy.Port = 70000 },
			wantErr: "harness.proxy.port: Invalid value: 70000 is outside 1..65535",
		},
		{
			name:    "runAsUser 0 with the built-in runAsNonRoot",
			mutate:  func(c *configv1alpha1.ServerConfig) { c.PodSecurity.Defaults.RunAsUser = ptr(int64(0)) },
			wantErr: runAsRoot,
		},
		{
			name: "runAsUser 0 with runAsNonRoot false",
			mutate: func(c *configv1alpha1.ServerConfig) {
				c.PodSecurity.Defaults = configv1alpha1.PodSecurityDefaults{RunAsUser: ptr(int64(0)), RunAsNonRoot: ptr(false)}
			},
		},
		{
			name: "capabilities to drop",
			mutate: func(c *configv1alpha1.ServerConfig) {
				c.PodSecurity.Defaults.CapabilitiesDrop = []string{"ALL", "", "ALL"}
			},
			wantErr: "podSecurity.defaults.capabilitiesDrop[1]: Required value: must not be empty\n" +
				`podSecurity.defaults.capabilitiesDrop[2]: Duplicate value: "ALL": the same capability as podSecurity.defaults.capabilitiesDrop[0]`,
		},
		{
			name: "webhook the registry does not know",
			mutate: func(c *configv1alpha1.ServerConfig) {
				c.Webhooks = map[string]configv1alpha1.Webhook{"secret-scop": {}}
			},
			wantErr: `webhooks[secret-scop]: Unsupported value: "secret-scop": supported values: "` + strings.Join(Names(), `", "`) + `"`,
		},
		{
			name: "several errors in field order",
			mutate: func(c *configv1alpha1.ServerConfig) {
				c.Harness.FailClosedNamespaceLabel = "a=b"
				c.Harness.Proxy.Port = -1
				c.PodSecurity.Defaults.RunAsUser = ptr(int64(0))
				c.Serving.Port = 0
			},
			wantErr: "serving.port: Invalid value: 0: must be between 1 and 65535\n" + runAsRoot + "\n" +
				"harness.proxy.port: Invalid value: -1 is outside 1..65535\n" +
				`harness.failClosedNamespaceLabel: Invalid value: "a=b": must be a label key`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := configv1alpha1.Default()
			tt.mutate(&c)
			var got []string
			for _, e := range ValidateConfig(c) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tt.wantErr {
				t.Errorf("ValidateConfig() =\n%s\nwant\n%s", strings.Join(got, "\n"), tt.wantErr)
			}
		})
	}
}

// TestServiceAccountNamingFromConfig: the configured products are laid over
// the preset, each rule read as configured.
func TestServiceAccountNamingFromConfig(t *testing.T) {
	if configv1alpha1.ClusterNamePlaceholder != serviceaccount.ClusterPlaceholder {
		t.Fatalf("the configuration's placeholder %q is not the policy's %q", configv1alpha1.ClusterNamePlaceholder, serviceaccount.ClusterPlaceholder)
	}
	cfg := configv1alpha1.Default()
	cfg.ServiceAccounts.Products = []configv1alpha1.ProductServiceAccount{
		{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster", Rule: configv1alpha1.RuleDerived},
		{Group: "kafka.kubedoop.dev", Kind: "KafkaCluster", Rule: configv1alpha1.RuleNone},
		{Group: "example.kubedoop.dev", Kind: "ExampleCluster", Rule: configv1alpha1.RuleNamed, Name: "{name}-runner"},
	}
	for _, preset := range []configv1alpha1.ServiceAccountPreset{configv1alpha1.PresetReleased, configv1alpha1.PresetDerived} {
		cfg.ServiceAccounts.Preset = preset
		naming := OptionsFromConfig(cfg).ServiceAccounts
		for _, tc := range []struct{ group, kind, want string }{
			{"hdfs.kubedoop.dev", "HdfsCluster", "hdfscluster-prod"},
			{"kafka.kubedoop.dev", "KafkaCluster", "default"},
			{"example.kubedoop.dev", "ExampleCluster", "prod-runner"},
		} {
			if got := naming.ServiceAccount(schema.GroupKind{Group: tc.group, Kind: tc.kind}, "prod"); got != tc.want {
				t.Errorf("preset %s, %s: %q, want %q", preset, tc.kind, got, tc.want)
			}
		}
		want := map[configv1alpha1.ServiceAccountPreset]string{configv1alpha1.PresetReleased: "zookeeper", configv1alpha1.PresetDerived: "zookeepercluster-prod"}[preset]
		if got := naming.ServiceAccount(schema.GroupKind{Group: "zookeeper.kubedoop.dev", Kind: "ZookeeperCluster"}, "prod"); got != want {
			t.Errorf("preset %s, ZookeeperCluster: %q, want %q", preset, got, want)
		}
	}
}
