package proxy

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// fakeState holds harnesses by operator namespace.
type fakeState struct {
	byNamespace map[string][]map[string]any
	err         error
}

func (s fakeState) HarnessesIn(namespace string) ([]map[string]any, error) {
	return s.byNamespace[namespace], s.err
}

func TestAdmit(t *testing.T) {
	state := fakeState{byNamespace: map[string][]map[string]any{
		"operators": {harnessObj("operators", true, "operator")},
		"open":      {harnessObj("open", true)},
		"quiet":     {harnessObj("quiet", false)},
	}}
	inNamespace := func(ns, account string) map[string]any {
		pod := admittedPod()
		pod["metadata"].(map[string]any)["namespace"] = ns
		spec(pod)["serviceAccountName"] = account
		return pod
	}
	injected := func(pod map[string]any) map[string]any {
		if _, findings := Inject(pod, BuiltinConfig()); len(findings) > 0 {
			t.Fatalf("Inject denied the test pod: %v", findings)
		}
		return pod
	}
	for _, tc := range []struct {
		name        string
		namespace   string
		pod         map[string]any
		wantChanged bool
	}{
		{"listed account, two containers and an init container", "operators", inNamespace("operators", "operator"), true},
		{"account not listed stays untouched", "operators", inNamespace("operators", "reporter"), false},
		{"namespace-wide harness", "open", inNamespace("open", "anything"), true},
		{"namespace-wide harness, no serviceAccountName", "open", func() map[string]any {
			p := inNamespace("open", "")
			delete(spec(p), "serviceAccountName")
			return p
		}(), true},
		{"injection off", "quiet", inNamespace("quiet", "operator"), false},
		{"no harness in namespace", "apps", inNamespace("apps", "operator"), false},
		{"already injected", "operators", injected(inNamespace("operators", "operator")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := clone(tc.pod)
			if tc.wantChanged {
				Inject(want, BuiltinConfig())
			}
			changed, findings := Admit(tc.pod, tc.namespace, state, BuiltinConfig())
			if changed != tc.wantChanged || len(findings) != 0 {
				t.Errorf("Admit() = %v, %v; want %v, no findings", changed, findings, tc.wantChanged)
			}
			if !jsonEqual(tc.pod, want) {
				t.Errorf("Admit() made\n%s\nwant\n%s", toYAML(tc.pod), toYAML(want))
			}
		})
	}
}

func TestAdmitStateUnavailableDenies(t *testing.T) {
	pod := admittedPod()
	before := clone(pod)
	changed, findings := Admit(pod, "operators", fakeState{err: errors.New("not synced")}, BuiltinConfig())
	want := []golden.Result{{Code: policies.StateUnavailable, Field: "spec.serviceAccountName", Severity: policies.Deny}}
	if changed || !reflect.DeepEqual(golden.Results(findings), want) {
		t.Errorf("Admit() = %v, %v; want no change and %v", changed, golden.Results(findings), want)
	}
	if !jsonEqual(pod, before) {
		t.Error("Admit() changed a pod it denied")
	}
}
