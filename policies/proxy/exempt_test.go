package proxy

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

type exemptions struct {
	exempt map[string]string // namespace -> why
	err    error
}

func (e exemptions) NamespaceExempt(ns string) (bool, string, error) {
	why, ok := e.exempt[ns]
	return ok, why, e.err
}

func TestExemptNamespace(t *testing.T) {
	known := exemptions{exempt: map[string]string{"kube-system": "by name", "infra": "by the label tier"}}
	deny := []golden.Result{golden.Deny(ProxyNamespaceExempt, "spec.operator.namespace")}
	for _, tc := range []struct {
		name string
		h    map[string]any
		ex   Exemptions
		want []golden.Result
	}{
		{"exempt by name", harnessObj("kube-system", true), known, deny},
		{"exempt by label", harnessObj("infra", true), known, deny},
		{"not exempt", harnessObj("operators", true), known, nil},
		{"exempt, no injection", harnessObj("kube-system", false), known, nil},
		{"no operator namespace", map[string]any{"spec": map[string]any{"operator": map[string]any{"injectProxyConfiguration": true}}}, known, nil},
		{"exemptions cannot answer", harnessObj("operators", true), exemptions{err: errors.New("not synced")},
			[]golden.Result{golden.Deny(policies.StateUnavailable, "spec.operator.namespace")}},
	} {
		if got := golden.Results(ExemptNamespace(tc.h, tc.ex)); !reflect.DeepEqual(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// The denial ratchets on the namespace, the view's failure never.
	if f := ExemptNamespace(harnessObj("kube-system", true), known); len(f) != 1 || !f[0].Ratchets() ||
		f[0].Evidence != policies.Fingerprint("kube-system") {
		t.Errorf("the denial's evidence is not the namespace: %+v", f)
	}
	if f := ExemptNamespace(harnessObj("operators", true), exemptions{err: errors.New("x")}); len(f) != 1 || f[0].Ratchets() {
		t.Errorf("StateUnavailable must never ratchet: %+v", f)
	}
}
