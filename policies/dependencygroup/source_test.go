package dependencygroup

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

func TestValidateSource(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name  string
		obj   map[string]any
		state State
		want  []result
	}{
		{name: "seed provider, its own entry excluded", obj: source("mariadb-crds", map[string]any{"provides": "mariadb"})},
		{name: "seed manager", obj: source("mariadb-operator", map[string]any{"manages": "mariadb"})},
		{name: "seed alias", obj: source("mariadb-operator-test", map[string]any{"manages": "mariadb as mariadb-test"})},
		{name: "provides and manages one group", obj: source("strimzi-operator", map[string]any{"provides": "strimzi", "manages": "strimzi"})},
		{name: "seed consumer", obj: source("mariadb-cluster", map[string]any{"requires": requiresList("mariadb", "strimzi")})},
		{name: "empty spec", obj: source("x", map[string]any{}), want: []result{deny(CRDSourceEmpty, "spec")}},
		{name: "empty requires only", obj: source("x", map[string]any{"requires": []any{}}), want: []result{deny(CRDSourceEmpty, "spec")}},
		{name: "provides claimed", obj: source("mariadb-crds-2", map[string]any{"provides": "mariadb"}),
			want: []result{deny(CRDSourceProvidesClaimed, "spec.provides")}},
		{name: "manages claimed", obj: source("other", map[string]any{"manages": "mariadb"}),
			want: []result{deny(CRDSourceManagesClaimed, "spec.manages")}},
		{name: "alias claimed by a plain manager", obj: source("other", map[string]any{"manages": "redis as strimzi"}),
			want: []result{deny(CRDSourceManagesClaimed, "spec.manages")}},
		{name: "plain manager claimed by an alias", obj: source("other", map[string]any{"manages": "mariadb-test"}),
			want: []result{deny(CRDSourceManagesClaimed, "spec.manages")}},
		{name: "new alias of a managed group", obj: source("other", map[string]any{"manages": "mariadb as mariadb-dev"})},
		{name: "manages invalid", obj: source("x", map[string]any{"manages": "a as b as c"}),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages")}},
		{name: "manages empty", obj: source("x", map[string]any{"manages": ""}),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages")}},
		{name: "manages scope label too long", obj: source("x", map[string]any{"manages": "mariadb as " + long}),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages")}},
		{name: "manages group label too long", obj: source("x", map[string]any{"manages": long}),
			want: []result{deny(CRDSourceScopeLabelInvalid, "spec.manages")}},
		{name: "provides invalid", obj: source("x", map[string]any{"provides": "MariaDB"}),
			want: []result{deny(CRDSourceGroupNameInvalid, "spec.provides")}},
		{name: "provides empty", obj: source("x", map[string]any{"provides": ""}),
			want: []result{deny(CRDSourceGroupNameInvalid, "spec.provides")}},
		{name: "provides scope label too long", obj: source("x", map[string]any{"provides": long}),
			want: []result{deny(CRDSourceScopeLabelInvalid, "spec.provides")}},
		{name: "requires missing group warns", obj: source("x", map[string]any{"requires": requiresList("mariadb", "redis")}),
			want: []result{warn(CRDSourceRequiresMissing, "spec.requires[1].dependencyGroup.name")}},
		{name: "requires invalid entries", obj: source("x", map[string]any{"requires": append(requiresList("", "A", long), "x", nil)}),
			want: []result{
				deny(CRDSourceGroupNameInvalid, "spec.requires[0].dependencyGroup.name"),
				deny(CRDSourceGroupNameInvalid, "spec.requires[1].dependencyGroup.name"),
				deny(CRDSourceScopeLabelInvalid, "spec.requires[2].dependencyGroup.name"),
				deny(CRDSourceGroupNameInvalid, "spec.requires[3].dependencyGroup.name"),
				deny(CRDSourceGroupNameInvalid, "spec.requires[4].dependencyGroup.name"),
			}},
		{name: "namespaced source is not the cluster-scoped one", obj: func() map[string]any {
			obj := source("mariadb-crds", map[string]any{"provides": "mariadb"})
			obj["metadata"].(map[string]any)["namespace"] = "team-a"
			return obj
		}(), want: []result{deny(CRDSourceProvidesClaimed, "spec.provides")}},
		{name: "state error at provides stops lookups", state: failingState{},
			obj:  source("x", map[string]any{"provides": "a", "manages": "b", "requires": requiresList("c")}),
			want: []result{deny(policies.StateUnavailable, "spec.provides")}},
		{name: "state error at requires denies", state: failingState{},
			obj:  source("x", map[string]any{"manages": "a as B", "requires": requiresList("c")}),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages"), deny(policies.StateUnavailable, "spec.requires[0].dependencyGroup.name")}},
		{name: "helmetica's source in a view containing itself", state: upstreamState(),
			obj: chrysopoeiaSample("v26.mariadb-operator")()},
		{name: "reference alone", obj: upstreamSource("default", "v6.podinfo", nil)},
		{name: "seed provider against helmetica's, across shapes", state: upstreamState(),
			obj:  source("mariadb-crds", map[string]any{"provides": "mariadb"}),
			want: []result{deny(CRDSourceProvidesClaimed, "spec.provides")}},
		{name: "helmetica provider against a string-shaped one, across namespaces",
			obj:  upstreamSource("team-b", "mariadb-crds", map[string]any{"provides": refList(map[string]any{"name": "mariadb"})}),
			want: []result{deny(CRDSourceProvidesClaimed, "spec.provides[0].dependencyGroup.name")}},
		{name: "same name in another namespace is another source", state: upstreamState(),
			obj:  upstreamSource("team-b", "v26.mariadb-crds", map[string]any{"provides": refList(map[string]any{"name": "mariadb"})}),
			want: []result{deny(CRDSourceProvidesClaimed, "spec.provides[0].dependencyGroup.name")}},
		{name: "empty alias is no alias", state: upstreamState(),
			obj:  upstreamSource("team-b", "x", map[string]any{"manages": refList(map[string]any{"name": "mariadb", "as": ""})}),
			want: []result{deny(CRDSourceManagesClaimed, "spec.manages[0].dependencyGroup.name")}},
		{name: "alias of another type", obj: upstreamSource("team-b", "x", map[string]any{
			"manages": refList(map[string]any{"name": "mariadb", "as": 1.0}),
		}), want: []result{deny(CRDSourceAliasInvalid, "spec.manages[0].dependencyGroup.as")}},
		{name: "aliased manager with an invalid group", obj: upstreamSource("team-b", "x", map[string]any{
			"manages": refList(map[string]any{"name": "Redis", "as": "redis-a"}),
		}), want: []result{deny(CRDSourceGroupNameInvalid, "spec.manages[0].dependencyGroup.name")}},
		{name: "entries without a group", obj: upstreamSource("team-b", "x", map[string]any{
			"provides": []any{map[string]any{}}, "manages": []any{"x"}, "requires": []any{map[string]any{"dependencyGroup": nil}},
		}), want: []result{
			deny(CRDSourceGroupNameInvalid, "spec.manages[0].dependencyGroup.name"),
			deny(CRDSourceGroupNameInvalid, "spec.provides[0].dependencyGroup.name"),
			deny(CRDSourceGroupNameInvalid, "spec.requires[0].dependencyGroup.name"),
		}},
		{name: "a source being deleted claims nothing", state: upstreamState(),
			obj: deleting(upstreamSource("team-b", "v26.mariadb-crds", map[string]any{
				"provides": refList(map[string]any{"name": "mariadb"}),
				"manages":  refList(map[string]any{"name": "mariadb"}),
			}))},
		{name: "a source being deleted is still checked", obj: deleting(source("x", map[string]any{"manages": "a as b as c"})),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages")}},
		{name: "wrong types read as absent", obj: source("x", map[string]any{"provides": 1.0, "manages": []any{}, "requires": "x"}),
			want: []result{deny(CRDSourceEmpty, "spec")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.state
			if state == nil {
				state = seededState()
			}
			if got := results(ValidateSource(tt.obj, state)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestClaimedSourceMessages: claims name the other sources, sorted.
func TestClaimedSourceMessages(t *testing.T) {
	state := newFakeState().addSource("b", "g", "s").addSource("a", "g", "s")
	for _, f := range ValidateSource(source("me", map[string]any{"provides": "g", "manages": "g as s"}), state) {
		if !strings.Contains(f.Message, "sources a, b;") {
			t.Errorf("%s: message = %q", f.Code, f.Message)
		}
	}
}

// TestClaimIndexes: what an object is found under in the view, in both
// shapes; nothing for an object being deleted.
func TestClaimIndexes(t *testing.T) {
	seedSrc := source("s", map[string]any{"provides": "mariadb", "manages": "mariadb as mariadb-test"})
	upSrc := upstreamSource("ns", "u", map[string]any{
		"provides": refList(map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": "a"}),
		"manages":  refList(map[string]any{"name": "c", "as": "c-1"}, map[string]any{"name": "d", "as": ""}),
	})
	badManages := source("s", map[string]any{"manages": "a as b as c"})
	g := group("g", "", "x.io", "y.io", "x.io", "", 3.0)
	for _, tt := range []struct {
		what      string
		got, want []string
	}{
		{"seed provides", ProvidedGroups(seedSrc), []string{"mariadb"}},
		{"seed manages", ManagedScopes(seedSrc), []string{"mariadb-test"}},
		{"seed manages invalid", ManagedScopes(badManages), nil},
		{"upstream provides", ProvidedGroups(upSrc), []string{"a", "b"}},
		{"upstream manages", ManagedScopes(upSrc), []string{"c-1", "d"}},
		{"group crds", ListedCRDs(g), []string{"x.io", "y.io"}},
		{"deleting source provides", ProvidedGroups(deleting(upSrc)), nil},
		{"deleting source manages", ManagedScopes(deleting(seedSrc)), nil},
		{"deleting group", ListedCRDs(deleting(g)), nil},
		{"keys", []string{ObjectKey(seedSrc), ObjectKey(upSrc), ObjectKey(g)}, []string{"s", "ns/u", "g"}},
	} {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s = %q, want %q", tt.what, tt.got, tt.want)
		}
	}
	for _, ts := range []any{nil, ""} {
		obj := group("g", "", "x.io")
		obj["metadata"].(map[string]any)["deletionTimestamp"] = ts
		if Deleting(obj) {
			t.Errorf("deletionTimestamp %v reads as deleting", ts)
		}
	}
}
