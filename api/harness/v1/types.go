package v1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HarnessMode says whether a harness enforces or only reports.
// +kubebuilder:validation:Enum=Enforce;Report
type HarnessMode string

const (
	// ModeEnforce enforces the harness: scope labels are injected, dangerous
	// grants without an acknowledgement are denied.
	ModeEnforce HarnessMode = "Enforce"
	// ModeReport only discovers: the harness proxy reports what the operator
	// does, and gatehouse turns its harness denials into warnings.
	ModeReport HarnessMode = "Report"
)

// AdmissionKind is a kind of admission object whose namespace selector the
// harness scopes to its label (admission injection).
// +kubebuilder:validation:Enum=ValidatingWebhookConfiguration;MutatingWebhookConfiguration;ValidatingAdmissionPolicy;ValidatingAdmissionPolicyBinding;MutatingAdmissionPolicy;MutatingAdmissionPolicyBinding
type AdmissionKind string

// LabelInjectionStrategy says how the namespace selector is injected.
// Only ApplyPatch (server-side apply) is defined; proxy-side injection, should
// it come, would be a new enum value.
// +kubebuilder:validation:Enum=ApplyPatch
type LabelInjectionStrategy string

// LabelInjectionApplyPatch injects the selector with server-side apply.
const LabelInjectionApplyPatch LabelInjectionStrategy = "ApplyPatch"

// OperatorHarness confines one operator: what it may do, cluster-wide and in
// the namespaces carrying its scope label, and whether its API traffic goes
// through the harness proxy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Scope Label",type=string,JSONPath=`.spec.scopeToLabel`
// +kubebuilder:printcolumn:name="Operator Namespace",type=string,JSONPath=`.spec.operator.namespace`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OperatorHarness struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OperatorHarnessSpec `json:"spec"`
	// +optional
	Status OperatorHarnessStatus `json:"status,omitempty"`
}

// OperatorHarnessSpec is the desired confinement.
//
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Report') || has(self.scopeToLabel)",message="scopeToLabel is required in Enforce mode"
type OperatorHarnessSpec struct {
	// ScopeToLabel is the label key a resource must carry for the harnessed
	// operator to manage it; cluster-wide lists and watches are narrowed to
	// it. Required in Enforce mode.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	ScopeToLabel string `json:"scopeToLabel,omitempty"`

	// Operator is the namespace and service accounts the operator runs as.
	// +required
	Operator OperatorRef `json:"operator"`

	// Mode is Enforce (the default) or Report.
	// +optional
	// +kubebuilder:default=Enforce
	Mode HarnessMode `json:"mode,omitempty"`

	// Admissions are the operator's admission webhooks and policies whose
	// namespace selector the harness scopes to ScopeToLabel.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	Admissions []AdmissionRef `json:"admissions,omitempty"`

	// Roles are granted in every namespace that carries ScopeToLabel.
	// +optional
	Roles *RoleRules `json:"roles,omitempty"`

	// RoleBindings bind existing roles in every namespace that carries
	// ScopeToLabel.
	// +optional
	RoleBindings *RoleBindingRefs `json:"roleBindings,omitempty"`

	// ClusterRoles are granted cluster-wide. gatehouse denies dangerous
	// grants among them in Enforce mode unless AcknowledgedGrants covers them.
	// +optional
	ClusterRoles *RoleRules `json:"clusterRoles,omitempty"`

	// ClusterRoleBindings bind existing cluster roles cluster-wide, as a list
	// ("clusterRoleBindings: []").
	// +optional
	// +listType=atomic
	ClusterRoleBindings []rbacv1.RoleRef `json:"clusterRoleBindings,omitempty"`

	// AcknowledgedGrants are explicit, named acknowledgements of dangerous
	// cluster-wide grants in ClusterRoles. A dangerous (apiGroup, resource,
	// verb) of a rule is acknowledged when one entry lists all three, compared
	// literally ("*" matches only "*").
	// +optional
	// +listType=map
	// +listMapKey=name
	AcknowledgedGrants []AcknowledgedGrant `json:"acknowledgedGrants,omitempty"`
}

// OperatorRef names where the harnessed operator runs.
type OperatorRef struct {
	// Namespace the operator's pods run in.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`

	// ServiceAccounts the operator runs as. Empty means every pod in
	// Namespace.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`

	// InjectProxyConfiguration routes the operator's pods through the
	// harness proxy.
	// +optional
	InjectProxyConfiguration bool `json:"injectProxyConfiguration,omitempty"`
}

// AdmissionRef names one admission webhook configuration or policy.
type AdmissionRef struct {
	// APIVersion of the object, e.g. admissionregistration.k8s.io/v1.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the object.
	// +required
	Kind AdmissionKind `json:"kind"`
	// Name of the object (admission objects are cluster-scoped).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// LabelInjectionStrategy says how the selector is injected.
	// +optional
	// +kubebuilder:default=ApplyPatch
	LabelInjectionStrategy LabelInjectionStrategy `json:"labelInjectionStrategy,omitempty"`
}

// RoleRules is a set of RBAC rules (spec.roles, spec.clusterRoles).
type RoleRules struct {
	// Rules granted.
	// +optional
	// +listType=atomic
	Rules []rbacv1.PolicyRule `json:"rules,omitempty"`
}

// RoleBindingRefs are roles bound in each scoped namespace.
type RoleBindingRefs struct {
	// RoleRefs name the Roles or ClusterRoles to bind.
	// +optional
	// +listType=atomic
	RoleRefs []rbacv1.RoleRef `json:"roleRefs,omitempty"`
}

// AcknowledgedGrant acknowledges, by name and with a reason, the dangerous
// (apiGroup, resource, verb) combinations it lists. Strings are compared
// literally: "*" matches only "*".
type AcknowledgedGrant struct {
	// Name identifies the acknowledgement in warnings and audit annotations.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// APIGroups of the acknowledged grant ("" is the core group).
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	APIGroups []string `json:"apiGroups"`
	// Resources of the acknowledged grant.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	Resources []string `json:"resources"`
	// Verbs of the acknowledged grant.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	Verbs []string `json:"verbs"`
	// Reason says why the grant is needed; it is never echoed by gatehouse.
	// +required
	// +kubebuilder:validation:MinLength=10
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`
}

// OperatorHarnessStatus is the observed state.
type OperatorHarnessStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions of the harness.
	// +optional
	// +listType=map
	// +listMapKey=type
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
