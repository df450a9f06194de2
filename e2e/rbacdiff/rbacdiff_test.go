// Package rbacdiff runs gatehouse's RBAC rule matching (policies/harness)
// differentially against the Kubernetes RBAC authorizer's own RuleAllows
// (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac), on generated rules and
// requests. It is a module of its own so that k8s.io/kubernetes stays out of
// the product module and does not move the versions that tools/controlplane
// builds the control plane from.
package rbacdiff

import (
	"math/rand/v2"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// Vocabularies: wildcards, the dangerous requests' own words, near misses
// (case, prefixes, subresource forms) and the empty string.
var (
	verbs     = []string{"*", "", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "scopedlist", "LIST", "Get"}
	groups    = []string{"*", "", "rbac.authorization.k8s.io", "authentication.k8s.io", "admissionregistration.k8s.io", "apps", "k8s.mariadb.com", "RBAC.authorization.k8s.io"}
	resources = []string{"*", "", "secrets", "pods", "pods/exec", "pods/attach", "pods/portforward", "pods/log", "*/exec", "*/token", "*/",
		"serviceaccounts", "serviceaccounts/token", "nodes", "nodes/proxy", "*/proxy", "users", "groups", "uids", "userextras", "userextras/scopes",
		"userextras/example.com/scopes", "*/example.com/scopes", "*/scopes", "roles", "clusterroles", "clusterroles/*", "validatingwebhookconfigurations",
		"mutatingadmissionpolicies", "secrets/", "/exec", "Secrets"}
	names = []string{"", "*", "db", "default", "cluster-admin", "requires.helmetica.io/operator-mariadb"}
)

func pick(r *rand.Rand, from []string, max int) []string {
	n := r.IntN(max + 1)
	out := make([]string, 0, n)
	for range n {
		out = append(out, from[r.IntN(len(from))])
	}
	return out
}

func randomRule(r *rand.Rand) harness.Rule {
	return harness.Rule{Verbs: pick(r, verbs, 3), APIGroups: pick(r, groups, 2), Resources: pick(r, resources, 3), ResourceNames: pick(r, names, 2)}
}

func randomRequest(r *rand.Rand) harness.Request {
	resource, sub := resources[r.IntN(len(resources))], ""
	if r.IntN(2) == 0 {
		sub = []string{"exec", "token", "proxy", "scopes", "example.com/scopes", "status", "*"}[r.IntN(7)]
	}
	return harness.Request{Verb: verbs[r.IntN(len(verbs))], APIGroup: groups[r.IntN(len(groups))], Resource: resource, Subresource: sub, Name: names[r.IntN(len(names))]}
}

func upstream(rule harness.Rule, req harness.Request) bool {
	return rbac.RuleAllows(authorizer.AttributesRecord{
		ResourceRequest: true, Verb: req.Verb, APIGroup: req.APIGroup, Resource: req.Resource, Subresource: req.Subresource, Name: req.Name,
	}, &rbacv1.PolicyRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
}

// TestRuleAllowsEqualsUpstream: for every generated (rule, request) pair,
// and every rule against every dangerous request the review asks (with each
// name and subresource it may be asked with), gatehouse's RuleAllows answers
// as the authorizer's RuleAllows.
func TestRuleAllowsEqualsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var pairs, allowed int
	check := func(rule harness.Rule, req harness.Request) {
		pairs++
		got, want := harness.RuleAllows(rule, req), upstream(rule, req)
		if want {
			allowed++
		}
		if got != want {
			t.Fatalf("rule %+v, request %+v: gatehouse %v, upstream %v", rule, req, got, want)
		}
	}
	for range 2000 {
		rule := randomRule(r)
		for range 50 {
			check(rule, randomRequest(r))
		}
		for _, d := range harness.DangerousRequests() {
			for _, name := range append([]string{""}, rule.ResourceNames...) {
				req := d.Request
				req.Name = name
				check(rule, req)
			}
		}
	}
	t.Logf("%d pairs, %d allowed", pairs, allowed)
	if allowed == 0 || allowed == pairs {
		t.Fatal("the generator does not exercise both answers")
	}
}

// TestDangerousAsksUpstream: the review finds a rule dangerous exactly when
// the upstream authorizer allows it one of the fixed dangerous requests (an
// unnamed one with the name "", another with any name: "" or one the rule
// lists; user extras with any key), or scopedlist with a name other than the
// scope label of a resource the rule does not already list and watch
// without a name.
func TestDangerousAsksUpstream(t *testing.T) {
	const scopeLabel = "requires.helmetica.io/operator-mariadb"
	r := rand.New(rand.NewPCG(3, 4))
	var dangerous int
	for range 20000 {
		rule := randomRule(r)
		want := false
		for _, d := range harness.DangerousRequests() {
			probes := []harness.Request{d.Request}
			if d.AnySubresource {
				for _, res := range rule.Resources {
					for i := range len(res) {
						if res[i] == '/' && i+1 < len(res) {
							p := d.Request
							p.Subresource = res[i+1:]
							probes = append(probes, p)
							break
						}
					}
				}
			}
			candidates := []string{""}
			if d.AnyName {
				candidates = append(candidates, rule.ResourceNames...)
			}
			for _, p := range probes {
				for _, n := range candidates {
					p.Name = n
					want = want || upstream(rule, p)
				}
			}
		}
		for _, g := range append(slices.Clone(rule.APIGroups), "some.group") {
			if g == "*" {
				continue
			}
			// Each resource the rule spells is a resource the proxy may ask
			// scopedlist of (the request's resource is that string).
			for _, res := range append(slices.Clone(rule.Resources), "some-resource") {
				// A rule that lists and watches the resource unnamed reads
				// every object already: scopedlist adds nothing there.
				readsAll := upstream(rule, harness.Request{Verb: "list", APIGroup: g, Resource: res}) &&
					upstream(rule, harness.Request{Verb: "watch", APIGroup: g, Resource: res})
				for _, n := range append([]string{"", "another/label"}, rule.ResourceNames...) {
					if n != scopeLabel && !readsAll && upstream(rule, harness.Request{Verb: "scopedlist", APIGroup: g, Resource: res, Name: n}) {
						want = true
					}
				}
			}
		}
		if want {
			dangerous++
		}
		if got := harness.Dangerous(rule, scopeLabel); got != want {
			t.Fatalf("rule %+v: review says dangerous=%v, the upstream authorizer %v", rule, got, want)
		}
	}
	t.Logf("%d of 20000 rules dangerous", dangerous)
	if dangerous == 0 || dangerous == 20000 {
		t.Fatal("the generator does not exercise both answers")
	}
}
