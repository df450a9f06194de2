package scopelabel

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func TestForNamespaced(t *testing.T) {
	path := `metadata.labels[` + keyA + `]`
	for _, tc := range []struct {
		name     string
		obj      map[string]any
		ns       map[string]string
		scope    []string
		changed  bool
		want     []golden.Result
		wantKeys map[string]any // labels after the call; nil: unchanged object
	}{
		{"copies the namespace value", configMap(), nsLabels, scopeLabels, true, nil,
			map[string]any{"app": "db", keyA: "tenant-1"}},
		{"namespace without the label", configMap(), map[string]string{"other": "x"}, scopeLabels, false, nil, nil},
		{"no scope labels", configMap(), nsLabels, nil, false, nil, nil},
		{"empty namespace value is copied", configMap(), map[string]string{keyA: ""}, []string{keyA}, true, nil,
			map[string]any{"app": "db", keyA: ""}},
		{"two keys", configMap(), map[string]string{keyA: "a", keyB: "b"}, scopeLabels, true, nil,
			map[string]any{"app": "db", keyA: "a", keyB: "b"}},
		{"same value", withLabel(configMap(), keyA, "tenant-1"), nsLabels, scopeLabels, false, nil, nil},
		{"other value", withLabel(configMap(), keyA, "tenant-2"), nsLabels, scopeLabels, false,
			[]golden.Result{golden.Deny(ScopeLabelMismatch, path)}, nil},
		{"no metadata", map[string]any{"kind": "ConfigMap"}, nsLabels, scopeLabels, true, nil,
			map[string]any{keyA: "tenant-1"}},
		{"null labels", map[string]any{"metadata": map[string]any{"labels": nil}}, nsLabels, scopeLabels, true, nil,
			map[string]any{keyA: "tenant-1"}},
		{"labels not an object", map[string]any{"metadata": map[string]any{"labels": "x"}}, nsLabels, scopeLabels, false, nil, nil},
		{"metadata not an object", map[string]any{"metadata": "x"}, nsLabels, scopeLabels, false, nil, nil},
		{"non-string label value replaced", withLabel(configMap(), keyA, 5), nsLabels, scopeLabels, true, nil,
			map[string]any{"app": "db", keyA: "tenant-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := clone(tc.obj)
			changed, findings := ForNamespaced(tc.obj, tc.ns, tc.scope)
			if changed != tc.changed || !reflect.DeepEqual(golden.Results(findings), tc.want) {
				t.Errorf("ForNamespaced = %v, %v; want %v, %v", changed, golden.Results(findings), tc.changed, tc.want)
			}
			if tc.wantKeys == nil {
				if !reflect.DeepEqual(tc.obj, before) {
					t.Errorf("object changed:\n%s", toYAML(tc.obj))
				}
			} else if got := tc.obj["metadata"].(map[string]any)["labels"]; !reflect.DeepEqual(got, tc.wantKeys) {
				t.Errorf("labels = %v, want %v", got, tc.wantKeys)
			}
		})
	}
	if changed, findings := ForNamespaced(nil, nsLabels, scopeLabels); changed || findings != nil {
		t.Error("nil object")
	}
}

func withLabel(obj map[string]any, key string, value any) map[string]any {
	labels(obj)[key] = value
	return obj
}

func TestForClusterScoped(t *testing.T) {
	obj := clusterRole()
	if !ForClusterScoped(obj, scopeLabels) {
		t.Fatal("no change")
	}
	want := map[string]any{keyA: ClusterScopedValue, keyB: ClusterScopedValue}
	if got := labels(obj); !reflect.DeepEqual(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}

	custom := withLabel(clusterRole(), keyA, "custom")
	if !ForClusterScoped(custom, []string{keyA, keyB}) {
		t.Error("keyB not added")
	}
	if got := labels(custom)[keyA]; got != "custom" {
		t.Errorf("existing value replaced by %v", got)
	}
	for _, o := range []map[string]any{nil, {"metadata": "x"}, {"metadata": map[string]any{"labels": []any{}}}} {
		before := clone(o)
		if ForClusterScoped(o, scopeLabels) || !reflect.DeepEqual(o, before) {
			t.Errorf("malformed object %v changed", before)
		}
	}
	if ForClusterScoped(clusterRole(), nil) {
		t.Error("changed without scope labels")
	}
}

func TestCheckUpdate(t *testing.T) {
	path := `metadata.labels[` + keyA + `]`
	pathB := `metadata.labels[` + keyB + `]`
	old := withLabel(configMap(), keyA, "tenant-1")
	for _, tc := range []struct {
		name       string
		obj, old   map[string]any
		nsLabels   map[string]string
		namespaced bool
		want       []golden.Result
	}{
		{"kept", withLabel(configMap(), keyA, "tenant-1"), old, nsLabels, true, nil},
		{"removed", configMap(), old, nsLabels, true, []golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"labels removed", map[string]any{"metadata": map[string]any{}}, old, nsLabels, true, []golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"changed", withLabel(configMap(), keyA, "tenant-2"), old, nsLabels, true, []golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"changed to the namespace's value", withLabel(configMap(), keyA, "tenant-1"), withLabel(configMap(), keyA, "tenant-0"), nsLabels, true,
			[]golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"changed to non-string", withLabel(configMap(), keyA, true), old, nsLabels, true, []golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"added with the namespace's value", withLabel(configMap(), keyA, "tenant-1"), configMap(), nsLabels, true, nil},
		{"added with another namespace's value", withLabel(configMap(), keyA, "tenant-2"), configMap(), nsLabels, true,
			[]golden.Result{golden.Deny(ScopeLabelAdded, path)}},
		{"added in a namespace without it", withLabel(configMap(), keyB, "x"), configMap(), nsLabels, true,
			[]golden.Result{golden.Deny(ScopeLabelAdded, pathB)}},
		{"added in a namespace without labels", withLabel(configMap(), keyA, "tenant-1"), configMap(), nil, true,
			[]golden.Result{golden.Deny(ScopeLabelAdded, path)}},
		{"added with an empty value the namespace has", withLabel(configMap(), keyA, ""), configMap(), map[string]string{keyA: ""}, true, nil},
		{"added to a cluster-scoped object", withLabel(clusterRole(), keyA, ClusterScopedValue), clusterRole(), nil, false,
			[]golden.Result{golden.Deny(ScopeLabelAdded, path)}},
		{"added as a non-string", withLabel(configMap(), keyA, 1), configMap(), nsLabels, true, nil},
		{"never had it", configMap(), configMap(), nsLabels, true, nil},
		{"other labels changed", withLabel(withLabel(configMap(), keyA, "tenant-1"), "app", "other"), old, nsLabels, true, nil},
		{"kept while the namespace's value moved on", withLabel(configMap(), keyA, "tenant-0"), withLabel(configMap(), keyA, "tenant-0"), nsLabels, true, nil},
		{"removed one, added another", withLabel(configMap(), keyB, "x"), old, map[string]string{keyB: "x"}, true,
			[]golden.Result{golden.Deny(ScopeLabelChanged, path)}},
		{"no old object", configMap(), nil, nsLabels, true, nil},
		{"nil object", nil, old, nsLabels, true, []golden.Result{golden.Deny(ScopeLabelChanged, path)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := golden.Results(CheckUpdate(tc.obj, tc.old, scopeLabels, tc.nsLabels, tc.namespaced))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CheckUpdate = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMessagesCarryNoValues plants label values and checks no finding echoes them.
func TestMessagesCarryNoValues(t *testing.T) {
	const marker = "s3cr3t-marker"
	obj := withLabel(configMap(), keyA, marker)
	_, findings := ForNamespaced(obj, map[string]string{keyA: marker + "-ns"}, scopeLabels)
	findings = append(findings, CheckUpdate(withLabel(configMap(), keyA, marker+"-new"), obj, scopeLabels, nil, true)...)
	findings = append(findings, CheckUpdate(withLabel(configMap(), keyA, marker+"-added"), configMap(), scopeLabels,
		map[string]string{keyA: marker + "-ns"}, true)...)
	findings = append(findings, CheckUpdate(withLabel(clusterRole(), keyA, marker+"-cluster"), clusterRole(), scopeLabels, nil, false)...)
	if len(findings) != 4 {
		t.Fatalf("findings = %v", findings)
	}
	for _, f := range findings {
		if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
			t.Errorf("finding leaks a value: %+v", f)
		}
	}
}
