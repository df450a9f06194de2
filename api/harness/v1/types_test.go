package v1_test

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	harnessv1 "github.com/gatehouse-dev/gatehouse/api/harness/v1"
)

// The vshn.net/v1 examples are decoded strictly into these types and round-tripped
// by policies/harness (types_test.go), with the policy's pass fixtures, through
// the shared helper in policies/internal/golden: the policies are where these
// objects are read, and that helper is internal to policies/.

// acknowledged is the acknowledgement example of doc.go, with a service
// account, as a Go value.
func acknowledged() *harnessv1.OperatorHarness {
	return &harnessv1.OperatorHarness{
		ObjectMeta: metav1.ObjectMeta{Name: "cert-manager"},
		Spec: harnessv1.OperatorHarnessSpec{
			ScopeToLabel: "requires.helmetica.io/cert-manager",
			Operator:     harnessv1.OperatorRef{Namespace: "cert-manager", ServiceAccounts: []string{"cert-manager"}},
			ClusterRoles: &harnessv1.RoleRules{Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
			}},
			AcknowledgedGrants: []harnessv1.AcknowledgedGrant{{
				Name: "cert-manager-reads-secrets", APIGroups: []string{""}, Resources: []string{"secrets"},
				Verbs: []string{"get", "list", "watch"}, Reason: "issues certificates into every namespace",
			}},
		},
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	original := acknowledged()
	copied := original.DeepCopy()
	if !reflect.DeepEqual(original, copied) {
		t.Fatal("DeepCopy differs from the original")
	}
	copied.Spec.ClusterRoles.Rules[0].Verbs[0] = "impersonate"
	copied.Spec.AcknowledgedGrants[0].Resources[0] = "pods"
	copied.Spec.Operator.ServiceAccounts[0] = "other"
	if got := original.Spec.ClusterRoles.Rules[0].Verbs[0]; got != "get" {
		t.Errorf("original rule verb changed to %q", got)
	}
	if got := original.Spec.AcknowledgedGrants[0].Resources[0]; got != "secrets" {
		t.Errorf("original acknowledgement resource changed to %q", got)
	}
	if got := original.Spec.Operator.ServiceAccounts[0]; got != "cert-manager" {
		t.Errorf("original service account changed to %q", got)
	}
	obj := copied.DeepCopyObject()
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
