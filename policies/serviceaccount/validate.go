// Dispatch, finding codes and messages shared by the two SA rules.
//
// Reads: the group and kind of the object, to choose a rule.
// Allows: every object that is neither a product custom resource nor a kind
// that runs pods; those get no findings.

// Package serviceaccount implements contract SA (docs/contracts.md §3): a product
// cluster's pods run as the ServiceAccount its operator release gives them
// (naming.go: a name the released operators build themselves, or the one
// operator-go derives from the cluster's kind and name), and nothing may
// override it — neither a product custom resource's podOverrides
// (productcr.go) nor a workload or Pod that a product controls
// (ownedpod.go).
package serviceaccount

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Finding codes of contract SA.
const (
	// ServiceAccountOverridden (deny): a product custom resource's podOverrides sets
	// the pod ServiceAccount to something other than the name its operator
	// gives the pods.
	ServiceAccountOverridden policies.Code = "ServiceAccountOverridden"
	// ServiceAccountOverrideRedundant (warn): a podOverrides sets the pod
	// ServiceAccount to the name the operator uses anyway.
	ServiceAccountOverrideRedundant policies.Code = "ServiceAccountOverrideRedundant"
	// ServiceAccountMismatch (deny): a workload or Pod whose controller is a product
	// custom resource runs as another ServiceAccount than the one its
	// operator gives the owner's pods.
	ServiceAccountMismatch policies.Code = "ServiceAccountMismatch"
	// ServiceAccountWalkTooDeep (deny, never ratchets): a product custom resource
	// nests maps or lists deeper than the search for podOverrides goes, so
	// a podOverrides below that point would go unseen.
	ServiceAccountWalkTooDeep policies.Code = "ServiceAccountWalkTooDeep"
)

// The two pod spec fields that choose the ServiceAccount, in the order they
// are checked: the current one and its deprecated alias.
var serviceAccountFields = [...]string{"serviceAccountName", "serviceAccount"}

// Messages. None of them includes the value that was set: only kinds, object
// names and the operator's name (itself built from a kind and a name, or
// configured).
const (
	msgOverridden = "podOverrides may not change the workload ServiceAccount; " +
		"this %s's pods run as %q (remove the field)"
	msgOverriddenNoName = "podOverrides may not change the workload ServiceAccount; " +
		"this %s has no metadata.name yet, so the ServiceAccount its pods will run as cannot be known (remove the field)"
	msgOverrideRedundant = "the operator already runs this cluster's pods as this ServiceAccount; the field is redundant"
	msgWalkTooDeep       = "maps and lists nest deeper than %d levels here, past what gatehouse searches for podOverrides; " +
		"a podOverrides below could change the workload ServiceAccount unseen (flatten the object)"
	msgMismatch = "pods controlled by %s %q run as the ServiceAccount its operator gives them, %q; " +
		"set the field to that name or remove it"
	msgMismatchNoOwner = "pods controlled by a product custom resource run as the ServiceAccount its operator gives them, " +
		"which depends on its kind and name, but the controller ownerReference lacks a kind or name; remove the field"
)

// Validate evaluates one object of kind gk against contract SA and returns
// its findings, sorted.
//
// A product custom resource (products.Matches(gk.Group)) is checked for
// ServiceAccount overrides in its podOverrides; a Pod or a workload that
// carries a pod template is checked against the name naming gives the pods
// of its product controller, if it has one. Every other kind gets no
// findings.
func Validate(gk schema.GroupKind, obj map[string]any, products policies.ProductSelector, naming Naming) []policies.Finding {
	var findings []policies.Finding
	if products.Matches(gk.Group) {
		findings = validateProductCR(gk, obj, naming)
	} else {
		findings = validateOwnedPod(gk, obj, products, naming)
	}
	policies.Sort(findings)
	return findings
}

// evidenceOf renders a set value for Finding.Evidence, which hashes it. A
// string is taken as is; anything else is prefixed with its Go type so that,
// say, the number 1 and the string "1" differ. fmt prints map keys sorted, so
// the rendering is deterministic.
func evidenceOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprintf("%T:%v", v, v)
}
