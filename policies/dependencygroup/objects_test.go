package dependencygroup

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// Objects shared by the table tests, the golden fixtures, the fuzz targets
// and the benchmarks. Every builder returns a fresh object.

// fakeState is a map-backed State, indexed as the webhook's informer
// indexes are.
type fakeState struct {
	groupsByCRD      map[string][]string
	providersByGroup map[string][]string
	managersByScope  map[string][]string
	groups           map[string]bool
}

func newFakeState() *fakeState {
	return &fakeState{
		groupsByCRD:      map[string][]string{},
		providersByGroup: map[string][]string{},
		managersByScope:  map[string][]string{},
		groups:           map[string]bool{},
	}
}

func (s *fakeState) addGroup(name string, crds ...string) *fakeState {
	s.groups[name] = true
	for _, crd := range crds {
		s.groupsByCRD[crd] = append(s.groupsByCRD[crd], name)
	}
	return s
}

func (s *fakeState) addSource(name, provides, managesScope string) *fakeState {
	if provides != "" {
		s.providersByGroup[provides] = append(s.providersByGroup[provides], name)
	}
	if managesScope != "" {
		s.managersByScope[managesScope] = append(s.managersByScope[managesScope], name)
	}
	return s
}

// addObject indexes a group or source as the webhook's informer indexes
// do: by ObjectKey, under ListedCRDs, ProvidedGroups and ManagedScopes
// (which skip objects being deleted).
func (s *fakeState) addObject(obj map[string]any) *fakeState {
	key := ObjectKey(obj)
	if kind, _ := obj["kind"].(string); kind == "DependencyGroup" {
		s.groups[key] = true
		for _, crd := range ListedCRDs(obj) {
			s.groupsByCRD[crd] = append(s.groupsByCRD[crd], key)
		}
		return s
	}
	for _, g := range ProvidedGroups(obj) {
		s.providersByGroup[g] = append(s.providersByGroup[g], key)
	}
	for _, scope := range ManagedScopes(obj) {
		s.managersByScope[scope] = append(s.managersByScope[scope], key)
	}
	return s
}

func (s *fakeState) GroupsListingCRD(crd string) ([]string, error) { return s.groupsByCRD[crd], nil }
func (s *fakeState) SourcesProviding(g string) ([]string, error)   { return s.providersByGroup[g], nil }
func (s *fakeState) SourcesManaging(scope string) ([]string, error) {
	return s.managersByScope[scope], nil
}
func (s *fakeState) GroupExists(name string) (bool, error) { return s.groups[name], nil }

// failingState cannot answer, like an unsynced cache.
type failingState struct{}

var errUnsynced = errors.New("cache not synced")

func (failingState) GroupsListingCRD(string) ([]string, error) { return nil, errUnsynced }
func (failingState) SourcesProviding(string) ([]string, error) { return nil, errUnsynced }
func (failingState) SourcesManaging(string) ([]string, error)  { return nil, errUnsynced }
func (failingState) GroupExists(string) (bool, error)          { return false, errUnsynced }

// seededState holds the mariadb objects plus a strimzi group: the
// mariadb group itself (as on UPDATE, or echoed by the cache), the strimzi
// group, and the four string-shaped sources with provides or manages; and a
// group and a source being deleted, whose claims are free.
func seededState() *fakeState {
	return withDeleting(groupsState().
		addSource("mariadb-crds", "mariadb", "").
		addSource("mariadb-operator", "", "mariadb").
		addSource("mariadb-operator-test", "", "mariadb-test").
		addSource("strimzi-operator", "strimzi", "strimzi"))
}

// upstreamState is a cluster running helmetica: the groups of seededState,
// helmetica's own sample sources (namespace default) as the cluster stores
// them, so that every sample fixture is reviewed against a view containing
// itself, an aliased manager in team-a, and the objects being deleted.
func upstreamState() *fakeState {
	s := groupsState()
	for _, obj := range chrysopoeiaSamples() {
		s.addObject(obj)
	}
	s.addObject(upstreamSource("team-a", "v26.mariadb-operator-dev", map[string]any{
		"manages": refList(map[string]any{"name": "mariadb", "as": "mariadb-dev"}),
	}))
	return withDeleting(s)
}

func groupsState() *fakeState {
	return newFakeState().
		addGroup("mariadb", "backups.k8s.mariadb.com", "connections.k8s.mariadb.com", "databases.k8s.mariadb.com").
		addGroup("strimzi", "kafkas.kafka.strimzi.io", "kafkatopics.kafka.strimzi.io")
}

// withDeleting adds a group and a source being deleted: memcached-old lists
// memcacheds.cache.example.io, team-a/v8.valkey-old provides and manages
// valkey. Neither claims anything.
func withDeleting(s *fakeState) *fakeState {
	s.addObject(deleting(group("memcached-old", t1, "memcacheds.cache.example.io")))
	s.addObject(deleting(upstreamSource("team-a", "v8.valkey-old", map[string]any{
		"provides": refList(map[string]any{"name": "valkey"}),
		"manages":  refList(map[string]any{"name": "valkey"}),
	})))
	return s
}

// deleting marks obj as being deleted.
func deleting(obj map[string]any) map[string]any {
	obj["metadata"].(map[string]any)["deletionTimestamp"] = t3
	return obj
}

// upstreamSource builds a source in helmetica's own shape (namespaced, with a
// reference) from the rest of its spec.
func upstreamSource(namespace, name string, rest map[string]any) map[string]any {
	spec := map[string]any{"reference": map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "name": name,
	}}
	for k, v := range rest {
		spec[k] = v
	}
	obj := source(name, spec)
	obj["metadata"].(map[string]any)["namespace"] = namespace
	return obj
}

// refList builds a list of dependency references from dependencyGroup
// objects.
func refList(groups ...map[string]any) []any {
	out := []any{}
	for _, g := range groups {
		out = append(out, map[string]any{"dependencyGroup": g})
	}
	return out
}

// chrysopoeiaSamples are the CustomResourceDefinitionSources of helmetica's
// public implementation (chrysopoeia's config/samples and its mariadb
// sample manifests), as applied to namespace default. Their spec is
// reproduced field for field.
func chrysopoeiaSamples() []map[string]any {
	discovery := func(name string) map[string]any {
		return map[string]any{"reference": map[string]any{
			"apiVersion": "image.toolkit.fluxcd.io/v1", "kind": "ImageRepository", "name": name,
		}}
	}
	sample := func(name, repo, discover, kind, plural string, rest map[string]any) map[string]any {
		spec := map[string]any{
			"reference":        map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "name": repo},
			"crdNames":         map[string]any{"kind": kind, "plural": plural},
			"versionDiscovery": discovery(discover),
		}
		for k, v := range rest {
			spec[k] = v
		}
		obj := source(name, spec)
		obj["metadata"].(map[string]any)["namespace"] = "default"
		return obj
	}
	mariadb := refList(map[string]any{"name": "mariadb"})
	return []map[string]any{
		sample("v6.podinfo", "podinfo-v6", "podinfo", "PodInfo", "podinfos", nil),
		sample("v26.mariadb-crds", "mariadb-crds-v26", "mariadb-crds-v26", "MariaDBOperatorCRD", "mariadboperatorcrds",
			map[string]any{"provides": mariadb}),
		sample("v26.mariadb-operator", "mariadb-operator-v26", "mariadb-operator-v26", "MariaDBOperator", "mariadboperators",
			map[string]any{"manages": refList(map[string]any{"name": "mariadb"})}),
		sample("v26.mariadb-cluster", "mariadb-cluster-v26", "mariadb-cluster-v26", "MariaDBCluster", "mariadbclusters",
			map[string]any{"requires": refList(map[string]any{"name": "mariadb"})}),
	}
}

func crdList(names ...any) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return out
}

// baseGroup is the mariadb DependencyGroup.
func baseGroup() map[string]any {
	return group("mariadb", "", "backups.k8s.mariadb.com", "connections.k8s.mariadb.com", "databases.k8s.mariadb.com")
}

// group builds a DependencyGroup; created is an RFC 3339 timestamp or "".
func group(name, created string, crds ...any) map[string]any {
	meta := map[string]any{"name": name}
	if created != "" {
		meta["creationTimestamp"] = created
	}
	return map[string]any{
		"apiVersion": "helmetica.io/v1",
		"kind":       "DependencyGroup",
		"metadata":   meta,
		"spec": map[string]any{
			"crds":       crdList(crds...),
			"harnessRef": map[string]any{"kind": "OperatorHarness", "name": name + "-operator"},
		},
	}
}

// source builds a CustomResourceDefinitionSource from its spec.
func source(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "helmetica.io/v1",
		"kind":       "CustomResourceDefinitionSource",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}
}

// requiresList builds spec.requires naming groups.
func requiresList(groups ...any) []any {
	out := []any{}
	for _, g := range groups {
		out = append(out, map[string]any{"dependencyGroup": map[string]any{"name": g}})
	}
	return out
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

// The table tests compare golden.Result: severity, code and field, no prose.
type result = golden.Result

var (
	deny    = golden.Deny
	warn    = golden.Warn
	results = golden.Results
)
