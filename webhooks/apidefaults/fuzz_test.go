package apidefaults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// refusalShape is every error PreAdmission gives: the kind, then a field
// path, a JSON type and a Go type, or a fixed sentence. Values never appear.
var refusalShape = regexp.MustCompile(`^not a valid \w+: (` +
	`[\w.]+ is an? \w+ where the API expects \S+` +
	`|a field does not decode into its Go type` +
	`|((unknown|duplicate) field "[^"]*"(, )?)+ \(the API server rejects this when kubectl validates strictly, its default\)` +
	`|annotation deprecated\.(daemonset\.template\.generation|deployment\.rollback\.to) must be an integer \(the API server's conversion refuses it\)` +
	`)$`)

// FuzzPreAdmission feeds objects of built-in kinds, from the corpus and
// mutated, to PreAdmission. Properties: no panic; every refusal has one of
// the shapes above; the result of an accepted object is accepted again and
// unchanged (the API server's defaulting is idempotent).
func FuzzPreAdmission(f *testing.F) {
	for _, glob := range []string{"../../policies/*/testdata/*/*.yaml", "../../deploy/examples/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			var obj map[string]any
			if yaml.Unmarshal(raw, &obj) == nil && obj != nil {
				if j, err := json.Marshal(obj); err == nil {
					f.Add(j)
				}
			}
		}
	}
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"Pod","spec":{"containers":"x"}}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1e-9"}}}],"serviceAccount":"a"}}`,
		`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"annotations":{"deprecated.daemonset.template.generation":"x"}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deprecated.deployment.rollback.to":"007"}}}`,
		`{"apiVersion":"v1","kind":"Secret","stringData":{"a":"b"},"data":{"a":"Yw=="}}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"volumes":[{"name":"v"},{"name":"i","image":{"reference":"x:latest"}}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		out, err := PreAdmission(obj)
		if err != nil {
			if !refusalShape.MatchString(err.Error()) {
				t.Fatalf("a refusal of an unexpected shape (may quote the input): %q", err)
			}
			return
		}
		again, err := PreAdmission(out)
		if err != nil {
			t.Fatalf("the defaulted object is refused: %v", err)
		}
		a, _ := json.Marshal(out)
		b, _ := json.Marshal(again)
		var x, y any
		_ = json.Unmarshal(a, &x)
		_ = json.Unmarshal(b, &y)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("not idempotent:\n%s\n%s", a, b)
		}
	})
}
