// Package v1alpha1 contains the exceptions API (gatehouse.dev/v1alpha1):
// Exception, held by a namespace for its own objects, and ClusterException,
// cluster-scoped. An exception excuses, until it expires, chosen findings of
// chosen webhooks about chosen objects (docs/contracts.md §12): a finding it
// excuses is admitted with a warning naming it, counted and reported as
// excused, never dropped silently. gatehouse ships the CRDs (deploy/crds),
// reviews exceptions at admission and evaluates them with
// policies/exception, which holds the rules and the reasons for them.
//
// Both kinds share ExceptionSpec. An example, excusing one code of one
// webhook for one StatefulSet until the end of a migration:
//
//	apiVersion: gatehouse.dev/v1alpha1
//	kind: Exception
//	metadata:
//	  name: hdfs-legacy-scope
//	  namespace: team-a
//	spec:
//	  match:
//	  - kinds: [{group: apps, kind: StatefulSet}]
//	    names: [hdfs-namenode]
//	  webhooks: [secret-scope]
//	  codes: [ScopeNameHasDelimiter]
//	  reason: "migrating to per-service scopes, PLAT-1234, owner team-a"
//	  expires: "2027-01-15T00:00:00Z"
//
// There is no status: what an exception excused, and that it expired or
// matched nothing, is written to the audit's reports and counted in metrics,
// which the review path writes anyway, rather than into the exception, which
// would need a writer of its own.
//
// +kubebuilder:object:generate=true
// +groupName=gatehouse.dev
package v1alpha1
