package dependencygroup

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

func TestValidateGroup(t *testing.T) {
	const (
		crd0 = "spec.crds[0].name"
		crd1 = "spec.crds[1].name"
		crd2 = "spec.crds[2].name"
	)
	tests := []struct {
		name  string
		obj   func() map[string]any
		state State
		want  []result
	}{
		{name: "seed group, its own entries excluded", obj: baseGroup},
		{name: "new group", obj: func() map[string]any { return group("redis", "", "redis.redis.example.io") }},
		{name: "successor of a group being deleted", obj: func() map[string]any { return group("memcached", "", "memcacheds.cache.example.io") }},
		{name: "a group being deleted claims nothing", obj: func() map[string]any {
			return deleting(group("kafka", "", "kafkas.kafka.strimzi.io"))
		}},
		{name: "a group being deleted is still checked", state: failingState{}, obj: func() map[string]any {
			return deleting(group("kafka", "", "kafkas.kafka.strimzi.io", "Bad"))
		}, want: []result{deny(DependencyGroupCRDNameInvalid, crd1)}},
		{name: "missing crds", obj: func() map[string]any {
			obj := baseGroup()
			delete(spec(obj), "crds")
			return obj
		}, want: []result{deny(DependencyGroupEmpty, "spec.crds")}},
		{name: "empty crds", obj: func() map[string]any { return group("x", "") }, want: []result{deny(DependencyGroupEmpty, "spec.crds")}},
		{name: "crds not a list", obj: func() map[string]any {
			obj := baseGroup()
			spec(obj)["crds"] = "backups.k8s.mariadb.com"
			return obj
		}, want: []result{deny(DependencyGroupEmpty, "spec.crds")}},
		{name: "invalid names", obj: func() map[string]any {
			obj := group("x", "", "Backups.example.com", "nodot", "", 42, "a..b", "-a.b", "ok.example.com")
			spec(obj)["crds"] = append(spec(obj)["crds"].([]any), "string-entry", nil)
			return obj
		}, want: []result{
			deny(DependencyGroupCRDNameInvalid, crd0),
			deny(DependencyGroupCRDNameInvalid, crd1),
			deny(DependencyGroupCRDNameInvalid, crd2),
			deny(DependencyGroupCRDNameInvalid, "spec.crds[3].name"),
			deny(DependencyGroupCRDNameInvalid, "spec.crds[4].name"),
			deny(DependencyGroupCRDNameInvalid, "spec.crds[5].name"),
			deny(DependencyGroupCRDNameInvalid, "spec.crds[7].name"),
			deny(DependencyGroupCRDNameInvalid, "spec.crds[8].name"),
		}},
		{name: "duplicate reported at each later occurrence", obj: func() map[string]any {
			return group("x", "", "a.example.com", "b.example.com", "a.example.com", "a.example.com")
		}, want: []result{
			deny(DependencyGroupCRDDuplicate, crd2),
			deny(DependencyGroupCRDDuplicate, "spec.crds[3].name"),
		}},
		{name: "claimed by another group", obj: func() map[string]any {
			return group("kafka", "", "kafkas.kafka.strimzi.io", "other.example.com", "kafkatopics.kafka.strimzi.io")
		}, want: []result{
			deny(DependencyGroupCRDClaimed, crd0),
			deny(DependencyGroupCRDClaimed, crd2),
		}},
		{name: "renamed seed group clashes with the stored one", obj: func() map[string]any {
			obj := baseGroup()
			obj["metadata"].(map[string]any)["name"] = "mariadb-2"
			return obj
		}, want: []result{
			deny(DependencyGroupCRDClaimed, crd0),
			deny(DependencyGroupCRDClaimed, crd1),
			deny(DependencyGroupCRDClaimed, crd2),
		}},
		{name: "harnessRef wrong kind and no name", obj: func() map[string]any {
			obj := baseGroup()
			spec(obj)["harnessRef"] = map[string]any{"kind": "Deployment"}
			return obj
		}, want: []result{
			deny(DependencyGroupHarnessRefInvalid, "spec.harnessRef.kind"),
			deny(DependencyGroupHarnessRefInvalid, "spec.harnessRef.name"),
		}},
		{name: "harnessRef kind unset", obj: func() map[string]any {
			obj := baseGroup()
			spec(obj)["harnessRef"] = map[string]any{"name": "x"}
			return obj
		}},
		{name: "harnessRef kind not a string", obj: func() map[string]any {
			obj := baseGroup()
			spec(obj)["harnessRef"] = map[string]any{"kind": 1.0, "name": "x"}
			return obj
		}, want: []result{deny(DependencyGroupHarnessRefInvalid, "spec.harnessRef.kind")}},
		{name: "no harnessRef", obj: func() map[string]any {
			obj := baseGroup()
			delete(spec(obj), "harnessRef")
			return obj
		}},
		{name: "state error: one denial at the first lookup", obj: baseGroup, state: failingState{},
			want: []result{deny(policies.StateUnavailable, crd0)}},
		{name: "state error after invalid names", state: failingState{}, obj: func() map[string]any {
			return group("x", "", "BAD", "a.example.com", "b.example.com")
		}, want: []result{
			deny(DependencyGroupCRDNameInvalid, crd0),
			deny(policies.StateUnavailable, crd1),
		}},
		{name: "malformed", obj: func() map[string]any {
			return map[string]any{"metadata": "x", "spec": map[string]any{"crds": []any{map[string]any{"name": []any{}}}, "harnessRef": "x"}}
		}, want: []result{deny(DependencyGroupCRDNameInvalid, crd0)}},
		{name: "nil object", obj: func() map[string]any { return nil }, want: []result{deny(DependencyGroupEmpty, "spec.crds")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.state
			if state == nil {
				state = seededState()
			}
			if got := results(ValidateGroup(tt.obj(), state)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestClaimedMessage: the message names the CRD and every other group,
// sorted, but never the group under review.
func TestClaimedMessage(t *testing.T) {
	state := newFakeState().addGroup("zeta", "a.example.com").addGroup("alpha", "a.example.com").addGroup("self", "a.example.com")
	findings := ValidateGroup(group("self", "", "a.example.com"), state)
	if len(findings) != 1 {
		t.Fatalf("findings = %v", findings)
	}
	msg := findings[0].Message
	if !strings.Contains(msg, "a.example.com") || !strings.Contains(msg, "DependencyGroups alpha, zeta;") || strings.Contains(msg, "self") {
		t.Errorf("message = %q", msg)
	}
}

func TestValidCRDName(t *testing.T) {
	for name, want := range map[string]bool{
		"backups.k8s.mariadb.com":         true,
		"a.b":                             true,
		"nodot":                           false,
		"":                                false,
		"Backups.example.com":             false,
		"a_b.example.com":                 false,
		"a.example.com.":                  false,
		strings.Repeat("a", 250) + ".com": false,
	} {
		if got := ValidCRDName(name); got != want {
			t.Errorf("ValidCRDName(%q) = %v, want %v", name, got, want)
		}
	}
}
