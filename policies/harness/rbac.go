// This file is the rule matching of the Kubernetes RBAC authorizer, which
// the review asks the dangerous requests (dangerous.go). It reads nothing of
// an OperatorHarness; it decides whether one RBAC policy rule covers one
// resource request exactly as the authorizer does (k8s.io/kubernetes
// plugin/pkg/auth/authorizer/rbac RuleAllows, with the helpers of
// pkg/apis/rbac/v1: VerbMatches, APIGroupMatches, ResourceMatches,
// ResourceNameMatches), re-stated here because those packages live in
// k8s.io/kubernetes, which a product module does not import. A differential
// test in e2e/rbacdiff runs the upstream function against this one.
//
//   - "*" in verbs, apiGroups or resources matches everything of that kind;
//   - a resource matches "<resource>/<subresource>" exactly, and a rule
//     resource "*/<subresource>" matches that subresource of any resource;
//   - an empty resourceNames matches every name, otherwise the request's
//     name must be listed; an unnamed request (list, watch, create,
//     deletecollection) has the name "", so a listed "" covers it, while "*"
//     in resourceNames is a name like any other.
package harness

import "strings"

// Rule is the part of an RBAC PolicyRule that resource requests are matched
// against.
type Rule struct {
	Verbs, APIGroups, Resources, ResourceNames []string
}

// Request is one resource request as the RBAC authorizer sees it. Name is ""
// for an unnamed request.
type Request struct {
	Verb, APIGroup, Resource, Subresource, Name string
}

// RuleAllows reports whether rule covers req, as the RBAC authorizer's
// RuleAllows does for a resource request.
func RuleAllows(rule Rule, req Request) bool {
	return verbMatches(rule.Verbs, req.Verb) &&
		groupMatches(rule.APIGroups, req.APIGroup) &&
		resourceMatches(rule.Resources, req.combinedResource(), req.Subresource) &&
		nameMatches(rule.ResourceNames, req.Name)
}

// combinedResource is "<resource>/<subresource>", or the resource alone.
func (req Request) combinedResource() string {
	if req.Subresource == "" {
		return req.Resource
	}
	return req.Resource + "/" + req.Subresource
}

const all = "*"

func verbMatches(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == all || v == verb {
			return true
		}
	}
	return false
}

func groupMatches(groups []string, group string) bool {
	for _, g := range groups {
		if g == all || g == group {
			return true
		}
	}
	return false
}

func resourceMatches(resources []string, combined, subresource string) bool {
	for _, r := range resources {
		if r == all || r == combined {
			return true
		}
		if subresource != "" && len(r) == len(subresource)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, subresource) {
			return true
		}
	}
	return false
}

func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
