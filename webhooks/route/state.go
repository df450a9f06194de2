package route

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// ObjectKey is how the view names an object: "<namespace>/<name>" for a
// namespaced one, the name for a cluster-scoped one. The policies exclude
// the object under review from every lookup by this key.
func ObjectKey(obj map[string]any) string { return dependencygroup.ObjectKey(obj) }

// StateReader answers index lookups over the kinds the policies look up
// (their indexes are the policies' own: policies/dependencygroup/index.go,
// policies/harness/index.go; the server's view is clusterstate.CachedState,
// check's its --state objects): the ObjectKeys
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

// ErrNoClusterState is the answer of a server that reads no cluster state.
var ErrNoClusterState = errors.New("gatehouse reads no cluster state (no kubeconfig or in-cluster configuration)")

// PolicyState adapts a StateReader to the State interfaces of the policies.
type PolicyState struct{ r StateReader }

// PolicyStateOf reads r as the policies' state interfaces.
func PolicyStateOf(r StateReader) PolicyState { return PolicyState{r} }

var (
	_ dependencygroup.State = PolicyState{}
	_ harness.State         = PolicyState{}
)

func (p PolicyState) lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	if p.r == nil {
		return nil, ErrNoClusterState
	}
	return p.r.Lookup(gvk, index, value)
}

func (p PolicyState) GroupsListingCRD(crd string) ([]string, error) {
	return p.lookup(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, crd)
}

func (p PolicyState) SourcesProviding(group string) ([]string, error) {
	return p.lookup(dependencygroup.SourceGVK, dependencygroup.IndexProvidedGroup, group)
}

func (p PolicyState) SourcesManaging(scope string) ([]string, error) {
	return p.lookup(dependencygroup.SourceGVK, dependencygroup.IndexManagedScope, scope)
}

func (p PolicyState) GroupExists(name string) (bool, error) {
	if p.r == nil {
		return false, ErrNoClusterState
	}
	return p.r.Exists(dependencygroup.GroupGVK, name)
}

// harnessLookup looks value up in both kinds of OperatorHarness; a
// helmetica harness is named by harness.HelmeticaKey, so that it and a
// vshn.net harness of the same name are two harnesses.
func (p PolicyState) harnessLookup(index, value string) ([]string, error) {
	var out []string
	for _, gvk := range harness.GVKs() {
		names, err := p.lookup(gvk, index, value)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if gvk == harness.HelmeticaGVK {
				n = harness.HelmeticaKey(n)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func (p PolicyState) HarnessesWithScopeLabel(label string) ([]string, error) {
	names, err := p.harnessLookup(harness.IndexScopeLabel, label)
	return sortedUnique(names), err
}

func (p PolicyState) objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	if p.r == nil {
		return nil, ErrNoClusterState
	}
	return p.r.Objects(gvk, index, value)
}

func (p PolicyState) ClusterRolesNamed(name string) ([]map[string]any, error) {
	return p.objects(harness.ClusterRoleGVK, harness.IndexName, name)
}

func (p PolicyState) ClusterRoles() ([]map[string]any, error) {
	return p.objects(harness.ClusterRoleGVK, harness.IndexAll, harness.AllObjects)
}

func (p PolicyState) RolesNamed(name string) ([]map[string]any, error) {
	return p.objects(harness.RoleGVK, harness.IndexName, name)
}

// HarnessesClaiming: for an account, the harnesses listing it and those
// claiming the whole namespace; for the whole namespace, every claim in it.
func (p PolicyState) HarnessesClaiming(namespace, serviceAccount string) ([]string, error) {
	if serviceAccount == "" {
		names, err := p.harnessLookup(harness.IndexClaimNamespace, namespace)
		return sortedUnique(names), err
	}
	byAccount, err := p.harnessLookup(harness.IndexClaim, namespace+"/"+serviceAccount)
	if err != nil {
		return nil, err
	}
	wholeNamespace, err := p.harnessLookup(harness.IndexClaim, namespace+"/*")
	if err != nil {
		return nil, err
	}
	return sortedUnique(append(byAccount, wholeNamespace...)), nil
}

func sortedUnique(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

// WorkloadReader lists the live workloads (apps/v1 Deployments or DaemonSets,
// as decoded JSON objects) of a namespace that carry the given labels. The
// server reads them from an informer cache; `gatehouse check` from --state.
type WorkloadReader interface {
	ListWorkloads(ctx context.Context, namespace, kind string, labels map[string]string) ([]map[string]any, error)
}

// StateNotGiven is the error of an offline view asked for what it was not
// given. What names it ("Namespace team-a", "ClusterRole admin"): names
// only, never a value of an object.
type StateNotGiven struct{ What string }

func (e *StateNotGiven) Error() string { return e.What + " was not given" }

// StateGaps is an offline view that remembers the StateNotGiven answers it
// gave; the offline chain takes them after each member decides.
type StateGaps interface {
	// TakeGaps returns what the view was asked for and not given since the
	// last call, sorted, and forgets it.
	TakeGaps() []string
}

// ExceptionReader answers the exceptions of the cluster (docs/contracts.md
// §12), compiled: the server's is clusterstate.CachedExceptions, which
// rebuilds the index when its informers see a change, check's the
// exceptions of its --state. The index is read once per review that has a
// finding to excuse; nil (no exceptions, or a view that cannot answer yet)
// excuses nothing.
type ExceptionReader interface {
	Exceptions() *exception.Index
}

// ExceptionIndexOptions are the configuration's exceptions block as the
// index of the cluster's exceptions applies it: the same for serve, audit
// and check.
func ExceptionIndexOptions(cfg configv1alpha1.Exceptions) exception.Options {
	return exception.Options{Namespaced: cfg.Namespaced, MaxDuration: cfg.MaxDuration.Duration}
}
