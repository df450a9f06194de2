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

// seededState holds the objects of seed 001 plus a strimzi group: the
// mariadb group itself (as on UPDATE, or echoed by the cache), the strimzi
// group, and the four sources with provides or manages.
func seededState() *fakeState {
	return newFakeState().
		addGroup("mariadb", "backups.k8s.mariadb.com", "connections.k8s.mariadb.com", "databases.k8s.mariadb.com").
		addGroup("strimzi", "kafkas.kafka.strimzi.io", "kafkatopics.kafka.strimzi.io").
		addSource("mariadb-crds", "mariadb", "").
		addSource("mariadb-operator", "", "mariadb").
		addSource("mariadb-operator-test", "", "mariadb-test").
		addSource("strimzi-operator", "strimzi", "strimzi")
}

func crdList(names ...any) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return out
}

// baseGroup is the seed's mariadb DependencyGroup.
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
