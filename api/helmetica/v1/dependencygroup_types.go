package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DependencyGroupState is the reconciler's verdict on a group.
// +kubebuilder:validation:Enum=Accepted;Rejected
type DependencyGroupState string

const (
	// StateAccepted: no older group lists any of this group's CRDs.
	StateAccepted DependencyGroupState = "Accepted"
	// StateRejected: an older group lists one of this group's CRDs; a
	// condition names the clash.
	StateRejected DependencyGroupState = "Rejected"
)

// HarnessKind is the kind a harnessRef may name.
// +kubebuilder:validation:Enum=OperatorHarness
type HarnessKind string

// HarnessKindOperatorHarness names an OperatorHarness (helmetica.io/v1 or
// vshn.net/v1; the reference carries no group).
const HarnessKindOperatorHarness HarnessKind = "OperatorHarness"

// DependencyGroup claims a set of CRDs for one operator. No CRD may be
// listed by two groups.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Harness",type=string,JSONPath=`.spec.harnessRef.name`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Accepted\")].message",description=""
type DependencyGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec DependencyGroupSpec `json:"spec,omitempty"`
	// +optional
	Status DependencyGroupStatus `json:"status,omitempty"`
}

// DependencyGroupSpec lists the claimed CRDs and the operator's harness.
type DependencyGroupSpec struct {
	// CRDs claimed by this group. A name listed twice is rejected by the API
	// server (a map list keyed by name).
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	CRDs []CRDRef `json:"crds"`

	// HarnessRef names the OperatorHarness of the operator serving these
	// CRDs.
	// +optional
	HarnessRef *HarnessRef `json:"harnessRef,omitempty"`
}

// CRDRef names one CustomResourceDefinition.
type CRDRef struct {
	// Name of the CRD, <plural>.<group>. The schema asks only for a
	// non-empty string, as helmetica's does; gatehouse's webhook checks the
	// form.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// HarnessRef names an OperatorHarness (cluster-scoped).
type HarnessRef struct {
	// Kind is OperatorHarness.
	// +required
	Kind HarnessKind `json:"kind"`
	// Name of the OperatorHarness.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// DependencyGroupStatus is written by the reconciler.
type DependencyGroupStatus struct {
	// State is Accepted or Rejected.
	// +optional
	State DependencyGroupState `json:"state,omitempty"`
	// Conditions; the Accepted condition's observedGeneration is the
	// generation State describes, and a Rejected group's names the clash.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DependencyGroupList is a list of DependencyGroup.
//
// +kubebuilder:object:root=true
type DependencyGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DependencyGroup `json:"items"`
}
