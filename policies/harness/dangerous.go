// This file holds the fixed list of dangerous requests and asks it of one
// RBAC rule with the authorizer's own matching (rbac.go). It reads the lists
// of a rule (verbs, apiGroups, resources, resourceNames) and finds it
// dangerous when it covers any of these requests, cluster-wide:
//
//   - get, list or watch of secrets (core group) without a name: reading
//     Secrets beyond single named ones (an empty resourceNames, or a listed
//     "", which covers every unnamed list and watch);
//   - escalate or bind on roles or clusterroles, for any name;
//   - impersonate users, groups, serviceaccounts (core group), uids or
//     userextras/<any key> (authentication.k8s.io), for any name;
//   - create on pods/exec, pods/attach, pods/portforward and
//     serviceaccounts/token, for any name;
//   - get or create on nodes/proxy, for any name;
//   - create pods;
//   - create, update, patch, delete or deletecollection of
//     mutating/validatingwebhookconfigurations and the validating/mutating
//     admission policies and their bindings (admissionregistration.k8s.io)
//     without a name: a rule limited to named configurations may manage
//     those (an operator may manage its own webhook configuration), it
//     cannot create others nor remove them all;
//   - the custom verb scopedlist (the harness proxy lists objects
//     carrying a scope label, and asks RBAC for scopedlist with the label
//     key as the name) for any label other than this harness's scopeToLabel,
//     on any resource. A rule whose resourceNames are exactly the
//     scopeToLabel is the safe way to list cluster-wide and is allowed, and
//     so is any scopedlist in a rule that also grants list and watch of the
//     same resources without a name: it adds nothing to what they read.
//
// "For any name" probes the rule with a name it lists (every listed name is
// covered by the rule), or "" when it lists none; "without a name" probes
// with "". Spelling does not matter, coverage does: "*" in any list, a
// "*/<subresource>" resource and a listed "" are all read as the authorizer
// reads them, and a wildcard that covers no dangerous request is not
// dangerous.
//
// For an acknowledgement (acknowledgements.go) the review also returns the
// literal (apiGroup, resource, verb) triples of the rule through which it
// covers a dangerous request: a triple is dangerous when the rule cut down to
// that one group, resource and verb (with its resourceNames) still covers one.
package harness

import (
	"slices"
	"strings"
)

// RBAC vocabulary (upstream, Kubernetes; scopedlist: the harness proxy's).
const (
	verbScopedList = "scopedlist"
	groupCore      = ""
	groupRBAC      = "rbac.authorization.k8s.io"
	groupAuthn     = "authentication.k8s.io"
	groupAdmission = "admissionregistration.k8s.io"
)

// Reasons a rule is dangerous, in the order messages list them.
const (
	dangerSecretsRead    = "reading secrets beyond single named ones (get, list or watch without a name)"
	dangerEscalateBind   = "escalate or bind on roles or cluster roles"
	dangerImpersonate    = "impersonation (impersonate on users, groups, service accounts, uids or user extras)"
	dangerPodAccess      = "exec, attach or port-forward into pods"
	dangerTokens         = "minting service account tokens (serviceaccounts/token)"
	dangerNodeProxy      = "the nodes' proxy (nodes/proxy)"
	dangerCreatePods     = "creating pods"
	dangerAdmission      = "writing admission webhook configurations, admission policies or their bindings beyond single named ones"
	dangerScopedListWide = "scopedlist beyond this harness's scopeToLabel (resourceNames must be exactly that label)"
)

// naming says which name a dangerous request is probed with.
type naming int

const (
	// unnamed requests carry the name "".
	unnamed naming = iota
	// anyName: the request is dangerous whatever object it names.
	anyName
)

// dangerousRequest is one entry of the fixed list.
type dangerousRequest struct {
	reason string
	req    Request
	naming naming
	// anySubresource: the request names some subresource of req.Resource
	// (userextras/<key>); each rule resource is probed with the subresource
	// it spells, or with one no rule spells.
	anySubresource bool
}

// ProbedRequest is one entry of the fixed list as the review asks it: with
// the name "" when AnyName is false, and with a name the rule lists (or ""
// when it lists none) when it is true; with AnySubresource, Subresource
// stands for any subresource, and each rule resource is also asked with the
// subresource it spells.
type ProbedRequest struct {
	Request
	AnyName, AnySubresource bool
}

// DangerousRequests returns the fixed list, for tests and the differential
// test against the upstream authorizer.
func DangerousRequests() []ProbedRequest {
	out := make([]ProbedRequest, len(dangerousRequests))
	for i, d := range dangerousRequests {
		out[i] = ProbedRequest{Request: d.req, AnyName: d.naming == anyName, AnySubresource: d.anySubresource}
	}
	return out
}

// Dangerous reports whether the review finds rule dangerous for a harness
// whose scope label is scopeLabel.
func Dangerous(rule Rule, scopeLabel string) bool {
	return len(reviewRule(rule, scopeLabel).reasons) > 0
}

var dangerousRequests = func() []dangerousRequest {
	var out []dangerousRequest
	add := func(reason string, n naming, group string, resources, verbs []string) {
		for _, res := range resources {
			resource, sub, _ := strings.Cut(res, "/")
			for _, v := range verbs {
				out = append(out, dangerousRequest{reason: reason, naming: n,
					req: Request{Verb: v, APIGroup: group, Resource: resource, Subresource: sub}})
			}
		}
	}
	add(dangerSecretsRead, unnamed, groupCore, []string{"secrets"}, []string{"get", "list", "watch"})
	add(dangerEscalateBind, anyName, groupRBAC, []string{"roles", "clusterroles"}, []string{"escalate", "bind"})
	add(dangerImpersonate, anyName, groupCore, []string{"users", "groups", "serviceaccounts"}, []string{"impersonate"})
	add(dangerImpersonate, anyName, groupAuthn, []string{"uids"}, []string{"impersonate"})
	out = append(out, dangerousRequest{reason: dangerImpersonate, naming: anyName, anySubresource: true,
		req: Request{Verb: "impersonate", APIGroup: groupAuthn, Resource: "userextras", Subresource: anyExtraKey}})
	add(dangerPodAccess, anyName, groupCore, []string{"pods/exec", "pods/attach", "pods/portforward"}, []string{"create"})
	add(dangerTokens, anyName, groupCore, []string{"serviceaccounts/token"}, []string{"create"})
	add(dangerNodeProxy, anyName, groupCore, []string{"nodes/proxy"}, []string{"get", "create"})
	add(dangerCreatePods, unnamed, groupCore, []string{"pods"}, []string{"create"})
	add(dangerAdmission, unnamed, groupAdmission, []string{
		"mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
	}, []string{"create", "update", "patch", "delete", "deletecollection"})
	return out
}()

// anyExtraKey stands for a user-extra key that no rule spells, so only "*"
// covers it.
const anyExtraKey = "gatehouse.dev/any-extra-key"

// triple is one (apiGroup, resource, verb) a rule grants.
type triple struct{ group, resource, verb string }

// MaxTriples bounds the dangerous (apiGroup, resource, verb) combinations of
// one rule the review enumerates for acknowledgements; a rule past it is
// denied (HarnessGrantTooLarge) in both modes.
const MaxTriples = 4096

// ruleReview is what the fixed list finds in one rule.
type ruleReview struct {
	reasons []string
	triples []triple // unique, in the order found
	tooMany bool
}

// reviewRule asks the fixed list, and scopedlist beyond scopeLabel, of rule.
func reviewRule(rule Rule, scopeLabel string) ruleReview {
	var rv ruleReview
	seen := map[triple]bool{}
	found := func(reason string, groups, resources, verbs []string) {
		if len(groups) == 0 || len(resources) == 0 || len(verbs) == 0 {
			return
		}
		if !slices.Contains(rv.reasons, reason) {
			rv.reasons = append(rv.reasons, reason)
		}
		if rv.tooMany || len(groups)*len(resources)*len(verbs) > MaxTriples-len(rv.triples) {
			rv.tooMany = true
			return
		}
		for _, g := range groups {
			for _, res := range resources {
				for _, v := range verbs {
					if t := (triple{g, res, v}); !seen[t] {
						seen[t] = true
						rv.triples = append(rv.triples, t)
					}
				}
			}
		}
	}
	groups, resources, verbs := unique(rule.APIGroups), unique(rule.Resources), unique(rule.Verbs)
	for _, d := range dangerousRequests {
		req := d.req
		if d.naming == anyName && len(rule.ResourceNames) > 0 {
			req.Name = rule.ResourceNames[0]
		}
		if !nameMatches(rule.ResourceNames, req.Name) {
			continue
		}
		// Each literal is asked alone: the rule covers req exactly when some
		// verb, some group and some resource of it do (with its names).
		found(d.reason,
			filter(groups, func(g string) bool { return groupMatches([]string{g}, req.APIGroup) }),
			filter(resources, func(r string) bool {
				probe := req
				if d.anySubresource {
					if _, sub, ok := strings.Cut(r, "/"); ok && sub != "" {
						probe.Subresource = sub
					}
				}
				return resourceMatches([]string{r}, probe.combinedResource(), probe.Subresource)
			}),
			filter(verbs, func(v string) bool { return verbMatches([]string{v}, req.Verb) }))
	}
	// scopedlist names a scope label; any name but this harness's own label
	// widens it. Every group and resource literal covers some request. A
	// rule that already grants list and watch of its resources without a
	// name gains nothing from scopedlist (it reads every object, labelled or
	// not), so there scopedlist adds no danger: grants are judged by what
	// they add, as the authorizer would answer.
	readsAll := verbMatches(verbs, "list") && verbMatches(verbs, "watch") && nameMatches(rule.ResourceNames, "")
	if other := slices.IndexFunc(rule.ResourceNames, func(n string) bool { return n != scopeLabel }); !readsAll && (scopeLabel == "" ||
		len(rule.ResourceNames) == 0 || other >= 0) {
		found(dangerScopedListWide, groups, resources,
			filter(verbs, func(v string) bool { return verbMatches([]string{v}, verbScopedList) }))
	}
	slices.SortStableFunc(rv.reasons, func(a, b string) int { return reasonOrder(a) - reasonOrder(b) })
	return rv
}

var reasonsInOrder = []string{dangerSecretsRead, dangerEscalateBind, dangerImpersonate, dangerPodAccess, dangerTokens,
	dangerNodeProxy, dangerCreatePods, dangerAdmission, dangerScopedListWide}

func reasonOrder(r string) int { return slices.Index(reasonsInOrder, r) }

func unique(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func filter(list []string, keep func(string) bool) []string {
	var out []string
	for _, s := range list {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}
