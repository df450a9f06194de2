package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorHarness (helmetica.io/v1) is helmetica's harness of an operator:
// the scope label that limits its cluster-wide reads, and where its pods
// run. It has only scopeToLabel and operator; gatehouse treats it as a
// vshn.net/v1 OperatorHarness in Enforce mode (docs/harness-proxy-and-labels.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.operator.namespace`
// +kubebuilder:printcolumn:name="ScopeToLabel",type=string,JSONPath=`.spec.scopeToLabel`
// +kubebuilder:printcolumn:name="ProxyInjection",type=boolean,JSONPath=`.spec.operator.injectProxyConfiguration`
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message",description=""
type OperatorHarness struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OperatorHarnessSpec   `json:"spec,omitempty"`
	Status OperatorHarnessStatus `json:"status,omitempty"`
}

// OperatorHarnessSpec is the harness's scope label and operator.
type OperatorHarnessSpec struct {
	// ScopeToLabel is the label a resource carries for the harnessed
	// operator to see it on cluster-wide reads through the harness proxy.
	// +kubebuilder:validation:MinLength=1
	// +required
	ScopeToLabel string `json:"scopeToLabel"`

	// Operator is where the harnessed operator runs.
	// +required
	Operator OperatorHarnessOperator `json:"operator"`
}

// OperatorHarnessOperator is where the harnessed operator runs and whether
// its pods are pointed at the harness proxy.
type OperatorHarnessOperator struct {
	// Namespace the operator runs in.
	// +kubebuilder:validation:MinLength=1
	// +required
	Namespace string `json:"namespace"`

	// ServiceAccounts of the operator's pods; empty means every pod in
	// Namespace.
	// +optional
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`

	// InjectProxyConfiguration points the operator's pods at the harness
	// proxy.
	// +optional
	InjectProxyConfiguration bool `json:"injectProxyConfiguration,omitempty"`
}

// OperatorHarnessStatus is written by helmetica.
type OperatorHarnessStatus struct {
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorHarnessList is a list of OperatorHarness.
//
// +kubebuilder:object:root=true
type OperatorHarnessList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorHarness `json:"items"`
}
