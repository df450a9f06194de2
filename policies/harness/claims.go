// Which operator identities a harness claims.
//
// Reads, in an OperatorHarness: spec.operator.namespace and
// spec.operator.serviceAccounts. Allows: anything; a value of the wrong type
// reads as absent (a non-string service account matches nothing).

package harness

import "github.com/gatehouse-dev/gatehouse/policies/internal/fields"

// DefaultServiceAccount is what a pod with no serviceAccountName runs as.
const DefaultServiceAccount = "default"

// Claims reports whether harness h claims service account account in
// namespace: spec.operator.namespace is namespace and account is in
// spec.operator.serviceAccounts, where an empty or absent list claims every
// account of the namespace. An empty account means DefaultServiceAccount; a
// harness without an operator namespace claims nothing.
func Claims(h map[string]any, namespace, account string) bool {
	if account == "" {
		account = DefaultServiceAccount
	}
	op, ok := fields.Map(h, "spec", "operator")
	if !ok {
		return false
	}
	if ns, _ := fields.String(op, "namespace"); ns == "" || ns != namespace {
		return false
	}
	accounts, _ := fields.Slice(op, "serviceAccounts")
	if len(accounts) == 0 {
		return true
	}
	for _, a := range accounts {
		if s, ok := a.(string); ok && s == account {
			return true
		}
	}
	return false
}
