package harness

import (
	"path/filepath"
	"testing"

	harnessv1 "github.com/gatehouse-dev/gatehouse/api/harness/v1"
	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// The vshn.net/v1 examples, in the shapes api/harness/v1/doc.go describes
// (an enforcing and a reporting harness). The acknowledgement example is
// the API's own design (api/harness/v1/doc.go). upstreamHarness is
// helmetica's own sample of its OperatorHarness (helmetica.io/v1).
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
)

// TestSamplesRoundTrip: the vshn.net/v1 examples and helmetica's sample decode
// strictly into the Go API types, into the right fields, and lose nothing
// when encoded again.
func TestSamplesRoundTrip(t *testing.T) {
	for name, doc := range map[string]string{"enforcing": seedEnforcing, "reporting": seedReporting, "acknowledged": acknowledged} {
		t.Run(name, func(t *testing.T) {
			golden.RoundTrip(t, []byte(doc), &harnessv1.OperatorHarness{})
		})
	}

	var h harnessv1.OperatorHarness
	golden.RoundTrip(t, []byte(seedEnforcing), &h)
	if h.Spec.Operator.Namespace != "mariadb-operator" || !h.Spec.Operator.InjectProxyConfiguration ||
		len(h.Spec.ClusterRoles.Rules) != 2 || h.Spec.ClusterRoles.Rules[1].Verbs[0] != "scopedlist" ||
		h.Spec.RoleBindings.RoleRefs[0].Name != "admin" || h.Spec.Admissions[0].Kind != "ValidatingWebhookConfiguration" {
		t.Errorf("seed example decoded into the wrong fields: %+v", h.Spec)
	}

	var upstream helmeticav1.OperatorHarness
	golden.RoundTrip(t, []byte(upstreamHarness), &upstream)
	if upstream.Spec.ScopeToLabel != "requires.helmetica.io/operator-mariadb" || !upstream.Spec.Operator.InjectProxyConfiguration {
		t.Errorf("helmetica's sample decoded into the wrong fields: %+v", upstream.Spec)
	}
}

// TestPassFixturesRoundTrip decodes every pass fixture into
// harnessv1.OperatorHarness with strict decoding (duplicate keys, unknown or
// case-mismatched fields and wrong types fail) and encodes it again, losing
// nothing. It proves that the objects this policy allows have the shape of
// the CRD gatehouse ships (spec.clusterRoles an object holding rules,
// acknowledgedGrants entries {name, apiGroups, resources, verbs, reason}).
// Fail fixtures may be deliberately malformed (cluster-roles-list,
// cluster-roles-malformed) and are not decoded.
func TestPassFixturesRoundTrip(t *testing.T) {
	golden.EachFixture(t, func(t *testing.T, data []byte) {
		golden.RoundTrip(t, data, &harnessv1.OperatorHarness{})
	}, filepath.Join("testdata", "pass", "*.yaml"))
}

// TestStrictDecodingRejectsOtherShapes guards the tests above: the shape this
// policy was first written for, and other near misses, must not decode.
func TestStrictDecodingRejectsOtherShapes(t *testing.T) {
	for name, doc := range map[string]string{
		"clusterRoles as a list of named roles": "spec:\n  clusterRoles:\n  - name: x\n    rules: []\n",
		"clusterRoles as a list":                `{"spec":{"clusterRoles":[{"rules":[]}]}}`,
		"acknowledgement by role and rule":      "spec:\n  acknowledgedGrants:\n  - clusterRole: x\n    rule: 2\n    reason: long enough reason\n",
		"injectProxyConfiguration under spec":   "spec:\n  injectProxyConfiguration: true\n",
		"unknown field":                         `{"spec":{"operator":{"namespace":"x","serviceAccount":"y"}}}`,
		"duplicate key":                         "spec:\n  mode: Report\n  mode: Enforce\n",
	} {
		if errs := golden.DecodeStrict([]byte(doc), &harnessv1.OperatorHarness{}); len(errs) == 0 {
			t.Errorf("%s: decoded strictly", name)
		}
	}
}
