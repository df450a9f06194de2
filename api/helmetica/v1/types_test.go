package v1_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
)

// helmetica's own samples (chrysopoeia's config/samples and mariadb sample
// manifests), in the namespace default they would be applied to. The seed's
// older sketch of a source (provides and manages as strings) does not
// decode into these types; the webhook still reads it
// (policies/dependencygroup).
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
	upstreamHarness = `
apiVersion: helmetica.io/v1
kind: OperatorHarness
metadata:
  name: mariadb-operator
spec:
  scopeToLabel: requires.helmetica.io/operator-mariadb
  operator:
    namespace: mariadb-operator
    serviceAccounts:
    - operator-mariadb-operator
    injectProxyConfiguration: true
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

func TestSamplesRoundTrip(t *testing.T) {
	for i, doc := range strings.Split(upstreamSources, "\n---\n") {
		raw := strictDecode(t, doc)
		var src helmeticav1.CustomResourceDefinitionSource
		decodeStrict(t, raw, &src)
		assertRoundTrip(t, raw, &src)
		if src.Name == "" {
			t.Errorf("source %d: no name", i)
		}
	}

	var harness helmeticav1.OperatorHarness
	rawHarness := strictDecode(t, upstreamHarness)
	decodeStrict(t, rawHarness, &harness)
	assertRoundTrip(t, rawHarness, &harness)
	if harness.Spec.ScopeToLabel != "requires.helmetica.io/operator-mariadb" || !harness.Spec.Operator.InjectProxyConfiguration {
		t.Errorf("harness sample decoded into the wrong fields: %+v", harness.Spec)
	}

	raw := strictDecode(t, seedGroup)
	var group helmeticav1.DependencyGroup
	decodeStrict(t, raw, &group)
	assertRoundTrip(t, raw, &group)
	if len(group.Spec.CRDs) != 3 || group.Spec.CRDs[2].Name != "databases.k8s.mariadb.com" ||
		group.Spec.HarnessRef.Kind != helmeticav1.HarnessKindOperatorHarness ||
		group.Status.State != helmeticav1.StateAccepted {
		t.Errorf("seed example decoded into the wrong fields: %+v", group)
	}
}

func TestStrictDecodingRejectsOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"crds as strings":            `{"spec":{"crds":["backups.k8s.mariadb.com"]}}`,
		"requires without the group": `{"spec":{"requires":[{"name":"mariadb"}]}}`,
		"the seed's provides string": `{"spec":{"provides":"mariadb"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var group helmeticav1.DependencyGroup
			var src helmeticav1.CustomResourceDefinitionSource
			strictErrs, err := kjson.UnmarshalStrict([]byte(doc), &group)
			strictErrs2, err2 := kjson.UnmarshalStrict([]byte(doc), &src)
			if (err == nil && len(strictErrs) == 0) || (err2 == nil && len(strictErrs2) == 0) {
				t.Errorf("accepted %s", doc)
			}
		})
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	var group helmeticav1.DependencyGroup
	decodeStrict(t, strictDecode(t, seedGroup), &group)
	copied := group.DeepCopy()
	if !reflect.DeepEqual(&group, copied) {
		t.Fatal("DeepCopy differs from the original")
	}
	copied.Spec.CRDs[0].Name = "other.example.com"
	copied.Spec.HarnessRef.Name = "other"
	if group.Spec.CRDs[0].Name != "backups.k8s.mariadb.com" || group.Spec.HarnessRef.Name != "mariadb-operator" {
		t.Errorf("original changed through its copy: %+v", group.Spec)
	}

	var src helmeticav1.CustomResourceDefinitionSource
	decodeStrict(t, strictDecode(t, strings.Split(upstreamSources, "\n---\n")[3]), &src)
	srcCopy := src.DeepCopyObject().(*helmeticav1.CustomResourceDefinitionSource)
	srcCopy.Spec.Requires[0].DependencyGroup.Name = "other"
	if src.Spec.Requires[0].DependencyGroup.Name != "mariadb" {
		t.Errorf("original requires changed through its copy: %+v", src.Spec.Requires)
	}
}

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := helmeticav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"DependencyGroup", "DependencyGroupList", "CustomResourceDefinitionSource", "CustomResourceDefinitionSourceList", "OperatorHarness", "OperatorHarnessList"} {
		gvk := helmeticav1.SchemeGroupVersion.WithKind(kind)
		if gvk.Group != "helmetica.io" || !scheme.Recognizes(gvk) {
			t.Errorf("scheme does not recognize %v", gvk)
		}
	}
}

func strictDecode(t *testing.T, doc string) []byte {
	t.Helper()
	raw, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// decodeStrict fails the test on unknown, duplicate or case-mismatched fields.
func decodeStrict(t *testing.T, raw []byte, into any) {
	t.Helper()
	strictErrs, err := kjson.UnmarshalStrict(raw, into)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range strictErrs {
		t.Errorf("strict decoding: %v", e)
	}
}

// assertRoundTrip checks that every field of raw survives encoding the typed
// object; zero values the types add (creationTimestamp: null, empty status)
// are pruned first.
func assertRoundTrip(t *testing.T, raw []byte, typed any) {
	t.Helper()
	reencoded, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := prunedGeneric(t, raw), prunedGeneric(t, reencoded); !reflect.DeepEqual(want, got) {
		t.Errorf("round trip changed the object:\nwant %v\ngot  %v", want, got)
	}
}

func prunedGeneric(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return prune(v)
}

func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e = prune(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = prune(e)
		}
		return out
	case string:
		// Empty strings of non-pointer structs the types add (crdNames,
		// versionDiscovery; helmetica's own types do the same).
		if v == "" {
			return nil
		}
		return v
	default:
		return v
	}
}
