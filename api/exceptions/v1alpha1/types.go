package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Wildcard, as the only entry of spec.webhooks or spec.codes, stands for
// every webhook or every content code.
const Wildcard = "*"

// Exception excuses findings about objects of its own namespace. gatehouse
// honours it only where the server configuration lets namespaces hold their
// own (exceptions.namespaced); whatever its spec.match says, it never reaches
// an object outside its namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=gex
// +kubebuilder:printcolumn:name="Expires",type=string,format=date-time,JSONPath=`.spec.expires`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Exception struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ExceptionSpec `json:"spec"`
}

// ExceptionList is a list of Exceptions.
//
// +kubebuilder:object:root=true
type ExceptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Exception `json:"items"`
}

// ClusterException excuses findings about objects of any namespace, and
// about cluster-scoped objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=gcex
// +kubebuilder:printcolumn:name="Expires",type=string,format=date-time,JSONPath=`.spec.expires`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterException struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ExceptionSpec `json:"spec"`
}

// ClusterExceptionList is a list of ClusterExceptions.
//
// +kubebuilder:object:root=true
type ClusterExceptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterException `json:"items"`
}

// ExceptionSpec says what an exception excuses: a finding is excused when
// the object it is about matches one entry of Match, the webhook that
// reported it is one of Webhooks and its code one of Codes, and Expires has
// not passed. Findings about the review or the view (StateUnavailable, a
// limit, a parse failure) are never excused (policies/exception).
type ExceptionSpec struct {
	// Match selects the objects excused: an object matches when it matches
	// any one entry.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Match []ObjectSelector `json:"match"`

	// Webhooks are the webhooks whose findings are excused, by their
	// registry name (secret-scope, pod-security, ...), or "*" alone for
	// every webhook. "*" together with codes "*" is accepted only when every
	// match entry names its objects (names): an exception to everything
	// gatehouse checks is a break-glass for named objects, and anything
	// wider is an exemption, which is configuration.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Webhooks []string `json:"webhooks"`

	// Codes are the finding codes excused (ScopeNameHasDelimiter, ...), or
	// "*" alone for every content code. A code about the review or the view
	// is never excused, whatever this list says.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Codes []string `json:"codes"`

	// Reason says why the exception exists (a ticket, an owner, the plan
	// to fix). It is required and never echoed in warnings or reports,
	// which name the exception instead.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`

	// Expires is when the exception stops excusing; from then on it is
	// reported as expired. It must lie within the server configuration's
	// exceptions.maxDuration of the time the exception is created or
	// updated.
	// +required
	// +kubebuilder:validation:Format=date-time
	Expires metav1.Time `json:"expires"`
}

// ObjectSelector selects objects by namespace, kind, name and labels; a
// field left out selects every value of it, and an object must match every
// field given.
type ObjectSelector struct {
	// Namespaces the objects are in. Left out: every namespace of a
	// ClusterException (and cluster-scoped objects), the Exception's own
	// namespace for an Exception, which may name no other.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`

	// Kinds of the objects, by API group and kind.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Kinds []GroupKind `json:"kinds,omitempty"`

	// Names of the objects, matched exactly. An object created with
	// generateName has no name at admission and matches no names.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names,omitempty"`

	// LabelSelector on the objects' own labels (on UPDATE, the labels the
	// object is updated to).
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// GroupKind is a kind of object, by API group ("" or left out for the core
// group) and kind.
type GroupKind struct {
	// Group is the API group; left out for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`
	// Kind, as an object's kind field spells it (Pod, Deployment).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
}
