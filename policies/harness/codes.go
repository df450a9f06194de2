package harness

import "github.com/gatehouse-dev/gatehouse/policies"

// Codes reported by HARNESS. Every code denies unless marked "warns".
const (
	// HarnessModeInvalid: spec.mode is set to something other than Enforce
	// or Report.
	HarnessModeInvalid policies.Code = "HarnessModeInvalid"
	// HarnessScopeLabelInvalid: spec.scopeToLabel is not a valid label key,
	// or is missing in Enforce mode.
	HarnessScopeLabelInvalid policies.Code = "HarnessScopeLabelInvalid"
	// HarnessScopeLabelReserved: spec.scopeToLabel has a prefix Kubernetes
	// reserves (kubernetes.io, k8s.io, or a subdomain of either), whose
	// labels Kubernetes itself sets (kubernetes.io/metadata.name is on every
	// namespace).
	HarnessScopeLabelReserved policies.Code = "HarnessScopeLabelReserved"
	// HarnessScopeLabelClaimed: another harness uses the same scopeToLabel.
	HarnessScopeLabelClaimed policies.Code = "HarnessScopeLabelClaimed"
	// HarnessOperatorInvalid: spec.operator.namespace is not a namespace
	// name, or a service account is not a service account name.
	HarnessOperatorInvalid policies.Code = "HarnessOperatorInvalid"
	// HarnessServiceAccountClaimed: another harness claims the same
	// (namespace, service account), or the whole namespace.
	HarnessServiceAccountClaimed policies.Code = "HarnessServiceAccountClaimed"
	// HarnessClusterRolesInvalid: spec.clusterRoles (an object), its rules (a
	// list) or a rule (an object whose verbs, apiGroups, resources and
	// resourceNames are lists) has a shape the review cannot read, so its
	// grants cannot be reviewed.
	HarnessClusterRolesInvalid policies.Code = "HarnessClusterRolesInvalid"
	// HarnessGrantDangerous: a rule of spec.clusterRoles, or the role a
	// binding references, covers a request of the fixed dangerous list
	// (dangerous.go) as the RBAC authorizer matches it, or scopedlist beyond
	// the harness's own scope label. Denies in Enforce mode; warns in Report
	// mode.
	HarnessGrantDangerous policies.Code = "HarnessGrantDangerous"
	// HarnessGrantAcknowledged warns: a dangerous rule each of whose
	// dangerous (apiGroup, resource, verb) triples an entry of
	// spec.acknowledgedGrants lists; the message names the entries.
	HarnessGrantAcknowledged policies.Code = "HarnessGrantAcknowledged"
	// HarnessAcknowledgementInvalid: an acknowledgement that is not an
	// object, lacks a valid or unique name, has an empty or non-list
	// apiGroups, resources or verbs, or a reason shorter than 10 or longer
	// than 1024 characters. It acknowledges nothing.
	HarnessAcknowledgementInvalid policies.Code = "HarnessAcknowledgementInvalid"
	// HarnessAcknowledgementUnused warns: a valid acknowledgement that
	// acknowledges no dangerous rule (it lists no dangerous triple, only
	// triples an earlier entry covers, or only part of a rule).
	HarnessAcknowledgementUnused policies.Code = "HarnessAcknowledgementUnused"

	// HarnessGrantTooLarge: a dangerous rule or role covers more dangerous
	// (apiGroup, resource, verb) combinations than the review enumerates
	// (MaxTriples). Denies in both modes: a limit fails closed.
	HarnessGrantTooLarge policies.Code = "HarnessGrantTooLarge"
	// HarnessRoleRefInvalid: an entry of spec.clusterRoleBindings or
	// spec.roleBindings.roleRefs is not a roleRef the review can resolve
	// (apiGroup rbac.authorization.k8s.io, kind ClusterRole, or Role in
	// roleBindings, and a role name), or the list holding it has another
	// shape.
	HarnessRoleRefInvalid policies.Code = "HarnessRoleRefInvalid"
	// HarnessRoleNotFound: a binding references a role that does not exist.
	// Binding it would grant whatever rules it is created with later.
	HarnessRoleNotFound policies.Code = "HarnessRoleNotFound"
	// HarnessRoleUnreadable: a referenced role, or a cluster role its
	// aggregationRule selects, is stored in a shape the review cannot read.
	HarnessRoleUnreadable policies.Code = "HarnessRoleUnreadable"

	// A view of other harnesses, or of roles, that cannot answer a lookup
	// denies with policies.StateUnavailable.
)
