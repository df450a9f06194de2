// Package catalog lists every finding code the policies report, for the
// callers that need the list at run time: the exception webhook refuses an
// exception naming a code no webhook reports (exception.Rules.Codes). The
// table is kept by hand and checked against the declarations in the
// sources (TestCodesAreEveryDeclaredCode), so a new code cannot be left
// out of it.
package catalog

import (
	"slices"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
)

// Codes returns every code declared under policies/, in the order of the
// packages and their declarations: a copy, free to change.
func Codes() []policies.Code { return slices.Clone(codes) }

// codes is Codes' table.
var codes = []policies.Code{
	// policies/dependencygroup
	dependencygroup.DependencyGroupEmpty,
	dependencygroup.DependencyGroupCRDNameInvalid,
	dependencygroup.DependencyGroupCRDDuplicate,
	dependencygroup.DependencyGroupCRDClaimed,
	dependencygroup.DependencyGroupHarnessRefInvalid,
	dependencygroup.CRDSourceEmpty,
	dependencygroup.CRDSourceGroupNameInvalid,
	dependencygroup.CRDSourceManagesInvalid,
	dependencygroup.CRDSourceAliasInvalid,
	dependencygroup.CRDSourceProvidesAliased,
	dependencygroup.CRDSourceScopeLabelInvalid,
	dependencygroup.CRDSourceProvidesClaimed,
	dependencygroup.CRDSourceManagesClaimed,
	dependencygroup.CRDSourceRequiresMissing,
	// policies/exception
	exception.ExceptionInvalid,
	exception.ExceptionReasonMissing,
	exception.ExceptionExpired,
	exception.ExceptionExpiryTooFar,
	exception.ExceptionNamespacedDisabled,
	exception.ExceptionOutsideNamespace,
	exception.ExceptionTooBroad,
	exception.ExceptionUnknownWebhook,
	exception.ExceptionUnknownCode,
	exception.ExceptionCodeNeverExcused,
	// policies
	policies.StateUnavailable,
	// policies/harness
	harness.HarnessModeInvalid,
	harness.HarnessScopeLabelInvalid,
	harness.HarnessScopeLabelReserved,
	harness.HarnessScopeLabelClaimed,
	harness.HarnessOperatorInvalid,
	harness.HarnessServiceAccountClaimed,
	harness.HarnessClusterRolesInvalid,
	harness.HarnessGrantDangerous,
	harness.HarnessGrantAcknowledged,
	harness.HarnessAcknowledgementInvalid,
	harness.HarnessAcknowledgementUnused,
	harness.HarnessGrantTooLarge,
	harness.HarnessRoleRefInvalid,
	harness.HarnessRoleNotFound,
	harness.HarnessRoleUnreadable,
	// policies/overrides
	overrides.OverrideDocumentEmpty,
	overrides.OverrideDocumentInvalid,
	overrides.OverrideDocumentTooDeep,
	overrides.OverrideConfigMapTooLarge,
	overrides.OverrideDocumentTooLong,
	overrides.OverrideDocumentTooManyNodes,
	overrides.OverrideMappingTooManyKeys,
	overrides.OverrideTooManyEntries,
	overrides.OverrideDocumentTooLarge,
	overrides.OverrideTooManyFindings,
	overrides.OverrideMultipleDocuments,
	overrides.OverrideAPIVersionUnknown,
	overrides.OverrideYAMLMergeKey,
	overrides.OverrideDuplicateKey,
	overrides.OverrideUnknownField,
	overrides.OverrideTypeInvalid,
	overrides.OverrideNull,
	overrides.OverrideDirective,
	overrides.OverrideComponentUnknown,
	overrides.OverrideKindMismatch,
	overrides.OverrideSitesInvalid,
	overrides.OverrideEmpty,
	overrides.OverrideNameInvalid,
	overrides.OverrideAdditionUndefined,
	overrides.OverridePathNotAllowed,
	overrides.OverridePathProtected,
	overrides.OverrideReservedKey,
	overrides.OverrideListKeyInvalid,
	overrides.OverrideSelectorLabel,
	overrides.OverrideVolumeRedefined,
	overrides.OverrideContainerUnknown,
	overrides.OverrideContainerExists,
	overrides.OverrideNodeSelectorOwned,
	overrides.OverrideConflict,
	overrides.OverrideFieldOwnedBySite,
	overrides.OverrideEnvValueAndValueFrom,
	overrides.OverrideStrategyInvalid,
	overrides.OverrideAffinityInvalid,
	overrides.OverrideResolutionSkipped,
	overrides.OverrideArgsReplaced,
	overrides.OverrideImagePinned,
	// policies/podsecurity
	podsecurity.RunAsRootConflict,
	podsecurity.SecurityDefaultsMissing,
	// policies/proxy
	proxy.ProxyNamespaceExempt,
	proxy.ProxyNamespaceFailsOpen,
	proxy.ProxyVolumeNameTaken,
	// policies/scope
	scope.ScopeEntryEmpty,
	scope.ScopeEmpty,
	scope.ScopeValueMissing,
	scope.ScopeValueHasDelimiter,
	scope.ScopeUnexpectedValue,
	scope.ScopeUnknownKey,
	scope.ScopeKeyMissing,
	scope.ScopeServiceNameInvalid,
	scope.ScopeListenerVolumeNameInvalid,
	scope.ScopeNameEmpty,
	scope.ScopeNameHasDelimiter,
	scope.ScopeWalkLimit,
	scope.SecretClassMissing,
	scope.SecretFormatUnknown,
	scope.SecretDurationInvalid,
	scope.SecretJitterFactorInvalid,
	scope.SecretJitterFactorZero,
	scope.SecretCertLifetimeUnissuable,
	scope.SecretCertLifetimeMayFail,
	scope.SecretPasswordReadable,
	scope.SecretAnnotationUnknown,
	// policies/scopelabel
	scopelabel.ScopeLabelMismatch,
	scopelabel.ScopeLabelChanged,
	scopelabel.ScopeLabelAdded,
	// policies/serviceaccount
	serviceaccount.ServiceAccountOverridden,
	serviceaccount.ServiceAccountOverrideRedundant,
	serviceaccount.ServiceAccountMismatch,
	serviceaccount.ServiceAccountWalkTooDeep,
}
