// Which pods are harnessed.
//
// Reads, in each OperatorHarness: spec.operator.injectProxyConfiguration,
// and what harness.Claims reads. Allows: anything; a non-bool
// injectProxyConfiguration reads as false.

package proxy

import (
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
