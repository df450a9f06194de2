package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomResourceDefinitionSource is a chart source: the chart that
// spec.reference points to becomes a CRD of its own, and the source says
// which dependency groups that chart provides (ships the CRDs of), manages
// (runs the operator for) or requires (consumes). This is the shape of
// helmetica's public implementation (chrysopoeia): namespaced, with lists of
// dependency references. gatehouse also reads an older shape, where provides
// and manages are strings; see docs/harness-dependencies.md.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SourceRef",type=string,JSONPath=`.spec.reference.name`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message",description=""
type CustomResourceDefinitionSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CustomResourceDefinitionSourceSpec   `json:"spec,omitempty"`
	Status CustomResourceDefinitionSourceStatus `json:"status,omitempty"`
}

// CustomResourceDefinitionSourceSpec is what a source declares.
type CustomResourceDefinitionSourceSpec struct {
	// Reference is the Flux source of the chart.
	Reference SourceReference `json:"reference"`

	// CRDNames are the names of the CRD generated for the chart.
	// +optional
	CRDNames apiextensionsv1.CustomResourceDefinitionNames `json:"crdNames,omitempty"`

	// VersionDiscovery says where the chart's versions are discovered.
	// +optional
	VersionDiscovery VersionDiscovery `json:"versionDiscovery,omitempty"`

	// Provides lists the groups whose CRDs the chart ships. One source
	// provides a group, cluster-wide; an alias means nothing here.
	// +kubebuilder:validation:XValidation:rule="self.all(x, !has(x.dependencyGroup.as))",message="as must not be set on provides, the CRDs of a group are the same for every consumer"
	// +optional
	Provides []DependencyReference `json:"provides,omitempty"`

	// Manages names the group whose operator the chart deploys, scoped by
	// the label requires.helmetica.io/<alias or name>. One source manages a
	// scope, cluster-wide.
	// +kubebuilder:validation:MaxItems=1
	// +optional
	Manages []DependencyReference `json:"manages,omitempty"`

	// Requires lists the groups that instances of the chart consume.
	// +optional
	Requires []DependencyReference `json:"requires,omitempty"`
}

// DependencyReference references a dependency; dependencyGroup is the one
// referent there is.
// +kubebuilder:validation:XValidation:rule="has(self.dependencyGroup)",message="dependencyGroup must be set"
type DependencyReference struct {
	// DependencyGroup references a DependencyGroup.
	// +optional
	DependencyGroup *DependencyGroupReference `json:"dependencyGroup,omitempty"`
}

// DependencyGroupReference names a DependencyGroup and the scope it is used
// under. The group may not exist yet (GitOps applies in any order); gatehouse
// warns.
type DependencyGroupReference struct {
	// Name of the DependencyGroup.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// As names the scope instead of the group: the scope label is
	// requires.helmetica.io/<as>. A managing source and its consumers set
	// the same alias.
	// +optional
	As string `json:"as,omitempty"`
}

// SourceReference names the Flux OCIRepository holding the chart.
type SourceReference struct {
	// APIVersion of the referent.
	// +kubebuilder:validation:Enum=source.toolkit.fluxcd.io/v1
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the referent.
	// +kubebuilder:validation:Enum=OCIRepository
	// +required
	Kind string `json:"kind"`

	// Name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// VersionDiscovery says where the versions of the chart are discovered.
type VersionDiscovery struct {
	// Reference is the Flux ImageRepository listing the versions.
	Reference DiscoveryReference `json:"reference"`
}

// DiscoveryReference names a Flux ImageRepository.
type DiscoveryReference struct {
	// APIVersion of the referent.
	// +kubebuilder:validation:Enum=image.toolkit.fluxcd.io/v1
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the referent.
	// +kubebuilder:validation:Enum=ImageRepository
	// +required
	Kind string `json:"kind"`

	// Name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// CustomResourceDefinitionSourceStatus is written by helmetica.
type CustomResourceDefinitionSourceStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AppliedReferenceGeneration is the last applied generation of the
	// referenced source.
	// +optional
	AppliedReferenceGeneration int64 `json:"appliedReferenceGeneration,omitempty"`
	// AppliedReferenceRevision is the last applied revision of the
	// referenced source.
	// +optional
	AppliedReferenceRevision string `json:"appliedReferenceRevision,omitempty"`
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
