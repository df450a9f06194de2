package scope

import (
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

func TestCustomResourceWalk(t *testing.T) {
	const tls = "spec.clusterConfig.authentication.tls.scope"
	tests := []struct {
		name  string
		tweak func(obj map[string]any)
		want  []result
	}{
		{name: "valid"},
		{name: "valid listener volumes", tweak: func(obj map[string]any) {
			hdfsScope(obj)["listenerVolumes"] = []any{"listener", "listener-bootstrap"}
		}},
		{name: "no services", tweak: func(obj map[string]any) { delete(hdfsScope(obj), "services") }},
		{name: "service splices node", tweak: func(obj map[string]any) { hdfsScope(obj)["services"] = []any{"web", "mysvc,node"} },
			want: []result{deny(ScopeNameHasDelimiter, tls+".services[1]")}},
		{name: "service with =", tweak: func(obj map[string]any) { hdfsScope(obj)["services"] = []any{"a=b"} },
			want: []result{deny(ScopeNameHasDelimiter, tls+".services[0]")}},
		{name: "listener volume with =", tweak: func(obj map[string]any) { hdfsScope(obj)["listenerVolumes"] = []any{"a=b"} },
			want: []result{deny(ScopeNameHasDelimiter, tls+".listenerVolumes[0]")}},
		{name: "listener volume splices pod", tweak: func(obj map[string]any) { hdfsScope(obj)["listenerVolumes"] = []any{"lb,pod"} },
			want: []result{deny(ScopeNameHasDelimiter, tls+".listenerVolumes[0]")}},
		{name: "empty service", tweak: func(obj map[string]any) { hdfsScope(obj)["services"] = []any{""} },
			want: []result{deny(ScopeNameEmpty, tls+".services[0]")}},
		{name: "null and number", tweak: func(obj map[string]any) { hdfsScope(obj)["services"] = []any{nil, float64(3)} },
			want: []result{deny(ScopeNameEmpty, tls+".services[0]"), deny(ScopeNameEmpty, tls+".services[1]")}},
		{name: "services not a list is skipped", tweak: func(obj map[string]any) { hdfsScope(obj)["services"] = "mysvc,node" }},
		{name: "scope not an object is skipped", tweak: func(obj map[string]any) {
			dig(obj, "spec", "clusterConfig", "authentication", "tls")["scope"] = []any{"mysvc,node"}
		}},
		{name: "no secretClass: not a holder", tweak: func(obj map[string]any) {
			delete(dig(obj, "spec", "clusterConfig", "authentication", "tls"), "secretClass")
			hdfsScope(obj)["services"] = []any{"mysvc,node"}
		}},
		{name: "null secretClass still a holder", tweak: func(obj map[string]any) {
			dig(obj, "spec", "clusterConfig", "authentication", "tls")["secretClass"] = nil
			hdfsScope(obj)["services"] = []any{"mysvc,node"}
		}, want: []result{deny(ScopeNameHasDelimiter, tls+".services[0]")}},
		{name: "holder inside a list", tweak: func(obj map[string]any) {
			dig(obj, "spec", "clusterConfig")["authentication"] = []any{
				map[string]any{"authenticationClass": "ldap"},
				map[string]any{"tls": credentialsHolder("ok", "mysvc,node")},
			}
		}, want: []result{deny(ScopeNameHasDelimiter, "spec.clusterConfig.authentication[1].tls.scope.services[1]")}},
		{name: "holders everywhere, sorted", tweak: func(obj map[string]any) {
			dig(obj, "spec")["zz"] = credentialsHolder("a,pod")
			dig(obj, "spec")["aa"] = map[string]any{"x": []any{[]any{credentialsHolder("")}}}
		}, want: []result{
			deny(ScopeNameEmpty, "spec.aa.x[0][0].scope.services[0]"),
			deny(ScopeNameHasDelimiter, "spec.zz.scope.services[0]"),
		}},
		{name: "podOverrides ephemeral volume", tweak: func(obj map[string]any) {
			annotations := validSecretAnnotations()
			annotations[annotationScope] = "pod,,node"
			dig(obj, "spec", "nameNodes", "roleGroups", "default")["podOverrides"] = map[string]any{
				"spec": map[string]any{"volumes": []any{secretVolume("extra", annotations)}},
			}
		}, want: []result{deny(ScopeEntryEmpty,
			"spec.nameNodes.roleGroups.default.podOverrides.spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]")}},
		{name: "volumeClaimTemplate of the wrong type is skipped", tweak: func(obj map[string]any) {
			dig(obj, "spec")["volumeClaimTemplate"] = "x"
			dig(obj, "spec")["other"] = map[string]any{"volumeClaimTemplate": map[string]any{"metadata": []any{}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := baseHdfsCluster()
			if tt.tweak != nil {
				tt.tweak(obj)
			}
			if got := results(Validate(gkHdfsCluster, obj)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestCustomResourceWalkDepth: the walk stops at maxWalkDepth levels, and a
// far deeper object neither panics nor exhausts the stack.
func TestCustomResourceWalkDepth(t *testing.T) {
	nest := func(levels int) map[string]any {
		// The holder is the object at the given level; the root is level 1.
		v := credentialsHolder("mysvc,node")
		for range levels - 1 {
			v = map[string]any{"x": v}
		}
		return v
	}
	if findings := Validate(gkHdfsCluster, nest(maxWalkDepth)); !policies.Denied(findings) {
		t.Errorf("holder at level %d not checked", maxWalkDepth)
	}
	if findings := Validate(gkHdfsCluster, nest(maxWalkDepth+1)); len(findings) != 0 {
		t.Errorf("holder at level %d checked: %+v", maxWalkDepth+1, findings)
	}
	deep := map[string]any{}
	cur := deep
	for range 100000 {
		next := map[string]any{}
		cur["x"] = []any{next}
		cur = next
	}
	_ = Validate(gkHdfsCluster, deep)
}
