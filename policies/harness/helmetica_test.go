package harness

import (
	"reflect"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// helmeticaHarness is helmetica's own OperatorHarness sample
// (helmetica.io/v1: scopeToLabel and operator only).
func helmeticaHarness(name, label, namespace string, accounts ...string) map[string]any {
	return map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "OperatorHarness",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"scopeToLabel": label,
			"operator":     map[string]any{"namespace": namespace, "serviceAccounts": strs(accounts...), "injectProxyConfiguration": true},
		},
	}
}

func TestValidateHelmeticaHarness(t *testing.T) {
	state := seededState().add(HelmeticaKey("valkey-operator"), "requires.helmetica.io/valkey", "valkey", "operator")
	tests := []struct {
		name string
		obj  map[string]any
		want []result
	}{
		{name: "helmetica's sample, new", obj: helmeticaHarness("redis-operator", "requires.helmetica.io/operator-redis", "redis", "operator")},
		{name: "itself on UPDATE", obj: helmeticaHarness("valkey-operator", "requires.helmetica.io/valkey", "valkey", "operator")},
		{name: "a vshn.net harness of the same name is another harness",
			obj:  helmeticaHarness("mariadb-operator", scopeLabel, "mariadb-operator", "operator-mariadb-operator"),
			want: []result{deny(HarnessServiceAccountClaimed, "spec.operator.serviceAccounts[0]"), deny(HarnessScopeLabelClaimed, "spec.scopeToLabel")}},
		{name: "no scope label: Enforce whatever it says", obj: func() map[string]any {
			obj := helmeticaHarness("x", "", "x", "x")
			obj["spec"].(map[string]any)["mode"] = "Report"
			return obj
		}(), want: []result{deny(HarnessScopeLabelInvalid, "spec.scopeToLabel")}},
		{name: "vshn.net-only fields are not read", obj: func() map[string]any {
			obj := helmeticaHarness("x", "requires.helmetica.io/x", "x", "x")
			obj["spec"].(map[string]any)["clusterRoles"] = map[string]any{"rules": []any{map[string]any{"verbs": strs("*")}}}
			return obj
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := results(ValidateHelmeticaHarness(tt.obj, state)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// FuzzValidateHelmeticaHarness: no panic, deterministic, well-formed
// findings, and a State error always denies.
func FuzzValidateHelmeticaHarness(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"m"},"spec":{"scopeToLabel":"requires.helmetica.io/operator-mariadb","operator":{"namespace":"mariadb-operator","serviceAccounts":["operator-mariadb-operator"],"injectProxyConfiguration":true}}}`))
	f.Add([]byte(`{"spec":{"scopeToLabel":1,"operator":{"namespace":["x"],"serviceAccounts":"a"},"mode":"Report"}}`))
	f.Add([]byte(`spec: spec`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return
		}
		first := ValidateHelmeticaHarness(obj, seededState())
		if again := ValidateHelmeticaHarness(obj, seededState()); !reflect.DeepEqual(first, again) {
			t.Fatal("not deterministic")
		}
		checkFindings(t, first)
		if failed := ValidateHelmeticaHarness(obj, failingState{}); !policies.Denied(failed) {
			t.Fatalf("a State error did not deny: %+v", failed)
		}
	})
}
