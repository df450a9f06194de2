package dependencygroup

import (
	"slices"
	"strings"
	"testing"
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
			want: []result{deny(StateUnavailable, "spec.provides")}},
		{name: "state error at requires denies", state: failingState{},
			obj:  source("x", map[string]any{"manages": "a as B", "requires": requiresList("c")}),
			want: []result{deny(CRDSourceManagesInvalid, "spec.manages"), deny(StateUnavailable, "spec.requires[0].dependencyGroup.name")}},
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
