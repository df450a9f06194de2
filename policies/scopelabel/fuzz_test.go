package scopelabel

import (
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// FuzzScopeLabel feeds arbitrary YAML or JSON objects, a label key and a
// namespace value to the three entry points: for panics, idempotency of both
// mutations, and the property that a mutated object passes CheckUpdate
// against the input.
func FuzzScopeLabel(f *testing.F) {
	for _, data := range golden.ReadFixtures(f, filepath.Join("testdata", "*", "*", "*.yaml")) {
		f.Add(data, keyA, "tenant-1")
	}
	f.Add([]byte(`{"metadata":{"labels":{"a":1}}}`), "a", "")
	f.Add([]byte(`{"metadata":"x"}`), "a", "b")
	f.Add([]byte(`[1]`), "", "")

	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		// The comparisons clone through encoding/json, which rewrites
		// invalid UTF-8; the API server rejects such label keys anyway.
		if !utf8.ValidString(key) || !utf8.ValidString(value) {
			return
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return
		}
		scope := []string{key, keyA}
		ns := map[string]string{key: value}
		for _, m := range []struct {
			mutate     func(map[string]any) (bool, []policies.Finding)
			namespaced bool
		}{
			{func(o map[string]any) (bool, []policies.Finding) { return ForNamespaced(o, ns, scope) }, true},
			{func(o map[string]any) (bool, []policies.Finding) { return ForClusterScoped(o, scope), nil }, false},
		} {
			o := clone(obj)
			_, first := m.mutate(o)
			once := clone(o)
			changed, _ := m.mutate(o)
			if changed || !reflect.DeepEqual(o, once) {
				t.Fatalf("not idempotent:\n%s\n---\n%s", toYAML(once), toYAML(o))
			}
			if first != nil {
				continue
			}
			// What the create left is what an update may keep; a namespaced
			// copy is also what an update may add.
			for _, f := range CheckUpdate(o, obj, scope, ns, m.namespaced) {
				if f.Code == ScopeLabelChanged || m.namespaced {
					t.Fatalf("mutation removed or changed a scope label: %v", f)
				}
			}
		}
	})
}

// FuzzCheckUpdate feeds two arbitrary objects, a label key and a namespace
// value to CheckUpdate: for panics, determinism, findings only at the scope
// labels' paths, and no finding on an update that changes nothing.
func FuzzCheckUpdate(f *testing.F) {
	for _, data := range golden.ReadFixtures(f, filepath.Join("testdata", "*", "*", "*.yaml")) {
		f.Add(data, []byte(`{"metadata":{"labels":{"`+keyA+`":"tenant-1"}}}`), keyA, "tenant-1", true)
	}
	f.Add([]byte(`{"metadata":{"labels":{"a":"x"}}}`), []byte(`{"metadata":{"labels":{"a":1}}}`), "a", "x", true)
	f.Add([]byte(`{"metadata":{"labels":{"a":"x"}}}`), []byte(`{"metadata":null}`), "a", "", false)
	f.Add([]byte(`{"metadata":"x"}`), []byte(`{}`), "", "", true)

	f.Fuzz(func(t *testing.T, data, oldData []byte, key, value string, namespaced bool) {
		var obj, old map[string]any
		if yaml.Unmarshal(data, &obj) != nil || yaml.Unmarshal(oldData, &old) != nil {
			return
		}
		scope := []string{key, keyA}
		ns := map[string]string{key: value}
		first := CheckUpdate(obj, old, scope, ns, namespaced)
		if again := CheckUpdate(obj, old, scope, ns, namespaced); !reflect.DeepEqual(golden.Results(first), golden.Results(again)) {
			t.Fatalf("not deterministic: %v then %v", first, again)
		}
		for _, f := range first {
			if f.Field != labelPath(key).String() && f.Field != labelPath(keyA).String() {
				t.Fatalf("finding at %s, not at a scope label", f.Field)
			}
		}
		if f := CheckUpdate(old, clone(old), scope, ns, namespaced); len(f) != 0 && utf8.Valid(oldData) {
			t.Fatalf("an update that changes nothing was denied: %v", f)
		}
	})
}
