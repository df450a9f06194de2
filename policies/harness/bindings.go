// This file reviews the roles that a harness's bindings reference. It reads
// spec.clusterRoleBindings[*] (roleRefs bound cluster-wide) and
// spec.roleBindings.roleRefs[*] (roleRefs bound in every namespace that
// carries the scope label), each {apiGroup, kind, name}, and allows:
//
//   - a roleRef with apiGroup rbac.authorization.k8s.io, kind ClusterRole
//     (or Role, in roleBindings only) and a role name; anything else is
//     HarnessRoleRefInvalid;
//   - a referenced role that exists (State) and whose rules cover no
//     dangerous request (dangerous.go), unless acknowledged like a rule of
//     spec.clusterRoles (acknowledgements.go).
//
// Resolution:
//
//   - ClusterRole: the stored rules. A ClusterRole with an aggregationRule is
//     reviewed with the rules of every ClusterRole its selectors match now,
//     recursively, as well as its stored rules: that is what the aggregation
//     controller writes into it, and an aggregated role whose rules are not
//     filled yet (a role created a moment ago, or a control plane without
//     kube-controller-manager) is reviewed by what it is about to grant.
//   - Role: a roleRef to a Role is bound in each scoped namespace to the Role
//     of that name there, so every stored Role of that name, in any
//     namespace, is reviewed.
//   - A role that does not exist denies (HarnessRoleNotFound): it may be
//     created later with any rules. A role stored in a shape the review
//     cannot read denies (HarnessRoleUnreadable), and a view that cannot
//     answer denies (StateUnavailable). None of these ratchet.
//
// The review sees the roles as they are at admission. A role edited later,
// a ClusterRole labelled for aggregation later, or a Role created later in a
// namespace that gains the scope label is not reviewed again: admission of
// the harness cannot close that (docs/harness-dependencies.md, "Edges").
//
// Messages name the kind of role, rule indexes and the names of the stored
// roles the dangerous rules come from, never the referenced name as written
// in the harness (the field path identifies it).
package harness

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// Kinds a roleRef names (upstream, rbac.authorization.k8s.io/v1).
const (
	kindClusterRole = "ClusterRole"
	kindRole        = "Role"
)

var (
	pathClusterRoleBindings = field.NewPath("spec", "clusterRoleBindings")
	pathRoleBindings        = field.NewPath("spec", "roleBindings")
	pathRoleRefs            = pathRoleBindings.Child("roleRefs")
)

type roleRef struct{ kind, name string }

// boundRef is one valid roleRef of the harness.
type boundRef struct {
	path      *field.Path
	ref       roleRef
	clusterly bool // bound by spec.clusterRoleBindings
}

// originRule is one rule of a resolved role, with where it is stored.
type originRule struct {
	origin string // "" for the referenced role itself
	index  int
	rule   Rule
}

// resolution is a referenced role as the review reads it.
type resolution struct {
	rules      []originRule
	notFound   bool
	unreadable bool
	err        error
}

// boundGrants returns the bindings whose roles have dangerous rules, in the
// order of the harness (cluster-wide bindings first).
func (r *review) boundGrants(obj map[string]any) []dangerousGrant {
	refs := r.roleRefs(obj)
	resolved := map[roleRef]resolution{}
	var out []dangerousGrant
	for _, b := range refs {
		if r.unavailable {
			break
		}
		res, ok := resolved[b.ref]
		if !ok {
			res = r.resolve(b.ref)
			resolved[b.ref] = res
		}
		switch {
		case res.err != nil:
			r.fail(b.path, viewRoles)
			continue
		case res.notFound:
			r.findings = append(r.findings, policies.Unratcheted(HarnessRoleNotFound, b.path,
				"the %s this binding references does not exist; binding it would grant whatever rules it is created with "+
					"later, so it must exist (and be reviewed) before the harness binds it", b.ref.kind))
			continue
		case res.unreadable:
			r.findings = append(r.findings, policies.Unratcheted(HarnessRoleUnreadable, b.path,
				"the %s this binding references, or a cluster role it aggregates, is stored in a shape the review "+
					"cannot read, so its grants cannot be reviewed", b.ref.kind))
			continue
		}
		if d, ok := r.reviewBound(b, res.rules); ok {
			out = append(out, d)
		}
	}
	return out
}

// reviewBound reviews the rules of one binding's role as one grant.
func (r *review) reviewBound(b boundRef, rules []originRule) (dangerousGrant, bool) {
	d := dangerousGrant{path: b.path}
	seen := map[triple]bool{}
	var where, evidence []string
	for _, o := range rules {
		rv := reviewRule(o.rule, r.scopeLabel)
		if len(rv.reasons) == 0 {
			continue
		}
		for _, reason := range rv.reasons {
			if !slices.Contains(d.reasons, reason) {
				d.reasons = append(d.reasons, reason)
			}
		}
		d.tooMany = d.tooMany || rv.tooMany
		for _, t := range rv.triples {
			if !seen[t] {
				seen[t] = true
				d.triples = append(d.triples, t)
			}
		}
		if len(d.triples) > MaxTriples {
			d.tooMany = true
		}
		at := fmt.Sprintf("its rule %d", o.index)
		if o.origin != "" {
			at = fmt.Sprintf("rule %d of %s", o.index, o.origin)
		}
		where = append(where, at)
		evidence = append(evidence, o.origin+"#"+ruleEvidence(o.rule, r.scopeLabel))
	}
	if len(d.reasons) == 0 {
		return dangerousGrant{}, false
	}
	slices.SortStableFunc(d.reasons, func(a, b string) int { return reasonOrder(a) - reasonOrder(b) })
	scope := "this cluster-wide binding"
	if !b.clusterly {
		scope = "this binding in every scoped namespace"
	}
	const maxWhere = 5
	listed := strings.Join(where[:min(len(where), maxWhere)], ", ")
	if len(where) > maxWhere {
		listed += fmt.Sprintf(" and %d more", len(where)-maxWhere)
	}
	d.what = fmt.Sprintf("the %s %s references (through %s)", b.ref.kind, scope, listed)
	d.evidence = b.ref.kind + "/" + b.ref.name + "|" + strings.Join(evidence, "\n")
	return d, true
}

// roleRefs reads the bindings and reports the entries the review cannot
// resolve.
func (r *review) roleRefs(obj map[string]any) []boundRef {
	spec, _ := fields.Map(obj, "spec")
	var out []boundRef
	read := func(path *field.Path, list any, clusterly bool) {
		items, ok := list.([]any)
		if !ok {
			r.invalidRef(path, "", "a list of roleRefs {apiGroup, kind, name}")
			return
		}
		for i, item := range items {
			if ref, ok := r.readRef(path.Index(i), item, clusterly); ok {
				out = append(out, boundRef{path: path.Index(i), ref: ref, clusterly: clusterly})
			}
		}
	}
	if v := spec["clusterRoleBindings"]; v != nil {
		read(pathClusterRoleBindings, v, true)
	}
	if v := spec["roleBindings"]; v != nil {
		m, ok := v.(map[string]any)
		switch {
		case !ok:
			r.invalidRef(pathRoleBindings, "", "roleBindings is an object holding roleRefs")
		case m["roleRefs"] != nil:
			read(pathRoleRefs, m["roleRefs"], false)
		}
	}
	return out
}

func (r *review) readRef(path *field.Path, item any, clusterly bool) (roleRef, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		r.invalidRef(path, "", "a roleRef is an object {apiGroup, kind, name}")
		return roleRef{}, false
	}
	group, _ := m["apiGroup"].(string)
	kind, _ := m["kind"].(string)
	name, _ := m["name"].(string)
	valid := true
	if group != groupRBAC {
		valid = false
		r.invalidRef(path.Child("apiGroup"), group, "apiGroup is %s", groupRBAC)
	}
	switch {
	case kind == kindClusterRole, kind == kindRole && !clusterly:
	case clusterly:
		valid = false
		r.invalidRef(path.Child("kind"), kind, "a cluster-wide binding references a %s", kindClusterRole)
	default:
		valid = false
		r.invalidRef(path.Child("kind"), kind, "kind is %s or %s", kindClusterRole, kindRole)
	}
	if !validRoleName(name) {
		valid = false
		r.invalidRef(path.Child("name"), name, "name is the name of a role (not empty, no \"/\" or \"%%\", not \".\" or \"..\")")
	}
	return roleRef{kind: kind, name: name}, valid
}

// validRoleName is the API server's check of RBAC object names
// (path.IsValidPathSegmentName).
func validRoleName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/%")
}

func (r *review) invalidRef(path *field.Path, evidence, format string, args ...any) {
	r.findings = append(r.findings, policies.Denial(HarnessRoleRefInvalid, path, evidence,
		format+"; the review cannot resolve this binding", args...))
}

// resolve reads the rules a roleRef binds.
func (r *review) resolve(ref roleRef) resolution {
	if ref.kind == kindRole {
		roles, err := r.state.RolesNamed(ref.name)
		if err != nil {
			return resolution{err: err}
		}
		if len(roles) == 0 {
			return resolution{notFound: true}
		}
		roles = slices.Clone(roles)
		slices.SortFunc(roles, func(a, b map[string]any) int { return strings.Compare(namespaceOf(a), namespaceOf(b)) })
		var res resolution
		for _, role := range roles {
			rules, ok := storedRules(role, "Role "+namespaceOf(role)+"/"+nameOf(role))
			if !ok {
				return resolution{unreadable: true}
			}
			res.rules = append(res.rules, rules...)
		}
		return res
	}
	roles, err := r.state.ClusterRolesNamed(ref.name)
	if err != nil {
		return resolution{err: err}
	}
	if len(roles) == 0 {
		return resolution{notFound: true}
	}
	a := aggregation{state: r.state, visited: map[string]bool{}}
	res := resolution{}
	res.rules, res.unreadable, res.err = a.rulesOf(roles[0], "")
	return res
}

// aggregation collects the rules of a ClusterRole and of the ClusterRoles
// its aggregationRule selects, each role once.
type aggregation struct {
	state   State
	all     []map[string]any // every ClusterRole, sorted by name, read once
	read    bool
	visited map[string]bool
}

func (a *aggregation) rulesOf(role map[string]any, origin string) (rules []originRule, unreadable bool, err error) {
	a.visited[nameOf(role)] = true
	rules, ok := storedRules(role, origin)
	if !ok {
		return nil, true, nil
	}
	agg, present := role["aggregationRule"]
	if !present || agg == nil {
		return rules, false, nil
	}
	selectors, ok := aggregationSelectors(agg)
	if !ok {
		return nil, true, nil
	}
	if !a.read {
		all, err := a.state.ClusterRoles()
		if err != nil {
			return nil, false, err
		}
		a.all = slices.Clone(all)
		slices.SortFunc(a.all, func(x, y map[string]any) int { return strings.Compare(nameOf(x), nameOf(y)) })
		a.read = true
	}
	for _, other := range a.all {
		if a.visited[nameOf(other)] || !slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(labelsOf(other)) }) {
			continue
		}
		more, unreadable, err := a.rulesOf(other, "ClusterRole "+nameOf(other))
		if unreadable || err != nil {
			return nil, unreadable, err
		}
		rules = append(rules, more...)
	}
	return rules, false, nil
}

// storedRules reads the rules of a stored role.
func storedRules(role map[string]any, origin string) ([]originRule, bool) {
	v := role["rules"]
	if v == nil {
		return nil, true
	}
	items, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]originRule, 0, len(items))
	for i, item := range items {
		rule, unreadable, ok := parseRule(item)
		if !ok || len(unreadable) > 0 {
			return nil, false
		}
		out = append(out, originRule{origin: origin, index: i, rule: rule})
	}
	return out, true
}

// aggregationSelectors reads aggregationRule.clusterRoleSelectors as the
// aggregation controller does (metav1.LabelSelectorAsSelector).
func aggregationSelectors(agg any) ([]labels.Selector, bool) {
	m, ok := agg.(map[string]any)
	if !ok {
		return nil, false
	}
	var rule struct {
		ClusterRoleSelectors []metav1.LabelSelector `json:"clusterRoleSelectors"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &rule); err != nil {
		return nil, false
	}
	out := make([]labels.Selector, 0, len(rule.ClusterRoleSelectors))
	for i := range rule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&rule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func nameOf(obj map[string]any) string {
	s, _ := fields.String(obj, "metadata", "name")
	return s
}

func namespaceOf(obj map[string]any) string {
	s, _ := fields.String(obj, "metadata", "namespace")
	return s
}

func labelsOf(obj map[string]any) labels.Set {
	m, _ := fields.Map(obj, "metadata", "labels")
	out := labels.Set{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
