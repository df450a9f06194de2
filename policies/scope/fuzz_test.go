package scope

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// fuzzKinds are the kinds FuzzValidate evaluates every input as: each shape
// Validate reads, and a product custom resource.
var fuzzKinds = []schema.GroupKind{gkPod, gkPVC, gkStatefulSet, gkCronJob, gkHdfsCluster}

// FuzzValidate feeds random objects to Validate for panics and stack
// overflows, and random CredentialsScope names to the splice property (see
// checkNameProperty).
func FuzzValidate(f *testing.F) {
	for _, dir := range []string{"testdata/pass", "testdata/fail"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, "mysvc,node")
		}
	}
	f.Add([]byte(`{"spec":{"secretClass":"x","scope":{"services":["a,b",1,null,""],"listenerVolumes":"x"}}}`), "web")
	f.Add([]byte(`{"spec":{"volumes":[{"ephemeral":{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/scope":","}}}}}]}}`), "a=b")
	f.Add([]byte(`[1,2]`), "")
	f.Add([]byte(`{"a":[[[[{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/x":1}}}}]]]]}`), ",")
	f.Add([]byte(`not yaml: [`), "=,=")

	f.Fuzz(func(t *testing.T, data []byte, name string) {
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err == nil {
			for _, gk := range fuzzKinds {
				findings := Validate(gk, obj)
				sorted := slices.Clone(findings)
				policies.Sort(sorted)
				if !slices.Equal(findings, sorted) {
					t.Fatalf("%s: findings are not sorted", gk)
				}
			}
		}
		checkNameProperty(t, name)
	})
}
