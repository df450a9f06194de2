package dependencygroup

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func addFixtureSeeds(f *testing.F) {
	golden.AddFixtureSeeds(f, filepath.Join("testdata", "*", "*.yaml"))
	f.Add([]byte(`{"spec":{"crds":[null,1,{"name":null},{"name":"a.b"},{"name":"a.b"}],"harnessRef":{"kind":[]}}}`))
	f.Add([]byte(`{"spec":{"provides":"","manages":"a as b as c","requires":[1,{"dependencyGroup":"x"},{"dependencyGroup":{"name":"a"}}]}}`))
	f.Add([]byte(`{"metadata":{"namespace":"a","name":"b","deletionTimestamp":"x"},"spec":{"provides":[{"dependencyGroup":{"name":"g","as":1}}],"manages":[{"dependencyGroup":{"name":"m","as":""}},{"dependencyGroup":null},7],"requires":[{"dependencyGroup":{"name":"r","as":"A"}}],"reference":{}}}`))
	f.Add([]byte(`{"metadata":{"deletionTimestamp":"x","name":"g"},"spec":{"crds":[{"name":"kafkas.kafka.strimzi.io"}]}}`))
	f.Add([]byte(`spec: spec`))
}

// fuzzValidate runs validate for panics, determinism, sorted findings of
// this package's codes, and the property that a State error denies every
// review that needed a lookup.
func fuzzValidate(t *testing.T, obj map[string]any, validate func(map[string]any, State) []policies.Finding) {
	first := validate(obj, seededState())
	if again := validate(obj, seededState()); !reflect.DeepEqual(first, again) {
		t.Fatal("not deterministic")
	}
	checkFindings(t, first)
	counted := &countingState{State: seededState()}
	validate(obj, counted)
	failed := validate(obj, failingState{})
	checkFindings(t, failed)
	if counted.lookups > 0 && !policies.Denied(failed) {
		t.Fatalf("a State error did not deny: %+v", failed)
	}
	n := 0
	for _, f := range failed {
		if f.Code == policies.StateUnavailable {
			n++
		}
	}
	if n > 1 {
		t.Fatalf("%d StateUnavailable findings", n)
	}
}

// countingState counts the lookups of a review.
type countingState struct {
	State
	lookups int
}

func (c *countingState) GroupsListingCRD(crd string) ([]string, error) {
	c.lookups++
	return c.State.GroupsListingCRD(crd)
}

func (c *countingState) SourcesProviding(g string) ([]string, error) {
	c.lookups++
	return c.State.SourcesProviding(g)
}

func (c *countingState) SourcesManaging(scope string) ([]string, error) {
	c.lookups++
	return c.State.SourcesManaging(scope)
}

func (c *countingState) GroupExists(name string) (bool, error) {
	c.lookups++
	return c.State.GroupExists(name)
}

func checkFindings(t *testing.T, findings []policies.Finding) {
	t.Helper()
	for _, f := range findings {
		if f.Field == "" || f.Message == "" || f.Code == "" {
			t.Fatalf("finding without field, code or message: %+v", f)
		}
		if (f.Severity == policies.Warn) != (f.Code == CRDSourceRequiresMissing) {
			t.Fatalf("code %s has severity %d", f.Code, f.Severity)
		}
	}
	sorted := slices.Clone(findings)
	policies.Sort(sorted)
	if !reflect.DeepEqual(sorted, findings) {
		t.Fatal("findings are not sorted")
	}
}

func FuzzValidateGroup(f *testing.F) {
	addFixtureSeeds(f)
	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) { fuzzValidate(t, obj, ValidateGroup) })
}

func FuzzValidateSource(f *testing.F) {
	addFixtureSeeds(f)
	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) { fuzzValidate(t, obj, ValidateSource) })
}

// FuzzParseManages: no panic, and a parse either fails or yields a group
// and alias that rebuild the input.
func FuzzParseManages(f *testing.F) {
	for _, s := range []string{"mariadb", "mariadb as mariadb-test", "a as b as c", " a", "", "a  as b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		group, alias, err := ParseManages(s)
		if err != nil {
			return
		}
		rebuilt := group
		if alias != "" {
			rebuilt += " as " + alias
		}
		if rebuilt != s || !ValidGroupName(group) {
			t.Fatalf("ParseManages(%q) = %q, %q", s, group, alias)
		}
	})
}
