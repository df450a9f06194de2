package exception

import "github.com/gatehouse-dev/gatehouse/policies"

// The codes Validate reports about an Exception or ClusterException under
// review. Each denies; on UPDATE each ratchets like any content finding, so
// an exception stored before a rule, or one that has since expired, can
// still have its finalizers removed.
const (
	// ExceptionInvalid: a field has a shape the CRD's schema also refuses,
	// or one that cannot be evaluated (an empty list, an invalid label
	// selector, a namespace that is no namespace name, "*" beside other
	// entries). gatehouse reviews it too, because `check` reads exceptions
	// the API server never saw.
	ExceptionInvalid policies.Code = "ExceptionInvalid"
	// ExceptionReasonMissing: spec.reason is empty or blank.
	ExceptionReasonMissing policies.Code = "ExceptionReasonMissing"
	// ExceptionExpired: spec.expires is not in the future (or is missing).
	ExceptionExpired policies.Code = "ExceptionExpired"
	// ExceptionExpiryTooFar: spec.expires lies more than the configuration's
	// exceptions.maxDuration from now.
	ExceptionExpiryTooFar policies.Code = "ExceptionExpiryTooFar"
	// ExceptionNamespacedDisabled: an Exception where the configuration does
	// not let namespaces hold their own (exceptions.namespaced is off).
	ExceptionNamespacedDisabled policies.Code = "ExceptionNamespacedDisabled"
	// ExceptionOutsideNamespace: an Exception's match names a namespace
	// other than its own.
	ExceptionOutsideNamespace policies.Code = "ExceptionOutsideNamespace"
	// ExceptionTooBroad: a ClusterException's match entry selects every
	// object of the cluster, or webhooks and codes are both "*" while a
	// match entry names no objects.
	ExceptionTooBroad policies.Code = "ExceptionTooBroad"
	// ExceptionUnknownWebhook: spec.webhooks names no webhook of this
	// gatehouse.
	ExceptionUnknownWebhook policies.Code = "ExceptionUnknownWebhook"
	// ExceptionUnknownCode: spec.codes names no code a webhook of this
	// gatehouse reports.
	ExceptionUnknownCode policies.Code = "ExceptionUnknownCode"
	// ExceptionCodeNeverExcused: spec.codes names a code about the review or
	// the view (StateUnavailable), which no exception excuses.
	ExceptionCodeNeverExcused policies.Code = "ExceptionCodeNeverExcused"
)
