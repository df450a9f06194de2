package harness

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

func TestHarnessIndexes(t *testing.T) {
	tests := []struct {
		name                         string
		spec                         map[string]any
		scopeLabel, claim, namespace []string
	}{
		{
			name:       "listed accounts",
			spec:       map[string]any{"scopeToLabel": "l", "operator": map[string]any{"namespace": "ns", "serviceAccounts": []any{"a", "", 7, "b"}}},
			scopeLabel: []string{"l"}, claim: []string{"ns/a", "ns/b"}, namespace: []string{"ns"},
		},
		{
			name:  "no accounts claims the whole namespace",
			spec:  map[string]any{"operator": map[string]any{"namespace": "ns"}},
			claim: []string{"ns/*"}, namespace: []string{"ns"},
		},
		{
			name:  "accounts of the wrong type claim the whole namespace, as Claims reads them",
			spec:  map[string]any{"operator": map[string]any{"namespace": "ns", "serviceAccounts": "a"}},
			claim: []string{"ns/*"}, namespace: []string{"ns"},
		},
		{name: "no operator namespace claims nothing", spec: map[string]any{"scopeToLabel": "l", "operator": map[string]any{"serviceAccounts": []any{"a"}}}, scopeLabel: []string{"l"}},
		{name: "values of the wrong type", spec: map[string]any{"scopeToLabel": 1, "operator": "ns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]any{"metadata": map[string]any{"name": "h"}, "spec": tt.spec}
			for _, gvk := range gvks {
				for index, want := range map[string][]string{IndexScopeLabel: tt.scopeLabel, IndexClaim: tt.claim, IndexClaimNamespace: tt.namespace} {
					if got := policies.IndexValues(Indexes(), gvk, index, h); !slices.Equal(got, want) {
						t.Errorf("%s %s = %v, want %v", gvk.Group, index, got, want)
					}
				}
			}
			// The view and the review agree: the harness claims each
			// account it is found under.
			for _, key := range tt.claim {
				ns, account, _ := strings.Cut(key, "/")
				if account == "*" {
					account = "anyone"
				}
				if !Claims(h, ns, account) {
					t.Errorf("found under %s, but Claims(%s, %s) is false", key, ns, account)
				}
			}
		})
	}
}

func TestRoleIndexes(t *testing.T) {
	role := map[string]any{"metadata": map[string]any{"name": "r", "namespace": "n"}}
	for _, gvk := range []schema.GroupVersionKind{ClusterRoleGVK, RoleGVK} {
		if got := policies.IndexValues(Indexes(), gvk, IndexName, role); !slices.Equal(got, []string{"r"}) {
			t.Errorf("%s name index = %v", gvk.Kind, got)
		}
	}
	if got := policies.IndexValues(Indexes(), ClusterRoleGVK, IndexAll, role); !slices.Equal(got, []string{AllObjects}) {
		t.Errorf("every ClusterRole is found under %q, got %v", AllObjects, got)
	}
	if got := policies.IndexValues(Indexes(), RoleGVK, IndexName, map[string]any{}); got != nil {
		t.Errorf("a role without a name is found under %v", got)
	}
}
