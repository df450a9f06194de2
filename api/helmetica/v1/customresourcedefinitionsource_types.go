package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomResourceDefinitionSource says which dependency group a chart
// provides (ships the CRDs of), manages (runs the operator for) or requires
// (consumes). Each name implies the scope label requires.helmetica.io/<name>,
// so names follow the label-key name grammar: at most 63 characters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Provides",type=string,JSONPath=`.spec.provides`
// +kubebuilder:printcolumn:name="Manages",type=string,JSONPath=`.spec.manages`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CustomResourceDefinitionSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec CustomResourceDefinitionSourceSpec `json:"spec,omitempty"`
}

// CustomResourceDefinitionSourceSpec is what the source declares; every
// field is optional, as in the seed's examples.
type CustomResourceDefinitionSourceSpec struct {
	// Provides names the dependency group whose CRDs this source ships.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Provides string `json:"provides,omitempty"`

	// Manages is "<group>" or "<group> as <alias>": the dependency group
	// whose operator this source runs, scoped by the label
	// requires.helmetica.io/<alias or group>.
	// +optional
	// +kubebuilder:validation:MaxLength=130
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?( as [a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?)?$`
	Manages string `json:"manages,omitempty"`

	// Requires lists the dependency groups this source consumes.
	// +optional
	// +listType=atomic
	Requires []Requirement `json:"requires,omitempty"`
}

// Requirement is one required dependency.
type Requirement struct {
	// DependencyGroup names the required group.
	// +required
	DependencyGroup DependencyGroupRef `json:"dependencyGroup"`
}

// DependencyGroupRef names a DependencyGroup. It may not exist yet (GitOps
// applies in any order); gatehouse warns.
type DependencyGroupRef struct {
	// Name of the DependencyGroup.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// CustomResourceDefinitionSourceList is a list of
// CustomResourceDefinitionSource.
//
// +kubebuilder:object:root=true
type CustomResourceDefinitionSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CustomResourceDefinitionSource `json:"items"`
}
