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
	// HarnessGrantDangerous: a cluster-wide rule grants escalate, bind,
	// impersonate, a "*" verb or resource, a read of secrets without
	// resourceNames, or scopedlist beyond the harness's own scope label.
	// Denies in Enforce mode; warns in Report mode.
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

	// StateUnavailable: the view of other harnesses could not answer a
	// lookup (unsynced or failed cache), so the review cannot be completed.
	StateUnavailable policies.Code = "StateUnavailable"
)
