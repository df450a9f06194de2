package dependencygroup

import "github.com/gatehouse-dev/gatehouse/policies"

// Codes reported by DG (ValidateGroup) and CRDS (ValidateSource). Every code
// denies unless marked "warns".
const (
	// DependencyGroupEmpty: spec.crds is missing, not a list or empty.
	DependencyGroupEmpty policies.Code = "DependencyGroupEmpty"
	// DependencyGroupCRDNameInvalid: a crds entry whose name is not
	// <plural>.<group>, a lowercase DNS-1123 subdomain with at least one dot.
	DependencyGroupCRDNameInvalid policies.Code = "DependencyGroupCRDNameInvalid"
	// DependencyGroupCRDDuplicate: the group lists a CRD name twice.
	DependencyGroupCRDDuplicate policies.Code = "DependencyGroupCRDDuplicate"
	// DependencyGroupCRDClaimed: another DependencyGroup lists the CRD.
	DependencyGroupCRDClaimed policies.Code = "DependencyGroupCRDClaimed"
	// DependencyGroupHarnessRefInvalid: spec.harnessRef is set with a kind
	// other than OperatorHarness, or without a name.
	DependencyGroupHarnessRefInvalid policies.Code = "DependencyGroupHarnessRefInvalid"

	// CRDSourceEmpty: a source that states none of reference, provides,
	// manages or a requires entry.
	CRDSourceEmpty policies.Code = "CRDSourceEmpty"
	// CRDSourceGroupNameInvalid: a group named by provides, manages or
	// requires is not a DependencyGroup name (DNS-1123 subdomain).
	CRDSourceGroupNameInvalid policies.Code = "CRDSourceGroupNameInvalid"
	// CRDSourceManagesInvalid: manages does not follow the grammar of
	// ParseManages.
	CRDSourceManagesInvalid policies.Code = "CRDSourceManagesInvalid"
	// CRDSourceAliasInvalid: the "as" of a manages or requires entry is
	// not a lowercase DNS-1123 label.
	CRDSourceAliasInvalid policies.Code = "CRDSourceAliasInvalid"
	// CRDSourceProvidesAliased: a provides entry sets "as" (helmetica's
	// schema rejects it too).
	CRDSourceProvidesAliased policies.Code = "CRDSourceProvidesAliased"
	// CRDSourceScopeLabelInvalid: the implied label key
	// requires.helmetica.io/<name> is not a valid label key.
	CRDSourceScopeLabelInvalid policies.Code = "CRDSourceScopeLabelInvalid"
	// CRDSourceProvidesClaimed: another source provides the same group.
	CRDSourceProvidesClaimed policies.Code = "CRDSourceProvidesClaimed"
	// CRDSourceManagesClaimed: another source manages the same scope.
	CRDSourceManagesClaimed policies.Code = "CRDSourceManagesClaimed"
	// CRDSourceRequiresMissing warns: a requires entry names a
	// DependencyGroup that does not exist (yet).
	CRDSourceRequiresMissing policies.Code = "CRDSourceRequiresMissing"

	// A view of other objects that cannot answer a lookup denies with
	// policies.StateUnavailable.
)
