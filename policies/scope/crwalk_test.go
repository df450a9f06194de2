package scope

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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

// TestCustomResourceWalkDepth: the walk reads a holder at every depth the
// API server accepts, whether nested in objects or in lists; a container
// deeper than that denies with ScopeWalkLimit (which never ratchets) at its
// path, and a far deeper object neither panics nor exhausts the stack.
func TestCustomResourceWalkDepth(t *testing.T) {
	// nest puts a spliced holder at the given level (the root is level 1),
	// each level above it an object or, with lists, alternately a list.
	nest := func(levels int, lists bool) (map[string]any, string) {
		var v any = credentialsHolder("mysvc,node")
		var keys []string
		for level := levels; level > 1; level-- {
			if lists && (level-1)%2 == 0 {
				v = []any{v}
				keys = append(keys, "[0]")
			} else {
				v = map[string]any{"x": v}
				keys = append(keys, ".x")
			}
		}
		slices.Reverse(keys)
		path := strings.TrimPrefix(strings.Join(keys, ""), ".")
		return v.(map[string]any), path
	}
	for _, lists := range []bool{false, true} {
		// The holder's services list is two levels below it, so the
		// deepest holder a request can carry is at maxWalkDepth-2.
		for _, levels := range []int{1, 65, maxWalkDepth - 2} {
			obj, holder := nest(levels, lists)
			want := deny(ScopeNameHasDelimiter, strings.TrimPrefix(holder+".scope.services[0]", "."))
			if got := results(Validate(gkHdfsCluster, obj)); !slices.Equal(got, []result{want}) {
				t.Errorf("lists=%v: holder at level %d: findings %s, want %v", lists, levels, summarize(got), want)
			}
		}
		for _, levels := range []int{maxWalkDepth - 1, maxWalkDepth} {
			obj, _ := nest(levels, lists)
			got := results(Validate(gkHdfsCluster, obj))
			if !slices.ContainsFunc(got, func(r result) bool { return r.Code == ScopeWalkLimit }) {
				t.Errorf("lists=%v: holder at level %d: findings %s, want a %s", lists, levels, summarize(got), ScopeWalkLimit)
			}
		}
		obj, holder := nest(maxWalkDepth+1, lists)
		findings := Validate(gkHdfsCluster, obj)
		if got, want := results(findings), []result{deny(ScopeWalkLimit, holder)}; !slices.Equal(got, want) {
			t.Errorf("lists=%v: holder at level %d: findings %s, want ScopeWalkLimit at the holder", lists, maxWalkDepth+1, summarize(got))
		}
		if len(findings) == 1 && findings[0].Ratchets() {
			t.Errorf("%s ratchets", ScopeWalkLimit)
		}
	}
	deep := map[string]any{}
	cur := deep
	for range 100000 {
		next := map[string]any{}
		cur["x"] = []any{next}
		cur = next
	}
	if got := Validate(gkHdfsCluster, deep); len(got) != 1 || got[0].Code != ScopeWalkLimit {
		t.Errorf("100000 levels: %d findings, want one %s", len(got), ScopeWalkLimit)
	}
}

// summarize shortens results whose paths run to thousands of levels.
func summarize(rs []result) string {
	var b strings.Builder
	for _, r := range rs {
		field := r.Field
		if len(field) > 80 {
			field = field[:40] + "..." + field[len(field)-40:]
		}
		fmt.Fprintf(&b, "[%v %s %s]", r.Severity, r.Code, field)
	}
	return b.String()
}
