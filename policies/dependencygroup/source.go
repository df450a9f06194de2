// This file checks a CustomResourceDefinitionSource (helmetica.io/v1) in
// either shape (refs.go). It reads metadata.name, metadata.namespace,
// metadata.deletionTimestamp, spec.reference, and the dependency references
// of spec.provides, spec.manages and spec.requires, and allows:
//
//   - at least one of provides, manages, a requires entry or a reference
//     (helmetica's sources name a chart and may declare no dependency);
//   - every group name: a DependencyGroup name whose scope label
//     requires.helmetica.io/<name> is a valid label key;
//   - an alias ("as", or the string shape's "<group> as <alias>"): a DNS-1123 label
//     whose scope label is a valid label key; none on provides (helmetica's
//     schema rejects it: a group's CRDs are the same for every consumer);
//   - provides: a group provided by no other source (State.SourcesProviding),
//     whatever its namespace;
//   - manages: a scope (alias, else group) managed by no other source
//     (State.SourcesManaging), whatever its namespace;
//   - requires: a group that does not exist (State.GroupExists) only warns,
//     because GitOps applies objects in any order.
//
// A source being deleted claims nothing: its provides and manages are not
// looked up. Messages name groups, scopes and sources but never repeat an
// invalid value.
package dependencygroup

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

var pathManages = field.NewPath("spec", "manages")

// sourceReview carries what the checks of one source share: who it is, the
// view of the others, and whether that view has failed already (a review
// reports StateUnavailable once and looks up nothing after).
type sourceReview struct {
	self        string
	claims      bool
	state       State
	unavailable bool
	findings    []policies.Finding
}

// ValidateSource checks a CustomResourceDefinitionSource against the other
// sources and groups in state. It returns the findings sorted.
func ValidateSource(obj map[string]any, state State) []policies.Finding {
	r := &sourceReview{self: ObjectKey(obj), claims: !Deleting(obj), state: state}
	provides, hasProvides, _ := sourceRefs(obj, "provides")
	manages, hasManages, managesErr := sourceRefs(obj, "manages")
	requires, hasRequires, _ := sourceRefs(obj, "requires")
	_, hasReference := fields.Map(obj, "spec", "reference")
	if !hasProvides && !hasManages && !hasRequires && !hasReference {
		r.findings = append(r.findings, policies.Denial(CRDSourceEmpty, field.NewPath("spec"), "",
			"a CustomResourceDefinitionSource states a reference or at least one of provides, manages or requires"))
	}
	for _, ref := range provides {
		r.checkProvides(ref)
	}
	if managesErr != nil {
		manages, _ := fields.String(obj, "spec", "manages")
		r.findings = append(r.findings, policies.Denial(CRDSourceManagesInvalid, pathManages, manages, "%s", managesErr.Error()))
	}
	for _, ref := range manages {
		r.checkManages(ref)
	}
	for _, ref := range requires {
		r.checkRequires(ref)
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

// checkScope checks the group and alias of a reference that names a scope
// (manages, requires) and returns the scope, or "" when it is unusable. A
// manages string was checked by ParseManages already.
func (r *sourceReview) checkScope(ref sourceRef) string {
	if ref.seed {
		if !r.checkScopeLabel(ref.namePath, ref.scope()) {
			return ""
		}
		return ref.scope()
	}
	if ref.alias == "" && !ref.aliasNotString {
		// No alias (helmetica reads "as: ''" as none): the group is the scope.
		if !r.checkGroupName(ref.namePath, ref.name) {
			return ""
		}
		return ref.name
	}
	usable := true
	if !ValidGroupName(ref.name) {
		r.findings = append(r.findings, policies.Denial(CRDSourceGroupNameInvalid, ref.namePath, ref.name,
			"this is not a DependencyGroup name (a lowercase DNS-1123 subdomain)"))
		usable = false
	}
	if ref.aliasNotString || len(validation.IsDNS1123Label(ref.alias)) != 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceAliasInvalid, ref.aliasPath, ref.alias,
			"an alias names a scope: a lowercase DNS-1123 label"))
		return ""
	}
	if !r.checkScopeLabel(ref.aliasPath, ref.alias) || !usable {
		return ""
	}
	return ref.alias
}

func (r *sourceReview) checkProvides(ref sourceRef) {
	if ref.hasAlias {
		r.findings = append(r.findings, policies.Denial(CRDSourceProvidesAliased, ref.aliasPath, ref.alias,
			"provides takes no alias: the CRDs of a group are the same for every consumer"))
	}
	if !r.checkGroupName(ref.namePath, ref.name) || !r.claims || r.unavailable {
		return
	}
	sources, err := r.state.SourcesProviding(ref.name)
	if err != nil {
		r.fail(ref.namePath)
		return
	}
	if claimed := others(sources, r.self); len(claimed) > 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceProvidesClaimed, ref.namePath, ref.name,
			"DependencyGroup %s is already provided by %s %s; a group has one provider in the cluster",
			ref.name, policies.Plural(len(claimed), "source"), strings.Join(claimed, ", ")))
	}
}

func (r *sourceReview) checkManages(ref sourceRef) {
	scope := r.checkScope(ref)
	if scope == "" || !r.claims || r.unavailable {
		return
	}
	path := ref.namePath
	if ref.alias != "" {
		path = ref.aliasPath
	}
	sources, err := r.state.SourcesManaging(scope)
	if err != nil {
		r.fail(path)
		return
	}
	if claimed := others(sources, r.self); len(claimed) > 0 {
		r.findings = append(r.findings, policies.Denial(CRDSourceManagesClaimed, path, scope,
			"scope %s (label %s%s) is already managed by %s %s; a scope has one manager in the cluster",
			scope, ScopeLabelPrefix, scope, policies.Plural(len(claimed), "source"), strings.Join(claimed, ", ")))
	}
}

func (r *sourceReview) checkRequires(ref sourceRef) {
	if r.checkScope(ref) == "" || r.unavailable {
		return
	}
	exists, err := r.state.GroupExists(ref.name)
	if err != nil {
		r.fail(ref.namePath)
		return
	}
	if !exists {
		r.findings = append(r.findings, policies.Warning(CRDSourceRequiresMissing, ref.namePath, ref.name,
			"DependencyGroup %s does not exist (yet); the source stays unusable until it is created", ref.name))
	}
}

func (r *sourceReview) fail(path *field.Path) {
	r.unavailable = true
	r.findings = append(r.findings, stateUnavailable(path))
}
