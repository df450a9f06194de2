// Package render writes the objects the API server needs from gatehouse:
// the validating and mutating webhook configurations in either layout
// (manifests.go), the in-process layout's ValidatingAdmissionPolicies
// (inprocess.go) and the policy that guards the managed namespace labels
// (managed_labels.go), and compares what is registered with what the server
// would render (drift_registered.go). The entries themselves are routing's
// (webhooks/route), so what is rendered is what the server routes by.
package render
