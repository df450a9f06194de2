// Which pods are harnessed.
//
// Reads, in each OperatorHarness: spec.operator.injectProxyConfiguration,
// spec.operator.namespace, spec.operator.serviceAccounts. Allows: anything;
// a value of the wrong type reads as absent (a non-bool
// injectProxyConfiguration as false, a non-string service account as no
// match).

package proxy

import "github.com/gatehouse-dev/gatehouse/policies/internal/fields"

// defaultServiceAccount is what a pod with no serviceAccountName runs as.
const defaultServiceAccount = "default"

// Harnessed reports whether a pod in namespace running as serviceAccount is
// harnessed: some OperatorHarness has spec.operator.injectProxyConfiguration
// true, spec.operator.namespace equal to namespace, and serviceAccount in
// spec.operator.serviceAccounts, where an empty or absent list means every
// pod of the namespace. An empty serviceAccount means "default".
func Harnessed(harnesses []map[string]any, namespace, serviceAccount string) bool {
	if serviceAccount == "" {
		serviceAccount = defaultServiceAccount
	}
	for _, h := range harnesses {
		op, ok := fields.Map(h, "spec", "operator")
		if !ok {
			continue
		}
		if inject, _ := op["injectProxyConfiguration"].(bool); !inject {
			continue
		}
		if ns, _ := fields.String(op, "namespace"); ns == "" || ns != namespace {
			continue
		}
		sas, _ := fields.Slice(op, "serviceAccounts")
		if len(sas) == 0 {
			return true
		}
		for _, sa := range sas {
			if s, ok := sa.(string); ok && s == serviceAccount {
				return true
			}
		}
	}
	return false
}
