package v1_test

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
)

// helmetica's samples are decoded strictly into these types and
// round-tripped by the policies that read them (policies/dependencygroup and
// policies/harness, types_test.go), with their pass fixtures, through the
// shared helper in policies/internal/golden, which is internal to policies/.

func TestDeepCopyIsIndependent(t *testing.T) {
	group := helmeticav1.DependencyGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "mariadb"},
		Spec: helmeticav1.DependencyGroupSpec{
			CRDs:       []helmeticav1.CRDRef{{Name: "backups.k8s.mariadb.com"}, {Name: "connections.k8s.mariadb.com"}},
			HarnessRef: &helmeticav1.HarnessRef{Kind: helmeticav1.HarnessKindOperatorHarness, Name: "mariadb-operator"},
		},
		Status: helmeticav1.DependencyGroupStatus{State: helmeticav1.StateAccepted},
	}
	copied := group.DeepCopy()
	if !reflect.DeepEqual(&group, copied) {
		t.Fatal("DeepCopy differs from the original")
	}
	copied.Spec.CRDs[0].Name = "other.example.com"
	copied.Spec.HarnessRef.Name = "other"
	if group.Spec.CRDs[0].Name != "backups.k8s.mariadb.com" || group.Spec.HarnessRef.Name != "mariadb-operator" {
		t.Errorf("original changed through its copy: %+v", group.Spec)
	}

	src := helmeticav1.CustomResourceDefinitionSource{
		ObjectMeta: metav1.ObjectMeta{Name: "v26.mariadb-cluster", Namespace: "default"},
		Spec: helmeticav1.CustomResourceDefinitionSourceSpec{
			Reference: helmeticav1.SourceReference{Kind: "OCIRepository", Name: "mariadb-cluster-v26"},
			Requires:  []helmeticav1.DependencyReference{{DependencyGroup: &helmeticav1.DependencyGroupReference{Name: "mariadb"}}},
		},
	}
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
