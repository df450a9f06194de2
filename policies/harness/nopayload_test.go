package harness

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestNoPayloadInFindings plants a marker in every value the policy reads
// that is not a valid name (mode, scope label, namespace, service accounts,
// RBAC rule lists, acknowledgement names, lists and reasons, roleRefs of
// bindings, whose names are never echoed) and in fields
// it does not read, in harnesses that draw every kind of finding, and proves
// that no finding's message or field path carries it (docs/contracts.md §0.3).
// Valid acknowledgement names (DNS-1123 labels) appear in messages; the
// marker is not one, so an entry named by it is invalid and not echoed.
func TestNoPayloadInFindings(t *testing.T) {
	const marker = "MARKERh4rn55"
	dangerous := map[string]any{
		"apiGroups":     []any{"", marker},
		"resources":     []any{"secrets", "*", marker},
		"verbs":         []any{"list", "escalate", "scopedlist", marker},
		"resourceNames": []any{},
	}
	scoped := rule(strs(""), strs(marker), strs("scopedlist"), marker)
	inputs := []func(map[string]any){
		func(o map[string]any) {
			spec(o)["mode"] = marker
			spec(o)["scopeToLabel"] = "bad label " + marker
			spec(o)["operator"] = map[string]any{"namespace": marker, "serviceAccounts": strs(marker)}
			addClusterRule(o, dangerous)
			addClusterRule(o, scoped)
			withAcks(ack("short", strs(""), strs("secrets"), strs("list"), marker),
				ack(marker, strs(marker), strs(marker), strs(marker), marker+" is the reason"),
				map[string]any{"name": "lists", "apiGroups": strs(marker), "resources": []any{}, "verbs": marker, "reason": strings.Repeat(marker, 100)})(o)
		},
		func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "ok", "serviceAccounts": strs("Bad"+marker, "ok")}
			addClusterRule(o, dangerous)
			withAcks(ack("acknowledged", strs("", marker), strs("secrets", "*", marker), strs("list", "escalate", "scopedlist", "*", marker), "acknowledged: "+marker),
				ack("unused", strs(marker), strs(marker), strs(marker), marker+" unused"),
				ack("partial", strs(""), strs("secrets"), strs("list"), marker+" partial"))(o)
			addClusterRule(o, map[string]any{"verbs": marker, "apiGroups": strs(marker)})
			addClusterRule(o, rule(strs(""), strs("secrets"), strs("get", "list")))
			spec(o)["clusterRoles"].(map[string]any)["rules"] = append(clusterRules(o), marker)
		},
		func(o map[string]any) {
			report(o)
			addClusterRule(o, dangerous)
			o["metadata"].(map[string]any)["annotations"] = map[string]any{"note": marker}
		},
		func(o map[string]any) {
			spec(o)["clusterRoles"] = map[string]any{"rules": marker}
			withAcks(marker)(o)
		},
		func(o map[string]any) { spec(o)["clusterRoles"] = marker },
		func(o map[string]any) {
			spec(o)["scopeToLabel"] = "kubernetes.io/" + marker
			spec(o)["clusterRoleBindings"] = []any{
				map[string]any{"apiGroup": marker, "kind": marker, "name": marker + "/x"},
				roleRefTo(kindClusterRole, marker),
				roleRefTo(kindClusterRole, "cluster-admin"),
				marker,
			}
			spec(o)["roleBindings"] = map[string]any{"roleRefs": []any{roleRefTo(kindRole, marker), roleRefTo(kindRole, "mariadb-tenant")}}
		},
		func(o map[string]any) { spec(o)["roleBindings"] = marker },
	}
	for i, tweak := range inputs {
		for _, state := range []State{seededState(), failingState{}} {
			obj := baseHarness()
			tweak(obj)
			findings := ValidateHarness(obj, state)
			// Input 2 is in Report mode: it warns, and must still draw
			// findings, or the check below proves nothing for it.
			if i != 2 && !policies.Denied(findings) {
				t.Errorf("input %d: drew no denial", i)
			}
			if len(findings) == 0 {
				t.Errorf("input %d: drew no finding", i)
			}
			for _, f := range findings {
				if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
					t.Errorf("input %d: finding leaks a value: %s %s: %s", i, f.Code, f.Field, f.Message)
				}
			}
		}
	}
}
