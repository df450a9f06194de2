package scopelabel

import (
	"reflect"
	"testing"
)

func harnessObj(mode, key, namespace string, accounts ...any) map[string]any {
	spec := map[string]any{"operator": map[string]any{"namespace": namespace, "serviceAccounts": accounts}}
	if mode != "" {
		spec["mode"] = mode
	}
	if key != "" {
		spec["scopeToLabel"] = key
	}
	return map[string]any{"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "spec": spec}
}

func TestEnforcedKeys(t *testing.T) {
	harnesses := []map[string]any{
		harnessObj("", keyB, "ops"),
		harnessObj("Enforce", keyA, "ops"),
		harnessObj("Enforce", keyA, "other"),
		harnessObj("Report", "report.example/key", "ops"),
		harnessObj("Enforce", "", "ops"),
		harnessObj("Bogus", "bogus.example/key", "ops"),
		{"spec": map[string]any{"scopeToLabel": 7}},
		{"spec": "not an object"},
		nil,
	}
	want := []string{"bogus.example/key", keyA, keyB}
	if got := EnforcedKeys(harnesses); !reflect.DeepEqual(got, want) {
		t.Errorf("EnforcedKeys() = %v, want %v", got, want)
	}
	if got := EnforcedKeys(nil); len(got) != 0 {
		t.Errorf("EnforcedKeys(nil) = %v, want none", got)
	}
}

func TestClaimedKeys(t *testing.T) {
	harnesses := []map[string]any{
		harnessObj("Enforce", keyA, "ops", "mariadb-operator"),
		harnessObj("", keyB, "whole"),
		harnessObj("Report", "report.example/key", "ops", "mariadb-operator"),
	}
	tests := []struct {
		user string
		want []string
	}{
		{"system:serviceaccount:ops:mariadb-operator", []string{keyA}},
		{"system:serviceaccount:ops:other", nil},
		{"system:serviceaccount:whole:anything", []string{keyB}},
		{"system:serviceaccount:elsewhere:mariadb-operator", nil},
		{"mariadb-operator", nil},
		{"system:serviceaccount:ops", nil},
		{"system:serviceaccount::mariadb-operator", nil},
		{"system:serviceaccount:ops:", nil},
		{"system:serviceaccount:ops:mariadb-operator:extra", nil},
		{"system:serviceaccounts:ops:mariadb-operator", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := ClaimedKeys(harnesses, tt.user); !reflect.DeepEqual(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
			t.Errorf("ClaimedKeys(%q) = %v, want %v", tt.user, got, tt.want)
		}
	}
}
