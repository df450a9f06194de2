package webhooks

import (
	"errors"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// The objects DG, CRDS, HARNESS, PROXY and LABEL look up. OperatorHarness
// comes in two groups, both read wherever a harness is read: the seed's
// vshn.net/v1 and helmetica's helmetica.io/v1 (scopeToLabel and operator
// only, Enforce mode). CustomResourceDefinitionSource is namespaced in
// helmetica; the others are cluster-scoped.
var (
	DependencyGroupGVK  = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "DependencyGroup"}
	CRDSourceGVK        = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "CustomResourceDefinitionSource"}
	HarnessGVK          = schema.GroupVersionKind{Group: "vshn.net", Version: "v1", Kind: "OperatorHarness"}
	HelmeticaHarnessGVK = schema.GroupVersionKind{Group: "helmetica.io", Version: "v1", Kind: "OperatorHarness"}
	// ClusterRoleGVK and RoleGVK: HARNESS reviews the roles that a harness's
	// bindings reference.
	ClusterRoleGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	RoleGVK        = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}
)

// HarnessGVKs are the kinds of OperatorHarness, in the order their objects
// are read.
var HarnessGVKs = []schema.GroupVersionKind{HarnessGVK, HelmeticaHarnessGVK}

// stateKinds are the kinds the view caches, each with the plural of its
// resource: a kind whose CRD is not installed has no objects (deploy/default
// installs none of helmetica's CRDs). Built-in kinds, served by every API
// server, have no CRD and no plural here.
var stateKinds = map[schema.GroupVersionKind]string{
	DependencyGroupGVK:  "dependencygroups",
	CRDSourceGVK:        "customresourcedefinitionsources",
	HarnessGVK:          "operatorharnesses",
	HelmeticaHarnessGVK: "operatorharnesses",
	ClusterRoleGVK:      "",
	RoleGVK:             "",
}

// ObjectKey is how the view names an object: "<namespace>/<name>" for a
// namespaced one, the name for a cluster-scoped one. The policies exclude
// the object under review from every lookup by this key.
func ObjectKey(obj map[string]any) string { return dependencygroup.ObjectKey(obj) }

// stateIndex is one lookup key of cached objects: the values an object is
// found under. The server registers these as informer field indexes (O(1)
// lookups); `gatehouse check` applies them to its --state objects.
type stateIndex struct {
	gvk    schema.GroupVersionKind
	name   string
	values func(obj map[string]any) []string
}

// stateIndexes are every index the evaluators need. What a group or source
// claims is the policy's own reading (both shapes of a source; nothing for
// an object being deleted).
var stateIndexes = append([]stateIndex{
	{DependencyGroupGVK, "gatehouse.crd", dependencygroup.ListedCRDs},
	{CRDSourceGVK, "gatehouse.provides", dependencygroup.ProvidedGroups},
	{CRDSourceGVK, "gatehouse.manages", dependencygroup.ManagedScopes},
	{ClusterRoleGVK, "gatehouse.name", nameIndex},
	// Every ClusterRole under one value: aggregation rules select by labels.
	{ClusterRoleGVK, "gatehouse.all", func(map[string]any) []string { return []string{allObjects} }},
	// Roles of one name in every namespace.
	{RoleGVK, "gatehouse.name", nameIndex},
}, harnessIndexes(HarnessGVKs...)...)

// harnessIndexes are the indexes of each kind of OperatorHarness.
func harnessIndexes(gvks ...schema.GroupVersionKind) []stateIndex {
	var out []stateIndex
	for _, gvk := range gvks {
		out = append(out,
			stateIndex{gvk, "gatehouse.scopeLabel", func(obj map[string]any) []string { return nonEmpty(stringAt(spec(obj), "scopeToLabel")) }},
			stateIndex{gvk, "gatehouse.claim", harnessClaims},
			stateIndex{gvk, "gatehouse.claimNamespace", func(obj map[string]any) []string {
				operator, _ := spec(obj)["operator"].(map[string]any)
				return nonEmpty(stringAt(operator, "namespace"))
			}},
		)
	}
	return out
}

// allObjects is the one value of the gatehouse.all index.
const allObjects = "all"

func nameIndex(obj map[string]any) []string {
	meta, _ := obj["metadata"].(map[string]any)
	return nonEmpty(stringAt(meta, "name"))
}

// harnessClaims are "<namespace>/<serviceAccount>" per listed account, or
// "<namespace>/*" for a harness that claims its whole namespace.
func harnessClaims(obj map[string]any) []string {
	operator, _ := spec(obj)["operator"].(map[string]any)
	ns := stringAt(operator, "namespace")
	if ns == "" {
		return nil
	}
	accounts, _ := operator["serviceAccounts"].([]any)
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

// IndexNames returns the names of the indexes of gvk's objects.
func IndexNames(gvk schema.GroupVersionKind) []string {
	var out []string
	for _, idx := range stateIndexes {
		if idx.gvk == gvk {
			out = append(out, idx.name)
		}
	}
	return out
}

// IndexValues applies index name of gvk to obj, for readers that keep
// objects in memory (`gatehouse check`).
func IndexValues(gvk schema.GroupVersionKind, index string, obj map[string]any) []string {
	for _, idx := range stateIndexes {
		if idx.gvk == gvk && idx.name == index {
			return idx.values(obj)
		}
	}
	return nil
}

func spec(obj map[string]any) map[string]any {
	s, _ := obj["spec"].(map[string]any)
	return s
}

func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// StateReader answers index lookups over the cached kinds: the ObjectKeys
// of the objects of a kind found under an index value, or whether a
// cluster-scoped one exists. An error means the view cannot answer
// (unsynced, failed): the evaluators then deny.
type StateReader interface {
	Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error)
	Exists(gvk schema.GroupVersionKind, name string) (bool, error)
	// Objects returns the objects found under an index value, as decoded
	// JSON trimmed to what the lookups read; callers must not change them.
	Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error)
}

// NamespaceReader answers a namespace's labels: none, without error, for a
// namespace that does not exist; an error when the view cannot answer.
type NamespaceReader interface {
	NamespaceLabels(name string) (map[string]string, error)
}

// errNoClusterState is the answer of a server that reads no cluster state.
var errNoClusterState = errors.New("gatehouse reads no cluster state (no kubeconfig or in-cluster configuration)")

// policyState adapts a StateReader to the State interfaces of the policies.
type policyState struct{ r StateReader }

var (
	_ dependencygroup.State = policyState{}
	_ harness.State         = policyState{}
)

func (p policyState) lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	if p.r == nil {
		return nil, errNoClusterState
	}
	return p.r.Lookup(gvk, index, value)
}

func (p policyState) GroupsListingCRD(crd string) ([]string, error) {
	return p.lookup(DependencyGroupGVK, "gatehouse.crd", crd)
}

func (p policyState) SourcesProviding(group string) ([]string, error) {
	return p.lookup(CRDSourceGVK, "gatehouse.provides", group)
}

func (p policyState) SourcesManaging(scope string) ([]string, error) {
	return p.lookup(CRDSourceGVK, "gatehouse.manages", scope)
}

func (p policyState) GroupExists(name string) (bool, error) {
	if p.r == nil {
		return false, errNoClusterState
	}
	return p.r.Exists(DependencyGroupGVK, name)
}

// harnessLookup looks value up in both kinds of OperatorHarness; a
// helmetica harness is named by harness.HelmeticaKey, so that it and a
// vshn.net harness of the same name are two harnesses.
func (p policyState) harnessLookup(index, value string) ([]string, error) {
	var out []string
	for _, gvk := range HarnessGVKs {
		names, err := p.lookup(gvk, index, value)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if gvk == HelmeticaHarnessGVK {
				n = harness.HelmeticaKey(n)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func (p policyState) HarnessesWithScopeLabel(label string) ([]string, error) {
	names, err := p.harnessLookup("gatehouse.scopeLabel", label)
	return sortedUnique(names), err
}

func (p policyState) objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	if p.r == nil {
		return nil, errNoClusterState
	}
	return p.r.Objects(gvk, index, value)
}

func (p policyState) ClusterRolesNamed(name string) ([]map[string]any, error) {
	return p.objects(ClusterRoleGVK, "gatehouse.name", name)
}

func (p policyState) ClusterRoles() ([]map[string]any, error) {
	return p.objects(ClusterRoleGVK, "gatehouse.all", allObjects)
}

func (p policyState) RolesNamed(name string) ([]map[string]any, error) {
	return p.objects(RoleGVK, "gatehouse.name", name)
}

// HarnessesClaiming: for an account, the harnesses listing it and those
// claiming the whole namespace; for the whole namespace, every claim in it.
func (p policyState) HarnessesClaiming(namespace, serviceAccount string) ([]string, error) {
	if serviceAccount == "" {
		names, err := p.harnessLookup("gatehouse.claimNamespace", namespace)
		return sortedUnique(names), err
	}
	byAccount, err := p.harnessLookup("gatehouse.claim", namespace+"/"+serviceAccount)
	if err != nil {
		return nil, err
	}
	wholeNamespace, err := p.harnessLookup("gatehouse.claim", namespace+"/*")
	if err != nil {
		return nil, err
	}
	return sortedUnique(append(byAccount, wholeNamespace...)), nil
}

func sortedUnique(names []string) []string {
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	return out
}
