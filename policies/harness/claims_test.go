package harness

import "testing"

func TestClaims(t *testing.T) {
	listed := map[string]any{"spec": map[string]any{"operator": map[string]any{
		"namespace": "ops", "serviceAccounts": []any{"operator", 7, "webhook"},
	}}}
	whole := map[string]any{"spec": map[string]any{"operator": map[string]any{"namespace": "open"}}}
	defaulted := map[string]any{"spec": map[string]any{"operator": map[string]any{
		"namespace": "ops", "serviceAccounts": []any{"default"},
	}}}
	tests := []struct {
		name      string
		h         map[string]any
		ns, sa    string
		wantClaim bool
	}{
		{"listed account", listed, "ops", "operator", true},
		{"second listed account", listed, "ops", "webhook", true},
		{"unlisted account", listed, "ops", "other", false},
		{"listed account elsewhere", listed, "other", "operator", false},
		{"empty account is default, not listed", listed, "ops", "", false},
		{"empty account is default, listed", defaulted, "ops", "", true},
		{"whole namespace", whole, "open", "anything", true},
		{"whole namespace, default", whole, "open", "", true},
		{"whole namespace elsewhere", whole, "ops", "anything", false},
		{"no operator", map[string]any{"spec": map[string]any{}}, "", "", false},
		{"empty namespace claims nothing", map[string]any{"spec": map[string]any{"operator": map[string]any{"namespace": ""}}}, "", "x", false},
		{"operator not an object", map[string]any{"spec": map[string]any{"operator": "ops"}}, "ops", "x", false},
		{"nil", nil, "ops", "x", false},
	}
	for _, tt := range tests {
		if got := Claims(tt.h, tt.ns, tt.sa); got != tt.wantClaim {
			t.Errorf("%s: Claims(%q, %q) = %v, want %v", tt.name, tt.ns, tt.sa, got, tt.wantClaim)
		}
	}
}
