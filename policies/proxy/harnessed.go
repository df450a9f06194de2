// Which pods are harnessed.
//
// Reads, in each OperatorHarness: spec.operator.injectProxyConfiguration,
// and what harness.Claims reads. Allows: anything; a non-bool
// injectProxyConfiguration reads as false.

package proxy

import (
	"slices"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// Harnessed reports whether a pod in namespace running as serviceAccount is
// harnessed: some OperatorHarness has spec.operator.injectProxyConfiguration
// true and claims the account (harness.Claims: the operator namespace is
// namespace and the account is listed, or no account is). An empty
// serviceAccount means "default".
func Harnessed(harnesses []map[string]any, namespace, serviceAccount string) bool {
	for _, h := range harnesses {
		if inject, _ := fields.Bool(h, "spec", "operator", "injectProxyConfiguration"); inject && harness.Claims(h, namespace, serviceAccount) {
			return true
		}
	}
	return false
}

// InjectedNamespaces returns, sorted and once each, the namespaces that
// harnesses inject the proxy into: the operator namespace of every harness
// with spec.operator.injectProxyConfiguration true. These are the harnessed
// namespaces of docs/contracts.md §4, where a pod must not start without the
// proxy, so harness-proxy fails closed there.
func InjectedNamespaces(harnesses []map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range harnesses {
		inject, _ := fields.Bool(h, "spec", "operator", "injectProxyConfiguration")
		namespace, _ := fields.String(h, "spec", "operator", "namespace")
		if inject && namespace != "" && !seen[namespace] {
			seen[namespace] = true
			out = append(out, namespace)
		}
	}
	slices.Sort(out)
	return out
}
