package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Exception and ClusterException, gatehouse's
// own. The +groupName marker in doc.go must agree with it.
const GroupName = "gatehouse.dev"

// SchemeGroupVersion is the group and version of every type in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// The kinds of this package, as their objects' kind field spells them.
const (
	KindException        = "Exception"
	KindClusterException = "ClusterException"
)

var (
	// SchemeBuilder is apimachinery's builder, not controller-runtime's, so
	// that the API packages import nothing beyond k8s.io/api and apimachinery.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns a GroupResource of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Exception{}, &ExceptionList{},
		&ClusterException{}, &ClusterExceptionList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
