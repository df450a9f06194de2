// The kinds HARNESS (and PROXY and LABEL, through this package) look up, and
// the indexes of the cluster view that answer their State: harnesses by
// scope label, by claimed service account and by operator namespace; roles
// by name, and every ClusterRole for aggregation rules.
//
// Reads, in an OperatorHarness of either group: spec.scopeToLabel,
// spec.operator.namespace and spec.operator.serviceAccounts; in a role:
// metadata.name. Allows: anything; a value of the wrong type is found under
// nothing.

package harness

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"slices"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// GVKs are both kinds of OperatorHarness, in the order their objects are
// read.
func GVKs() []schema.GroupVersionKind { return slices.Clone(gvks) }

// OperatorHarness comes in two groups, both read wherever a harness is read:
// gatehouse's own vshn.net/v1 (GVK) and helmetica's helmetica.io/v1 (HelmeticaGVK:
// scopeToLabel and operator only, Enforce mode). Both are cluster-scoped.
var (
	GVK          = schema.GroupVersionKind{Group: "vshn.net", Version: "v1", Kind: "OperatorHarness"}
	HelmeticaGVK = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "OperatorHarness"}
	// gvks are both kinds, in the order their objects are read (GVKs).
	gvks = []schema.GroupVersionKind{GVK, HelmeticaGVK}
	// ClusterRoleGVK and RoleGVK: the review reads the roles that a
	// harness's bindings reference.
	ClusterRoleGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	RoleGVK        = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}
)

// The names of the indexes, as State (and PROXY's and LABEL's) ask them.
const (
	// IndexScopeLabel finds harnesses by spec.scopeToLabel.
	IndexScopeLabel = "gatehouse.scopeLabel"
	// IndexClaim finds harnesses by "<namespace>/<serviceAccount>" per
	// listed account, or "<namespace>/*" for one that claims its whole
	// namespace.
	IndexClaim = "gatehouse.claim"
	// IndexClaimNamespace finds harnesses by spec.operator.namespace.
	IndexClaimNamespace = "gatehouse.claimNamespace"
	// IndexName finds roles by name (Roles in every namespace).
	IndexName = "gatehouse.name"
	// IndexAll finds every ClusterRole under AllObjects: aggregation rules
	// select by labels.
	IndexAll   = "gatehouse.all"
	AllObjects = "all"
)

// Indexes are the indexes State is answered from, for both kinds of
// OperatorHarness.
func Indexes() []policies.Index {
	out := []policies.Index{
		{GVK: ClusterRoleGVK, Name: IndexName, Values: objectName},
		{GVK: ClusterRoleGVK, Name: IndexAll, Values: func(map[string]any) []string { return []string{AllObjects} }},
		{GVK: RoleGVK, Name: IndexName, Values: objectName},
	}
	for _, gvk := range gvks {
		out = append(out,
			policies.Index{GVK: gvk, Name: IndexScopeLabel, Values: scopeLabelOf},
			policies.Index{GVK: gvk, Name: IndexClaim, Values: claimKeys},
			policies.Index{GVK: gvk, Name: IndexClaimNamespace, Values: claimNamespaceOf},
		)
	}
	return out
}

func objectName(obj map[string]any) []string {
	name, _ := fields.String(obj, "metadata", "name")
	return nonEmpty(name)
}

func scopeLabelOf(h map[string]any) []string {
	label, _ := fields.String(h, "spec", "scopeToLabel")
	return nonEmpty(label)
}

func claimNamespaceOf(h map[string]any) []string {
	ns, _ := fields.String(h, "spec", "operator", "namespace")
	return nonEmpty(ns)
}

// claimKeys are the values of IndexClaim: what Claims accepts, as keys.
func claimKeys(h map[string]any) []string {
	ns, _ := fields.String(h, "spec", "operator", "namespace")
	if ns == "" {
		return nil
	}
	accounts, _ := fields.Slice(h, "spec", "operator", "serviceAccounts")
	if len(accounts) == 0 {
		return []string{ns + "/*"}
	}
	var out []string
	for _, a := range accounts {
		if s, ok := a.(string); ok && s != "" {
			out = append(out, ns+"/"+s)
		}
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
