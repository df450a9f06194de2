// Package clusterstate holds the informer-backed views of the cluster that
// `gatehouse serve` gives its webhooks: CachedState (the objects the
// policies look up, by index, and namespace labels) and CachedWorkloads (the
// operator's live workloads). They satisfy the reader interfaces of package
// webhooks (StateReader, NamespaceReader, WorkloadReader) structurally, so
// this package does not import it: the adapters consume the views, the views
// know nothing of the adapters.
//
// The indexes are the policies' own (policies/dependencygroup/index.go,
// policies/harness/index.go), gathered in one table (indexes.go) that the
// caches register and `gatehouse check --state` applies; TrimForLookups is
// what both keep of an object.
package clusterstate
