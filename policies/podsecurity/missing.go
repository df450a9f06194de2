// Rule 2: every field of the defaults table is set once the mutating webhook
// ran.
//
// Reads: spec.securityContext.{runAsUser, runAsGroup, fsGroup,
// fsGroupChangePolicy, runAsNonRoot, seccompProfile.type}; in every init,
// regular and ephemeral container securityContext.{runAsNonRoot,
// seccompProfile.type, allowPrivilegeEscalation, capabilities.drop};
// spec.os.name.
// Allows: each of these fields stated, with any value (an empty
// capabilities.drop list counts as stated; an empty seccompProfile.type does
// not). On Windows pods only runAsNonRoot is required, at both levels; where
// a user namespace runs uid 0, runAsNonRoot is not (usernamespace.go). A
// securityContext, seccompProfile or capabilities that is not an object is
// reported once at its own path.

package podsecurity

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// securityField is one field of the defaults table, as keys below a
// securityContext.
type securityField struct {
	keys []string
	// linuxOnly fields may not be set on Windows pods.
	linuxOnly bool
	// emptyIsUnset: "" counts as unset (seccompProfile.type, see
	// seccompTypeStated).
	emptyIsUnset bool
}

// podSecurityFields are the pod-level fields of the table, in table order.
var podSecurityFields = []securityField{
	{keys: []string{"runAsUser"}, linuxOnly: true},
	{keys: []string{"runAsGroup"}, linuxOnly: true},
	{keys: []string{"fsGroup"}, linuxOnly: true},
	{keys: []string{"fsGroupChangePolicy"}, linuxOnly: true},
	{keys: []string{"runAsNonRoot"}},
	{keys: []string{"seccompProfile", "type"}, linuxOnly: true, emptyIsUnset: true},
}

// containerSecurityFields are the container-level fields of the table.
var containerSecurityFields = []securityField{
	{keys: []string{"runAsNonRoot"}},
	{keys: []string{"seccompProfile", "type"}, linuxOnly: true, emptyIsUnset: true},
	{keys: []string{"allowPrivilegeEscalation"}, linuxOnly: true},
	{keys: []string{"capabilities", "drop"}, linuxOnly: true},
}

// checkPodDefaults reports the unset pod-level fields of the pod spec at
// specPath.
func checkPodDefaults(specPath *field.Path, spec map[string]any, linux bool, root rootInUserNamespace) []policies.Finding {
	return checkDefaults(specPath, spec, podSecurityFields, linux, root.pod)
}

// checkContainerDefaults reports the unset fields of one container.
func checkContainerDefaults(c workload.Container, linux bool, root rootInUserNamespace) []policies.Finding {
	return checkDefaults(c.Path, c.Obj, containerSecurityFields, linux, root.container(c.Obj))
}

// checkDefaults reports each field of table that is unset in the
// securityContext of holder (a pod spec or a container at holderPath), but
// runAsNonRoot only unless runAsNonRootOptional (usernamespace.go). Paths are
// built only for findings: this runs on every pod.
func checkDefaults(holderPath *field.Path, holder map[string]any, table []securityField, linux, runAsNonRootOptional bool) []policies.Finding {
	var sc map[string]any
	if stated(holder, "securityContext") {
		var ok bool
		if sc, ok = holder["securityContext"].(map[string]any); !ok {
			return []policies.Finding{policies.Denial(SecurityDefaultsMissing, holderPath.Child("securityContext"), "", msgNotObject)}
		}
	}
	var findings []policies.Finding
	for _, f := range table {
		if f.linuxOnly && !linux || runAsNonRootOptional && f.keys[0] == "runAsNonRoot" {
			continue
		}
		depth, notObject, unset := unsetField(sc, f)
		switch {
		case notObject:
			findings = append(findings, policies.Denial(SecurityDefaultsMissing, childPath(holderPath.Child("securityContext"), f.keys[:depth]), "", msgNotObject))
		case unset:
			findings = append(findings, policies.Denial(SecurityDefaultsMissing, childPath(holderPath.Child("securityContext"), f.keys), "", msgDefaultsMissing))
		}
	}
	return findings
}

// unsetField walks the keys of f below sc (which may be nil) and reports
// whether the field is unset: it or an object on the way is absent, or an
// object on the way is not an object (notObject, at f.keys[:depth]).
func unsetField(sc map[string]any, f securityField) (depth int, notObject, unset bool) {
	cur := sc
	for i, k := range f.keys {
		last := i == len(f.keys)-1
		if !stated(cur, k) || last && f.emptyIsUnset && isEmptyString(cur[k]) {
			return 0, false, true
		}
		if last {
			break
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return i + 1, true, true
		}
		cur = next
	}
	return 0, false, false
}

func childPath(base *field.Path, keys []string) *field.Path {
	for _, k := range keys {
		base = base.Child(k)
	}
	return base
}

func isEmptyString(v any) bool {
	s, ok := v.(string)
	return ok && s == ""
}
