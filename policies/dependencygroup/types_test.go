package dependencygroup

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// helmetica's own samples (chrysopoeia's config/samples and mariadb sample
// manifests), in the namespace default they would be applied to, and the
// mariadb DependencyGroup. A source in the string shape (provides and
// manages as strings) does not decode into these types; this policy still
// reads it.
const (
	upstreamSources = `
apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata:
  name: v6.podinfo
  namespace: default
spec:
  reference:
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: OCIRepository
    name: podinfo-v6
  crdNames:
    kind: PodInfo
    plural: podinfos
  versionDiscovery:
    reference:
      apiVersion: image.toolkit.fluxcd.io/v1
      kind: ImageRepository
      name: podinfo
---
apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata:
  name: v26.mariadb-crds
  namespace: default
spec:
  crdNames:
    kind: MariaDBOperatorCRD
    plural: mariadboperatorcrds
  provides:
  - dependencyGroup:
      name: mariadb
  reference:
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: OCIRepository
    name: mariadb-crds-v26
---
apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata:
  name: v26.mariadb-operator
  namespace: default
spec:
  manages:
  - dependencyGroup:
      name: mariadb
      as: mariadb-a
  reference:
    kind: OCIRepository
    name: mariadb-operator-v26
---
apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata:
  name: v26.mariadb-cluster
  namespace: default
spec:
  reference:
    kind: OCIRepository
    name: mariadb-cluster-v26
  requires:
  - dependencyGroup:
      name: mariadb
`
	seedGroup = `
apiVersion: helmetica.io/v1
kind: DependencyGroup
metadata:
  name: mariadb
spec:
  crds:
  - name: backups.k8s.mariadb.com
  - name: connections.k8s.mariadb.com
  - name: databases.k8s.mariadb.com
  harnessRef:
    kind: OperatorHarness
    name: mariadb-operator
status:
  state: Accepted
`
)

// TestSamplesRoundTrip: helmetica's samples and the mariadb group decode
// strictly into the Go API types, into the right fields, and lose nothing
// when encoded again.
func TestSamplesRoundTrip(t *testing.T) {
	for i, doc := range strings.Split(upstreamSources, "\n---\n") {
		var src helmeticav1.CustomResourceDefinitionSource
		golden.RoundTrip(t, []byte(doc), &src)
		if src.Name == "" {
			t.Errorf("source %d: no name", i)
		}
	}

	var group helmeticav1.DependencyGroup
	golden.RoundTrip(t, []byte(seedGroup), &group)
	if len(group.Spec.CRDs) != 3 || group.Spec.CRDs[2].Name != "databases.k8s.mariadb.com" ||
		group.Spec.HarnessRef.Kind != helmeticav1.HarnessKindOperatorHarness ||
		group.Status.State != helmeticav1.StateAccepted {
		t.Errorf("the mariadb group decoded into the wrong fields: %+v", group)
	}
}

// TestPassFixturesRoundTrip decodes every pass fixture into its Go API type
// (api/helmetica/v1) with strict decoding (duplicate keys, unknown or
// case-mismatched fields fail) and encodes it again, losing nothing. It
// proves that the objects this policy allows have the shape of helmetica's
// CRDs (deploy/helmetica-crds). Fail fixtures may be deliberately malformed
// and are not decoded; sources in the string shape, which helmetica's
// CRD does not admit but gatehouse still reads, are skipped.
func TestPassFixturesRoundTrip(t *testing.T) {
	golden.EachFixture(t, func(t *testing.T, data []byte) {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(data, &kind); err != nil {
			t.Fatal(err)
		}
		if seedShaped(data) {
			t.Skip("a source in the string shape")
		}
		into := typedObject(kind.Kind)
		if into == nil {
			t.Fatalf("unexpected kind %q", kind.Kind)
		}
		golden.RoundTrip(t, data, into)
	}, filepath.Join("testdata", "pass", "*.yaml"))
}

// seedShaped reports whether a source states provides or manages as a
// string, the cluster-scoped string shape.
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

// TestStrictDecodingRejectsOtherShapes guards the tests above: each document
// must decode into neither a DependencyGroup nor a source.
func TestStrictDecodingRejectsOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"crds as names":              `{"spec":{"crds":["backups.k8s.mariadb.com"]}}`,
		"unknown field":              `{"spec":{"crds":[],"harness":{}}}`,
		"requires as string":         `{"spec":{"requires":"mariadb"}}`,
		"requires without the group": `{"spec":{"requires":[{"name":"mariadb"}]}}`,
		"provides as a string":       `{"spec":{"provides":"mariadb"}}`,
	} {
		for _, kind := range []string{"DependencyGroup", "CustomResourceDefinitionSource"} {
			if errs := golden.DecodeStrict([]byte(doc), typedObject(kind)); len(errs) == 0 {
				t.Errorf("%s: decoded strictly into a %s", name, kind)
			}
		}
	}
}

// typedObject is a new Go API object of kind, or nil for another kind.
func typedObject(kind string) any {
	switch kind {
	case "DependencyGroup":
		return &helmeticav1.DependencyGroup{}
	case "CustomResourceDefinitionSource":
		return &helmeticav1.CustomResourceDefinitionSource{}
	}
	return nil
}
