// This file reviews the cluster-wide grants of a harness. It reads
// spec.clusterRoles.rules[*] (spec.clusterRoles is one object holding rules,
// each shaped like rbacv1.PolicyRule: verbs, apiGroups, resources,
// resourceNames), and finds dangerous a rule that grants:
//
//   - the verb escalate, bind or impersonate, or the verb "*";
//   - the resource "*" (also "*/<subresource>");
//   - get, list or watch on secrets in the core group ("" or "*") without
//     resourceNames;
//   - the custom verb scopedlist with resourceNames other than exactly this
//     harness's scopeToLabel (none means every label, so every other
//     harness's scope).
//
// For each dangerous rule it also lists the (apiGroup, resource, verb)
// triples of the rule that carry a reason: those are what an
// acknowledgement must list. scopedlist with the harness's own scope label
// in resourceNames is the safe way to list cluster-wide and is allowed, on
// secrets too. Whether a dangerous rule denies or warns is decided with the
// acknowledgements (acknowledgements.go). Messages name rule indexes and
// RBAC vocabulary from this file, never a value read from the rule.
package harness

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// RBAC vocabulary (upstream, Kubernetes; scopedlist: seed 001).
const (
	verbAll         = "*"
	verbEscalate    = "escalate"
	verbBind        = "bind"
	verbImpersonate = "impersonate"
	verbScopedList  = "scopedlist"
	resourceAll     = "*"
	resourceSecrets = "secrets"
	groupCore       = ""
	groupAll        = "*"
)

var (
	pathClusterRoles = field.NewPath("spec", "clusterRoles")
	pathRules        = pathClusterRoles.Child("rules")
)

// Reasons a rule is dangerous, in the order messages list them.
const (
	dangerVerbAll        = `the verb "*"`
	dangerEscalate       = "the verb escalate"
	dangerBind           = "the verb bind"
	dangerImpersonate    = "the verb impersonate"
	dangerResourceAll    = `the resource "*"`
	dangerSecretsRead    = "get, list or watch on secrets without resourceNames"
	dangerScopedListWide = "scopedlist beyond this harness's scopeToLabel (resourceNames must be exactly that label)"
)

// triple is one (apiGroup, resource, verb) a rule grants.
type triple struct{ group, resource, verb string }

// dangerousRule is one rule of spec.clusterRoles.rules that the review flags.
type dangerousRule struct {
	rule     int
	reasons  []string
	triples  []triple // the combinations that make it dangerous, unique, in rule order
	evidence string
}

func (d dangerousRule) path() *field.Path { return pathRules.Index(d.rule) }

// dangerousRules returns the dangerous rules in rule order. It reports a
// clusterRoles, rules or rule of the wrong shape: grants the review cannot
// read must not pass.
func (r *review) dangerousRules(obj map[string]any) []dangerousRule {
	spec, _ := fields.Map(obj, "spec")
	if spec["clusterRoles"] == nil {
		return nil
	}
	roles, ok := spec["clusterRoles"].(map[string]any)
	if !ok {
		r.malformed(pathClusterRoles, "clusterRoles is an object holding the rules granted cluster-wide")
		return nil
	}
	if roles["rules"] == nil {
		return nil
	}
	rules, ok := roles["rules"].([]any)
	if !ok {
		r.malformed(pathRules, "rules is a list of RBAC policy rules")
		return nil
	}
	var out []dangerousRule
	for j, item := range rules {
		rule, ok := item.(map[string]any)
		if !ok {
			r.malformed(pathRules.Index(j), "a rule is an RBAC policy rule object")
			continue
		}
		d, unreadable := ruleDangers(rule, r.scopeLabel)
		if len(unreadable) > 0 {
			for _, key := range unreadable {
				r.malformed(pathRules.Index(j).Child(key), key+" is a list of strings")
			}
			continue
		}
		if len(d.reasons) > 0 {
			d.rule = j
			out = append(out, d)
		}
	}
	return out
}

func (r *review) malformed(path *field.Path, msg string) {
	r.findings = append(r.findings, policies.Denial(HarnessClusterRolesInvalid, path, "",
		"%s; the review cannot read these grants", msg))
}

// ruleDangers returns why rule is dangerous (no reasons when it is not),
// the (apiGroup, resource, verb) triples that make it so, and its evidence.
// It returns the keys of the list fields that are not lists, if any.
func ruleDangers(rule map[string]any, scopeLabel string) (d dangerousRule, unreadable []string) {
	lists := map[string][]string{}
	for _, key := range ruleLists {
		list, ok := stringList(rule, key)
		if !ok {
			unreadable = append(unreadable, key)
		}
		lists[key] = list
	}
	if len(unreadable) > 0 {
		return dangerousRule{}, unreadable
	}
	verbs, groups, resources, names := lists["verbs"], lists["apiGroups"], lists["resources"], lists["resourceNames"]

	// Each reason is decided on the lists as a whole, as before; its
	// triples are the combinations of the rule that carry it. A reason may
	// have no triple (a dangerous verb with no apiGroups or resources, as in
	// a nonResourceURLs rule): then no acknowledgement can list it and the
	// rule cannot be acknowledged.
	seen := map[triple]bool{}
	add := func(reason string, present bool, match func(t triple) bool) {
		if !present {
			return
		}
		d.reasons = append(d.reasons, reason)
		for _, g := range groups {
			for _, res := range resources {
				for _, v := range verbs {
					if t := (triple{g, res, v}); match(t) && !seen[t] {
						seen[t] = true
						d.triples = append(d.triples, t)
					}
				}
			}
		}
	}
	has := func(list []string, v string) bool { return slices.Contains(list, v) }
	verb := func(v string) func(triple) bool { return func(t triple) bool { return t.verb == v } }
	isResourceAll := func(res string) bool { return res == resourceAll || strings.HasPrefix(res, resourceAll+"/") }
	isRead := func(v string) bool { return v == "get" || v == "list" || v == "watch" }
	isCore := func(g string) bool { return g == groupCore || g == groupAll }

	add(dangerVerbAll, has(verbs, verbAll), verb(verbAll))
	add(dangerEscalate, has(verbs, verbEscalate), verb(verbEscalate))
	add(dangerBind, has(verbs, verbBind), verb(verbBind))
	add(dangerImpersonate, has(verbs, verbImpersonate), verb(verbImpersonate))
	add(dangerResourceAll, slices.ContainsFunc(resources, isResourceAll), func(t triple) bool { return isResourceAll(t.resource) })
	add(dangerSecretsRead,
		slices.ContainsFunc(verbs, isRead) && has(resources, resourceSecrets) && slices.ContainsFunc(groups, isCore) && len(names) == 0,
		func(t triple) bool { return isCore(t.group) && t.resource == resourceSecrets && isRead(t.verb) })
	add(dangerScopedListWide, has(verbs, verbScopedList) && (scopeLabel == "" || len(names) == 0 ||
		slices.ContainsFunc(names, func(n string) bool { return n != scopeLabel })), verb(verbScopedList))
	if len(d.reasons) == 0 {
		return dangerousRule{}, nil
	}
	d.evidence = strings.Join([]string{
		strings.Join(verbs, ","), strings.Join(groups, ","), strings.Join(resources, ","), strings.Join(names, ","), scopeLabel,
	}, "|")
	return d, nil
}

// ruleLists are the list fields of a rule the review reads, in the order
// unreadable ones are reported.
var ruleLists = []string{"verbs", "apiGroups", "resources", "resourceNames"}

// stringList reads a list of strings at key; absent or null is an empty
// list, items that are not strings are skipped (the API server rejects
// them), and a value that is not a list is unreadable.
func stringList(m map[string]any, key string) ([]string, bool) {
	v := m[key]
	if v == nil {
		return nil, true
	}
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}
