package adapters

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestBrokenConfigurationAnswersEveryReview: a configuration that fails its
// check fails every review with one line that names what was checked and
// each problem at its field, and nothing of the object.
func TestBrokenConfigurationAnswersEveryReview(t *testing.T) {
	defaults := podsecurity.BuiltinDefaults()
	defaults.RunAsUser = 0
	defaults.CapabilitiesDrop = []string{"ALL", "ALL"}
	const wantDefaults = "pod security defaults: runAsUser: Invalid value: 0 together with runAsNonRoot: true would make every pod " +
		"that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false; " +
		`capabilitiesDrop[1]: Duplicate value: "ALL": the same capability as capabilitiesDrop[0]`
	proxyConfig := proxy.BuiltinConfig()
	proxyConfig.Port = 70000
	const wantProxy = "harness proxy configuration: port: Invalid value: 70000 is outside 1..65535"
	for _, tc := range []struct {
		name string
		eval Evaluator
		want string
	}{
		{"pod-security-defaults", newPodSecurityDefaults(route.Options{PodDefaults: defaults}), wantDefaults},
		{"pod-security", newPodSecurity(route.Options{PodDefaults: defaults}), wantDefaults},
		{"harness-proxy", newHarnessProxy(route.Options{Proxy: proxyConfig}), wantProxy},
	} {
		pod := map[string]any{"metadata": map[string]any{"name": "secret-name"}}
		_, err := tc.eval.Evaluate(context.Background(), &Review{Object: pod})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
