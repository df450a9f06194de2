// This file checks a CustomResourceDefinitionSource (helmetica.io/v1). It
// reads metadata.name, metadata.namespace, spec.provides, spec.manages and
// spec.requires[*].dependencyGroup.name, and allows:
//
//   - at least one of provides, manages or a requires entry;
//   - provides: a DependencyGroup name whose scope label
//     requires.helmetica.io/<group> is a valid label key, provided by no
//     other source (State.SourcesProviding);
//   - manages: the grammar of ParseManages, its scope (alias, else group)
//     giving a valid scope label, managed by no other source
//     (State.SourcesManaging);
//   - requires[i].dependencyGroup.name: a DependencyGroup name with a valid
//     scope label; a group that does not exist (State.GroupExists) only
//     warns, because GitOps applies objects in any order.
//
// Messages name groups, scopes and sources but never repeat an invalid value.
package dependencygroup

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

var (
	pathProvides = field.NewPath("spec", "provides")
	pathManages  = field.NewPath("spec", "manages")
	pathRequires = field.NewPath("spec", "requires")
)

// SourceName identifies a source to State: metadata.name, or
// "<namespace>/<name>" when the object has a namespace.
func SourceName(obj map[string]any) string {
	name, _ := fields.String(obj, "metadata", "name")
	if ns, _ := fields.String(obj, "metadata", "namespace"); ns != "" {
		return ns + "/" + name
	}
	return name
}

// sourceReview carries what the checks of one source share: who it is, the
// view of the others, and whether that view has failed already (a review
// reports StateUnavailable once and looks up nothing after).
type sourceReview struct {
	self        string
	state       State
	unavailable bool
	findings    []policies.Finding
}

// ValidateSource checks a CustomResourceDefinitionSource against the other
// sources and groups in state. It returns the findings sorted.
func ValidateSource(obj map[string]any, state State) []policies.Finding {
	r := &sourceReview{self: SourceName(obj), state: state}
	provides, hasProvides := fields.String(obj, "spec", "provides")
	manages, hasManages := fields.String(obj, "spec", "manages")
	requires, _ := fields.Slice(obj, "spec", "requires")
	if !hasProvides && !hasManages && len(requires) == 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceEmpty, field.NewPath("spec"), "",
			"a CustomResourceDefinitionSource states at least one of provides, manages or requires"))
	}
	if hasProvides {
		r.checkProvides(provides)
	}
	if hasManages {
		r.checkManages(manages)
	}
	for i, item := range requires {
		r.checkRequires(pathRequires.Index(i).Child("dependencyGroup", "name"), item)
	}
	policies.Sort(r.findings)
	return r.findings
}

// checkGroupName reports a group name that is not a DependencyGroup name or
// whose scope label is not a label key; it returns whether name is usable.
func (r *sourceReview) checkGroupName(path *field.Path, name string) bool {
	if !ValidGroupName(name) {
		r.findings = append(r.findings, policies.Denial(CRDSourceGroupNameInvalid, path, name,
			"this is not a DependencyGroup name (a lowercase DNS-1123 subdomain)"))
		return false
	}
	return r.checkScopeLabel(path, name)
}

func (r *sourceReview) checkScopeLabel(path *field.Path, scope string) bool {
	if _, ok := ScopeLabel(scope); !ok {
		r.findings = append(r.findings, policies.Denial(CRDSourceScopeLabelInvalid, path, scope,
			"the implied scope label %s<name> is not a valid label key (its name part has at most 63 characters)",
			ScopeLabelPrefix))
		return false
	}
	return true
}

func (r *sourceReview) checkProvides(group string) {
	if !r.checkGroupName(pathProvides, group) || r.unavailable {
		return
	}
	sources, err := r.state.SourcesProviding(group)
	if err != nil {
		r.fail(pathProvides)
		return
	}
	if claimed := others(sources, r.self); len(claimed) > 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceProvidesClaimed, pathProvides, group,
			"DependencyGroup %s is already provided by %s %s; a group has one provider",
			group, policies.Plural(len(claimed), "source"), strings.Join(claimed, ", ")))
	}
}

func (r *sourceReview) checkManages(manages string) {
	group, alias, err := ParseManages(manages)
	if err != nil {
		r.findings = append(r.findings, policies.Denial(CRDSourceManagesInvalid, pathManages, manages, "%s", err.Error()))
		return
	}
	scope := group
	if alias != "" {
		scope = alias
	}
	if !r.checkScopeLabel(pathManages, scope) || r.unavailable {
		return
	}
	sources, err := r.state.SourcesManaging(scope)
	if err != nil {
		r.fail(pathManages)
		return
	}
	if claimed := others(sources, r.self); len(claimed) > 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceManagesClaimed, pathManages, scope,
			"scope %s (label %s%s) is already managed by %s %s; a scope has one manager",
			scope, ScopeLabelPrefix, scope, policies.Plural(len(claimed), "source"), strings.Join(claimed, ", ")))
	}
}

func (r *sourceReview) checkRequires(path *field.Path, item any) {
	entry, _ := item.(map[string]any)
	name, _ := fields.String(entry, "dependencyGroup", "name")
	if !r.checkGroupName(path, name) || r.unavailable {
		return
	}
	exists, err := r.state.GroupExists(name)
	if err != nil {
		r.fail(path)
		return
	}
	if !exists {
		r.findings = append(r.findings, policies.Warning(CRDSourceRequiresMissing, path, name,
			"DependencyGroup %s does not exist (yet); the source stays unusable until it is created", name))
	}
}

func (r *sourceReview) fail(path *field.Path) {
	r.unavailable = true
	r.findings = append(r.findings, stateUnavailable(path))
}
