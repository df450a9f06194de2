package proxy

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	harnessv1 "github.com/gatehouse-dev/gatehouse/api/harness/v1"
)

// harness builds an OperatorHarness with the typed API and decodes it as the
// webhook sees it.
func harnessObj(ns string, inject bool, sas ...string) map[string]any {
	h := harnessv1.OperatorHarness{
		ObjectMeta: metav1.ObjectMeta{Name: "h-" + ns},
		Spec: harnessv1.OperatorHarnessSpec{
			ScopeToLabel: "requires.example/op",
			Operator:     harnessv1.OperatorRef{Namespace: ns, ServiceAccounts: sas, InjectProxyConfiguration: inject},
		},
	}
	data, err := json.Marshal(h)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func TestHarnessed(t *testing.T) {
	listed := harnessObj("operators", true, "operator", "webhook")
	everyone := harnessObj("open", true)
	off := harnessObj("quiet", false)
	malformed := []map[string]any{
		nil,
		{"spec": "x"},
		{"spec": map[string]any{"operator": map[string]any{"namespace": "operators", "injectProxyConfiguration": "true"}}},
		{"spec": map[string]any{"operator": map[string]any{"namespace": "", "injectProxyConfiguration": true}}},
		{"spec": map[string]any{"operator": map[string]any{"namespace": "operators", "injectProxyConfiguration": true, "serviceAccounts": []any{1, nil}}}},
	}
	for _, tc := range []struct {
		name      string
		harnesses []map[string]any
		ns, sa    string
		want      bool
	}{
		{"listed service account", []map[string]any{listed}, "operators", "webhook", true},
		{"service account not listed", []map[string]any{listed}, "operators", "other", false},
		{"empty service account is default, not listed", []map[string]any{listed}, "operators", "", false},
		{"other namespace", []map[string]any{listed}, "elsewhere", "operator", false},
		{"empty list means every pod", []map[string]any{everyone}, "open", "anything", true},
		{"empty list and empty service account", []map[string]any{everyone}, "open", "", true},
		{"empty list, other namespace", []map[string]any{everyone}, "operators", "operator", false},
		{"injection off", []map[string]any{off}, "quiet", "default", false},
		{"default listed", []map[string]any{harnessObj("d", true, "default")}, "d", "", true},
		{"second harness matches", []map[string]any{off, listed}, "operators", "operator", true},
		{"no harness", nil, "operators", "operator", false},
		{"malformed harnesses", malformed, "operators", "operator", false},
		{"empty namespace never matches", malformed, "", "operator", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Harnessed(tc.harnesses, tc.ns, tc.sa); got != tc.want {
				t.Errorf("Harnessed(%q, %q) = %v, want %v", tc.ns, tc.sa, got, tc.want)
			}
		})
	}
}

func TestInjectedNamespaces(t *testing.T) {
	h := func(namespace string, inject any) map[string]any {
		return map[string]any{"spec": map[string]any{"operator": map[string]any{"namespace": namespace, "injectProxyConfiguration": inject}}}
	}
	got := InjectedNamespaces([]map[string]any{
		h("zeta", true), h("alpha", true), h("zeta", true), // twice: once
		h("off", false), h("string", "true"), h("", true), // not injecting, not a bool, no namespace
		{"spec": "broken"},
	})
	if want := []string{"alpha", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("InjectedNamespaces = %v, want %v", got, want)
	}
}
