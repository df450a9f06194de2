// Package route decides which webhook takes which admission request, and
// says why: the registry of webhooks (registry.go), what each intercepts
// (intercept.go), the endpoints that combine them and the entries that send
// them requests (combined.go, entries.go), the namespaces and requesters
// exempt from them (exemptions.go), the namespaces whose labels gatehouse
// keeps (selection.go), and the predicates that narrow a webhook to the
// requests its contract acts on (narrowing.go). Each rule is written once
// and read twice: by the review chain and `gatehouse check`, in Go, and by
// the API server, as the rules, selectors and matchConditions it renders
// (cel.go, entries.go), so the two cannot differ.
//
// Options, the server's configuration as the webhooks read it, and the
// views of the cluster they are given (state.go) live here too: routing
// reads them first.
package route
