// This file reviews the rules written into a harness. It reads
// spec.clusterRoles.rules[*] (spec.clusterRoles is one object holding rules,
// each shaped like rbacv1.PolicyRule: verbs, apiGroups, resources,
// resourceNames) and finds dangerous a rule that covers a dangerous request
// of the fixed list (dangerous.go), read with the RBAC authorizer's matching
// (rbac.go). The roles that bindings reference are reviewed the same way
// (bindings.go). Whether a dangerous grant denies or warns is decided with
// the acknowledgements (acknowledgements.go). Messages name rule indexes,
// role names and RBAC vocabulary from this package, never a value read from
// a rule.
package harness

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

var (
	pathClusterRoles = field.NewPath("spec", "clusterRoles")
	pathRules        = pathClusterRoles.Child("rules")
)

// dangerousGrant is one grant the review flags: a rule of spec.clusterRoles,
// or a binding whose role has dangerous rules.
type dangerousGrant struct {
	path *field.Path
	// what names the grant at the start of a message.
	what     string
	reasons  []string
	triples  []triple // the combinations that make it dangerous, unique
	tooMany  bool     // more than MaxTriples combinations: cannot be acknowledged
	evidence string
}

// dangerousRules returns the dangerous rules of spec.clusterRoles in rule
// order. It reports a clusterRoles, rules or rule of the wrong shape: grants
// the review cannot read must not pass.
func (r *review) dangerousRules(obj map[string]any) []dangerousGrant {
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
	var out []dangerousGrant
	for j, item := range rules {
		rule, unreadable, ok := parseRule(item)
		if !ok {
			r.malformed(pathRules.Index(j), "a rule is an RBAC policy rule object")
			continue
		}
		if len(unreadable) > 0 {
			for _, key := range unreadable {
				r.malformed(pathRules.Index(j).Child(key), key+" is a list of strings")
			}
			continue
		}
		rv := reviewRule(rule, r.scopeLabel)
		if len(rv.reasons) == 0 {
			continue
		}
		out = append(out, dangerousGrant{
			path: pathRules.Index(j), what: "this cluster-wide rule",
			reasons: rv.reasons, triples: rv.triples, tooMany: rv.tooMany,
			evidence: ruleEvidence(rule, r.scopeLabel),
		})
	}
	return out
}

func (r *review) malformed(path *field.Path, msg string) {
	r.findings = append(r.findings, policies.Denial(HarnessClusterRolesInvalid, path, "",
		"%s; the review cannot read these grants", msg))
}

// parseRule reads an RBAC policy rule object. ok is false when item is not
// an object; unreadable lists the keys of list fields that are not lists.
func parseRule(item any) (rule Rule, unreadable []string, ok bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return Rule{}, nil, false
	}
	lists := make([][]string, len(ruleLists))
	for i, key := range ruleLists {
		list, ok := stringList(m, key)
		if !ok {
			unreadable = append(unreadable, key)
		}
		lists[i] = list
	}
	return Rule{Verbs: lists[0], APIGroups: lists[1], Resources: lists[2], ResourceNames: lists[3]}, unreadable, true
}

// ruleLists are the list fields of a rule the review reads, in the order
// unreadable ones are reported.
var ruleLists = []string{"verbs", "apiGroups", "resources", "resourceNames"}

// ruleEvidence fingerprints a rule's lists and the scope label, so an
// unchanged rule is ratcheted on UPDATE.
func ruleEvidence(rule Rule, scopeLabel string) string {
	return strings.Join([]string{
		strings.Join(rule.Verbs, ","), strings.Join(rule.APIGroups, ","), strings.Join(rule.Resources, ","),
		strings.Join(rule.ResourceNames, ","), scopeLabel,
	}, "|")
}

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
