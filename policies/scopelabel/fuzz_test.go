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
		for _, m := range []func(map[string]any) (bool, []policies.Finding){
			func(o map[string]any) (bool, []policies.Finding) { return ForNamespaced(o, ns, scope) },
			func(o map[string]any) (bool, []policies.Finding) { return ForClusterScoped(o, scope), nil },
		} {
			o := clone(obj)
			_, first := m(o)
			once := clone(o)
			changed, _ := m(o)
			if changed || !reflect.DeepEqual(o, once) {
				t.Fatalf("not idempotent:\n%s\n---\n%s", toYAML(once), toYAML(o))
			}
			if first == nil {
				if f := CheckUpdate(o, obj, scope); policies.Denied(f) {
					t.Fatalf("mutation removed or changed a scope label: %v", f)
				}
			}
		}
	})
}
