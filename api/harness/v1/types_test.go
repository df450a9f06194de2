package v1_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	harnessv1 "github.com/gatehouse-dev/gatehouse/api/harness/v1"
)

// The seed's examples (ADR0008), re-indented: the seed lost its indentation,
// so the nesting follows its keys and dashes. The acknowledgement example is
// this package's own design (doc.go).
const (
	seedEnforcing = `
apiVersion: vshn.net/v1
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
  admissions:
  - apiVersion: admissionregistration.k8s.io/v1
    kind: ValidatingWebhookConfiguration
    name: mariadb-operator-webhook
    labelInjectionStrategy: ApplyPatch
  roleBindings:
    roleRefs:
    - apiGroup: rbac.authorization.k8s.io
      kind: ClusterRole
      name: admin
  roles:
    rules:
    - apiGroups: ["k8s.mariadb.com"]
      resources: ["*"]
      verbs: ["*"]
    - apiGroups: [""]
      resources: ["pods", "services", "endpoints", "persistentvolumeclaims", "events", "configmaps", "secrets"]
      verbs: ["*"]
  clusterRoleBindings: []
  clusterRoles:
    rules:
    - apiGroups: ["admissionregistration.k8s.io"]
      resources: ["validatingwebhookconfigurations"]
      resourceNames: ["mariadb-operator-webhook"]
      verbs: ["get", "create", "update", "patch", "delete"]
    - apiGroups: [""]
      resources: ["pods", "services", "endpoints", "persistentvolumeclaims", "events", "configmaps", "secrets"]
      verbs: ["scopedlist"]
      resourceNames: ["requires.helmetica.io/operator-mariadb"]
`
	seedReporting = `
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata:
  name: mariadb-operator
spec:
  mode: Report
  operator:
    namespace: mariadb-operator
    serviceAccounts:
    - operator-mariadb-operator
    injectProxyConfiguration: true
`
	acknowledged = `
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata:
  name: cert-manager
spec:
  scopeToLabel: requires.helmetica.io/cert-manager
  operator:
    namespace: cert-manager
  clusterRoles:
    rules:
    - apiGroups: [""]
      resources: ["secrets"]
      verbs: ["get", "list", "watch"]
  acknowledgedGrants:
  - name: cert-manager-reads-secrets
    apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get", "list", "watch"]
    reason: issues certificates into every namespace
`
)

func TestSeedExamplesRoundTrip(t *testing.T) {
	for name, doc := range map[string]string{"enforcing": seedEnforcing, "reporting": seedReporting, "acknowledged": acknowledged} {
		t.Run(name, func(t *testing.T) {
			raw := strictDecode(t, doc)
			reencoded, err := json.Marshal(decodeHarness(t, raw))
			if err != nil {
				t.Fatal(err)
			}
			// Every field of the example survives the typed round trip; only
			// empty lists vanish (omitempty), so they are pruned first.
			if want, got := prunedGeneric(t, raw), prunedGeneric(t, reencoded); !reflect.DeepEqual(want, got) {
				t.Errorf("round trip changed the object:\nwant %v\ngot  %v", want, got)
			}
		})
	}

	h := decodeHarness(t, strictDecode(t, seedEnforcing))
	if h.Spec.Operator.Namespace != "mariadb-operator" || !h.Spec.Operator.InjectProxyConfiguration ||
		len(h.Spec.ClusterRoles.Rules) != 2 || h.Spec.ClusterRoles.Rules[1].Verbs[0] != "scopedlist" ||
		h.Spec.RoleBindings.RoleRefs[0].Name != "admin" || h.Spec.Admissions[0].Kind != "ValidatingWebhookConfiguration" {
		t.Errorf("seed example decoded into the wrong fields: %+v", h.Spec)
	}
}

func TestStrictDecodingRejectsOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"clusterRoles as a list": `{"spec":{"clusterRoles":[{"rules":[]}]}}`,
		"unknown field":          `{"spec":{"operator":{"namespace":"x","serviceAccount":"y"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var h harnessv1.OperatorHarness
			strictErrs, err := kjson.UnmarshalStrict([]byte(doc), &h)
			if err == nil && len(strictErrs) == 0 {
				t.Errorf("accepted %s", doc)
			}
		})
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	original := decodeHarness(t, strictDecode(t, acknowledged))
	copied := original.DeepCopy()
	if !reflect.DeepEqual(original, copied) {
		t.Fatal("DeepCopy differs from the original")
	}
	copied.Spec.ClusterRoles.Rules[0].Verbs[0] = "impersonate"
	copied.Spec.AcknowledgedGrants[0].Resources[0] = "pods"
	copied.Spec.Operator.ServiceAccounts = append(copied.Spec.Operator.ServiceAccounts, "other")
	if got := original.Spec.ClusterRoles.Rules[0].Verbs[0]; got != "get" {
		t.Errorf("original rule verb changed to %q", got)
	}
	if got := original.Spec.AcknowledgedGrants[0].Resources[0]; got != "secrets" {
		t.Errorf("original acknowledgement resource changed to %q", got)
	}
	if len(original.Spec.Operator.ServiceAccounts) != 0 {
		t.Errorf("original service accounts changed: %v", original.Spec.Operator.ServiceAccounts)
	}
	var obj runtime.Object = copied.DeepCopyObject()
	if _, ok := obj.(*harnessv1.OperatorHarness); !ok {
		t.Errorf("DeepCopyObject returned %T", obj)
	}
}

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := harnessv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"OperatorHarness", "OperatorHarnessList"} {
		gvk := harnessv1.SchemeGroupVersion.WithKind(kind)
		if gvk.Group != "vshn.net" || !scheme.Recognizes(gvk) {
			t.Errorf("scheme does not recognize %v", gvk)
		}
	}
}

// strictDecode converts YAML to JSON, failing on duplicate keys.
func strictDecode(t *testing.T, doc string) []byte {
	t.Helper()
	raw, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// decodeHarness decodes strictly: unknown, duplicate or case-mismatched
// fields fail the test.
func decodeHarness(t *testing.T, raw []byte) *harnessv1.OperatorHarness {
	t.Helper()
	var h harnessv1.OperatorHarness
	strictErrs, err := kjson.UnmarshalStrict(raw, &h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range strictErrs {
		t.Errorf("strict decoding: %v", e)
	}
	return &h
}

func prunedGeneric(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return prune(v)
}

// prune drops empty lists and objects, and the zero-valued fields every typed
// object carries (metadata.creationTimestamp, status).
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
	default:
		return v
	}
}
