package proxy

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

type namespaces struct {
	labels map[string]map[string]string
	err    error
}

func (n namespaces) NamespaceLabels(ns string) (map[string]string, error) { return n.labels[ns], n.err }

func TestFailOpenWarning(t *testing.T) {
	const label = "gatehouse.dev/harnessed"
	known := namespaces{labels: map[string]map[string]string{
		"guarded":   {label: ""},
		"unguarded": {"team": "a"},
	}}
	warn := []golden.Result{{Severity: policies.Warn, Code: ProxyNamespaceFailsOpen, Field: "spec.operator.namespace"}}
	for _, tc := range []struct {
		name string
		h    map[string]any
		ns   Namespaces
		want []golden.Result
	}{
		{"labelled namespace", harnessObj("guarded", true), known, nil},
		{"unlabelled namespace", harnessObj("unguarded", true), known, warn},
		{"namespace not created yet", harnessObj("later", true), known, warn},
		{"no injection", harnessObj("unguarded", false), known, nil},
		{"namespaces cannot answer", harnessObj("unguarded", true), namespaces{err: errors.New("not synced")}, nil},
		{"no operator namespace", map[string]any{"spec": map[string]any{"operator": map[string]any{"injectProxyConfiguration": true}}}, known, nil},
	} {
		if got := golden.Results(FailOpenWarning(tc.h, tc.ns, label)); !reflect.DeepEqual(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
