package dependencygroup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// TestPassFixturesDecodeStrictly decodes every pass fixture into its Go API
// type (api/helmetica/v1) with strict decoding: duplicate keys (YAML),
// unknown or case-mismatched fields (JSON) fail. It proves that the objects
// this policy allows have the shape of helmetica's CRDs
// (deploy/helmetica-crds). Fail fixtures may be deliberately malformed and
// are not decoded; sources in the seed's string shape, which helmetica's CRD
// does not admit but gatehouse still reads, are skipped.
func TestPassFixturesDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "pass", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no pass fixtures")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := yaml.YAMLToJSONStrict(data)
			if err != nil {
				t.Fatal(err)
			}
			var kind struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(data, &kind); err != nil {
				t.Fatal(err)
			}
			if seedShaped(data) {
				t.Skip("a source in the seed's string shape")
			}
			if errs := decodeStrict(raw, kind.Kind); len(errs) > 0 {
				t.Errorf("does not decode into %s: %v", kind.Kind, errs)
			}
		})
	}
}

// seedShaped reports whether a source states provides or manages as a
// string, the seed's sketch.
func seedShaped(data []byte) bool {
	var obj struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return false
	}
	_, provides := obj.Spec["provides"].(string)
	_, manages := obj.Spec["manages"].(string)
	return provides || manages
}

// TestStrictDecodingRejectsOtherShapes guards the test above.
func TestStrictDecodingRejectsOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"crds as names":      `{"kind":"DependencyGroup","spec":{"crds":["backups.k8s.mariadb.com"]}}`,
		"unknown field":      `{"kind":"DependencyGroup","spec":{"crds":[],"harness":{}}}`,
		"requires as string": `{"kind":"CustomResourceDefinitionSource","spec":{"requires":"mariadb"}}`,
	} {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		if errs := decodeStrict([]byte(doc), kind.Kind); len(errs) == 0 {
			t.Errorf("%s: decoded strictly", name)
		}
	}
}

func decodeStrict(raw []byte, kind string) []error {
	switch kind {
	case "DependencyGroup":
		return golden.DecodeStrict(raw, &helmeticav1.DependencyGroup{})
	case "CustomResourceDefinitionSource":
		return golden.DecodeStrict(raw, &helmeticav1.CustomResourceDefinitionSource{})
	}
	return []error{fmt.Errorf("unexpected kind %q", kind)}
}
