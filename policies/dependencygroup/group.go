// This file checks a DependencyGroup (helmetica.io/v1, cluster-scoped). It
// reads metadata.name, metadata.deletionTimestamp, spec.crds[*].name and spec.harnessRef{kind, name},
// and allows:
//
//   - spec.crds: at least one entry;
//   - crds[i].name: <plural>.<group>, a lowercase DNS-1123 subdomain with
//     at least one dot, listed once in the group and by no other group
//     (State.GroupsListingCRD, the object's own key excluded; a group
//     being deleted claims nothing and is not looked up);
//   - spec.harnessRef: absent, or kind OperatorHarness (or unset) with a
//     non-empty name.
//
// Messages name CRDs and groups (names are not secret) but never repeat an
// invalid value.
package dependencygroup

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// kindOperatorHarness is the only kind a harnessRef may name (upstream).
const kindOperatorHarness = "OperatorHarness"

var (
	pathCRDs       = field.NewPath("spec", "crds")
	pathHarnessRef = field.NewPath("spec", "harnessRef")
)

// ValidateGroup checks a DependencyGroup against the other groups in state.
// It returns the findings sorted.
func ValidateGroup(obj map[string]any, state State) []policies.Finding {
	self := ObjectKey(obj)
	if Deleting(obj) {
		// It claims nothing: its CRDs are free for a successor.
		state = nil
	}
	findings := checkCRDs(obj, self, state)
	findings = append(findings, checkHarnessRef(obj)...)
	policies.Sort(findings)
	return findings
}

// checkCRDs checks spec.crds. Paths are built only for findings and for the
// lookups of valid names.
func checkCRDs(obj map[string]any, self string, state State) []policies.Finding {
	crds, _ := fields.Slice(obj, "spec", "crds")
	if len(crds) == 0 {
		return []policies.Finding{policies.Denial(DependencyGroupEmpty, pathCRDs, "",
			"a DependencyGroup lists at least one CRD")}
	}
	var findings []policies.Finding
	firstIndex := make(map[string]int, len(crds))
	unavailable := false
	for i, item := range crds {
		entry, _ := item.(map[string]any)
		name, _ := fields.String(entry, "name")
		if !ValidCRDName(name) {
			findings = append(findings, policies.Denial(DependencyGroupCRDNameInvalid, pathCRDs.Index(i).Child("name"), name,
				"a CRD name is <plural>.<group>: a lowercase DNS-1123 subdomain with at least one dot"))
			continue
		}
		if first, dup := firstIndex[name]; dup {
			findings = append(findings, policies.Denial(DependencyGroupCRDDuplicate, pathCRDs.Index(i).Child("name"), name,
				"CRD %s is listed twice in this group, first at %s", name, pathCRDs.Index(first).Child("name")))
			continue
		}
		firstIndex[name] = i
		if unavailable || state == nil {
			continue
		}
		groups, err := state.GroupsListingCRD(name)
		if err != nil {
			unavailable = true
			findings = append(findings, stateUnavailable(pathCRDs.Index(i).Child("name")))
			continue
		}
		if claimed := others(groups, self); len(claimed) > 0 {
			// Evidence is the CRD name alone: on UPDATE of a group whose
			// entry did not change, a clash is ratcheted to a warning, so
			// the older group of a raced pair can still be edited; the
			// reconciler rejects the younger one (clash.go).
			findings = append(findings, policies.Denial(DependencyGroupCRDClaimed, pathCRDs.Index(i).Child("name"), name,
				"CRD %s is already listed by %s %s; a CRD belongs to one DependencyGroup",
				name, policies.Plural(len(claimed), "DependencyGroup"), strings.Join(claimed, ", ")))
		}
	}
	return findings
}

// ValidCRDName reports whether name is <plural>.<group>: a lowercase
// DNS-1123 subdomain with at least one dot.
func ValidCRDName(name string) bool {
	return strings.Contains(name, ".") && len(validation.IsDNS1123Subdomain(name)) == 0
}

// checkHarnessRef checks spec.harnessRef when it is an object.
func checkHarnessRef(obj map[string]any) []policies.Finding {
	ref, ok := fields.Map(obj, "spec", "harnessRef")
	if !ok {
		return nil
	}
	var findings []policies.Finding
	if kind, set := ref["kind"]; set && kind != nil && kind != kindOperatorHarness {
		s, _ := kind.(string)
		findings = append(findings, policies.Denial(DependencyGroupHarnessRefInvalid, pathHarnessRef.Child("kind"), s,
			"a harnessRef refers to an %s", kindOperatorHarness))
	}
	if name, _ := fields.String(ref, "name"); name == "" {
		findings = append(findings, policies.Denial(DependencyGroupHarnessRefInvalid, pathHarnessRef.Child("name"), "",
			"a harnessRef names the %s", kindOperatorHarness))
	}
	return findings
}
