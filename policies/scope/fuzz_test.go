package scope

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// fuzzKinds are the kinds FuzzValidate evaluates every input as: each shape
// Validate reads, and a product custom resource.
var fuzzKinds = []schema.GroupKind{gkPod, gkPVC, gkStatefulSet, gkCronJob, gkHdfsCluster}

// FuzzValidate feeds random objects to Validate for panics and stack
// overflows, and random CredentialsScope names to the splice property (see
// checkNameProperty).
func FuzzValidate(f *testing.F) {
	for _, data := range golden.ReadFixtures(f, filepath.Join("testdata", "pass", "*.yaml"), filepath.Join("testdata", "fail", "*.yaml")) {
		f.Add(data, "mysvc,node")
	}
	f.Add([]byte(`{"spec":{"secretClass":"x","scope":{"services":["a,b",1,null,""],"listenerVolumes":"x"}}}`), "web")
	f.Add([]byte(`{"spec":{"volumes":[{"ephemeral":{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/scope":","}}}}}]}}`), "a=b")
	f.Add([]byte(`[1,2]`), "")
	f.Add([]byte(`{"a":[[[[{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/x":1}}}}]]]]}`), ",")
	f.Add([]byte(`not yaml: [`), "=,=")

	f.Fuzz(func(t *testing.T, data []byte, name string) {
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err == nil {
			for _, gk := range fuzzKinds {
				findings := Validate(gk, obj)
				sorted := slices.Clone(findings)
				policies.Sort(sorted)
				if !slices.Equal(findings, sorted) {
					t.Fatalf("%s: findings are not sorted", gk)
				}
			}
		}
		checkNameProperty(t, name)
	})
}

// FuzzWalkDepth nests a CredentialsScope holder at a random level, in a
// random mix of objects and lists, and checks that the walk never lets a
// denial through past a depth: a holder the API server can carry (its
// services list at level maxWalkDepth or less) is judged exactly as at the
// top, and any deeper one denies with ScopeWalkLimit.
func FuzzWalkDepth(f *testing.F) {
	f.Add(uint16(1), uint64(0), "web")
	f.Add(uint16(65), uint64(0), "mysvc,node")
	f.Add(uint16(maxWalkDepth-2), uint64(0xaaaaaaaaaaaaaaaa), "*")
	f.Add(uint16(maxWalkDepth-1), uint64(1), "web")
	f.Add(uint16(maxWalkDepth+1), uint64(0), "web")
	f.Fuzz(func(t *testing.T, level uint16, lists uint64, name string) {
		holderLevel := 1 + int(level)%(maxWalkDepth+8)
		var v any = credentialsHolder(name)
		for l := holderLevel; l > 1; l-- {
			// The container at level l-1; the root (level 1) is an object.
			if l > 2 && lists&(1<<(l%64)) != 0 {
				v = []any{v}
			} else {
				v = map[string]any{"x": v}
			}
		}
		findings := Validate(gkHdfsCluster, v.(map[string]any))
		atTop := Validate(gkHdfsCluster, map[string]any{"spec": credentialsHolder(name)})
		limited := slices.ContainsFunc(findings, func(f policies.Finding) bool { return f.Code == ScopeWalkLimit })
		if holderLevel+2 <= maxWalkDepth {
			if limited || policies.Denied(findings) != policies.Denied(atTop) || len(findings) != len(atTop) {
				t.Fatalf("holder at level %d: %d findings (limit %v), at the top %d", holderLevel, len(findings), limited, len(atTop))
			}
		} else if !limited || !policies.Denied(findings) {
			t.Fatalf("holder at level %d past the API server's depth: no %s", holderLevel, ScopeWalkLimit)
		}
	})
}

// FuzzRenderScope checks the property SCOPE exists for on whole
// CredentialsScopes: a scope the CR walk lets through renders (as operator-go
// renders it) into an annotation that secret-operator reads back as exactly
// the declared scopes, in order, with no finding; a scope that would render
// into anything else (an extra, missing or altered entry) is denied. Names
// are given one per line.
func FuzzRenderScope(f *testing.F) {
	seedScopesFromFixtures(f)
	f.Add(true, false, "web\napi", "lb")
	f.Add(false, true, "mysvc,node", "")
	f.Add(false, false, "a=b", "x,pod,")
	f.Add(true, true, "", "")
	f.Add(false, false, "", "")
	f.Add(false, false, "\n", "=")
	f.Add(true, false, "service=x", "listener-volume")
	f.Fuzz(func(t *testing.T, node, pod bool, serviceLines, listenerLines string) {
		services, listeners := lines(serviceLines), lines(listenerLines)
		scopeObj := map[string]any{"node": node, "pod": pod}
		if services != nil {
			scopeObj["services"] = toAny(services)
		}
		if listeners != nil {
			scopeObj["listenerVolumes"] = toAny(listeners)
		}
		cr := map[string]any{"spec": map[string]any{"secretClass": "tls", "scope": scopeObj}}
		denied := policies.Denied(Validate(gkHdfsCluster, cr))

		want := []Entry{}
		if node {
			want = append(want, Entry{Key: scopeNode})
		}
		if pod {
			want = append(want, Entry{Key: scopePod})
		}
		for _, s := range services {
			want = append(want, Entry{Key: scopeService, Value: s})
		}
		for _, l := range listeners {
			want = append(want, Entry{Key: scopeListenerVolume, Value: l})
		}
		rendered := RenderScope(node, pod, services, listeners)
		if len(want) == 0 {
			if rendered != "" {
				t.Fatalf("nothing declared, rendered %q", rendered)
			}
			return
		}
		got, findings := ParseScope(rendered, scopePath())
		exact := slices.Equal(got, want) && !policies.Denied(findings)
		if !denied && !exact {
			t.Fatalf("allowed scope renders as %d entries %+v, declared %d %+v", len(got), got, len(want), want)
		}
		if denied && exact {
			t.Fatalf("denied a scope that renders exactly as declared: %+v", want)
		}
	})
}

// lines splits s at newlines; nil for "".
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func toAny(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// seedScopesFromFixtures adds every CredentialsScope of the golden fixtures.
func seedScopesFromFixtures(f *testing.F) {
	for _, data := range golden.ReadFixtures(f, filepath.Join("testdata", "*", "*.yaml")) {
		var obj any
		if yaml.Unmarshal(data, &obj) == nil {
			seedScopes(f, obj)
		}
	}
}

func seedScopes(f *testing.F, v any) {
	switch v := v.(type) {
	case map[string]any:
		if s, ok := v["scope"].(map[string]any); ok {
			node, _ := s["node"].(bool)
			pod, _ := s["pod"].(bool)
			f.Add(node, pod, joinLines(s["services"]), joinLines(s["listenerVolumes"]))
		}
		for _, child := range v {
			seedScopes(f, child)
		}
	case []any:
		for _, child := range v {
			seedScopes(f, child)
		}
	}
}

// joinLines is the inverse of lines for a list of strings.
func joinLines(v any) string {
	list, _ := v.([]any)
	names := make([]string, 0, len(list))
	for _, item := range list {
		if s, ok := item.(string); ok {
			names = append(names, s)
		}
	}
	return strings.Join(names, "\n")
}
