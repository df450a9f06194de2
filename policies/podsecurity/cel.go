// The guard's allows as CEL, for the in-process layout
// (webhooks/render/inprocess.go): predicates over a pod spec that hold only
// where ValidatePod or ValidateTemplate reports nothing. They may be
// stricter than the evaluator (a Windows pod or one in a user namespace
// needs fewer defaults; an image's uid is not read either way), never
// looser: the soundness test of the in-process layout (webhooks
// TestInProcessNarrowingIsSound) runs both over the fixtures.
//
// Reads: runAsUser of the pod's and every container's securityContext; on
// a Pod also the fields of the defaults table (missing.go).

package podsecurity

import (
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// statedCEL is the CEL test that the field at keys below base (a CEL
// expression of an object) is stated: every object on the way and the
// field are present and not null, as stated reads them.
func statedCEL(base string, keys ...string) string {
	terms := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		terms = append(terms, fmt.Sprintf("has(%s.%s)", base, k))
		base += "." + k
		terms = append(terms, base+" != null")
	}
	return strings.Join(terms, " && ")
}

// containersCEL is the CEL list of every init, regular and ephemeral
// container of the pod spec spec.
func containersCEL(spec string) string {
	lists := make([]string, 0, len(workload.ContainerLists()))
	for _, l := range workload.ContainerLists() {
		lists = append(lists, fmt.Sprintf("(%s ? %s.%s : [])", statedCEL(spec, l), spec, l))
	}
	return "(" + strings.Join(lists, " + ") + ")"
}

// noRootCEL: no runAsUser of 0 is stated at the pod level of spec or in
// any of its containers, so rule 1 (runasroot.go) finds nothing whatever
// runAsNonRoot says.
func noRootCEL(spec string) string {
	user := func(holder string) string {
		return fmt.Sprintf("!(%s) || %s.securityContext.runAsUser != 0", statedCEL(holder, "securityContext", "runAsUser"), holder)
	}
	return fmt.Sprintf("(%s) && %s.all(c, %s)", user(spec), containersCEL(spec), user("c"))
}

// PodAllowsCEL is the predicate over the spec of a created Pod (spec, a CEL
// expression of a stated object) that ValidatePod reports nothing: no
// explicit runAsUser 0 anywhere, and every field of the defaults table
// stated at the pod level and in every container, with a seccompProfile
// type that is not empty.
func PodAllowsCEL(spec string) string {
	all := func(holder string, table []securityField) string {
		var terms []string
		for _, f := range table {
			terms = append(terms, statedCEL(holder, append([]string{"securityContext"}, f.keys...)...))
			if f.emptyIsUnset {
				terms = append(terms, fmt.Sprintf("%s.securityContext.%s != ''", holder, strings.Join(f.keys, ".")))
			}
		}
		return strings.Join(terms, " && ")
	}
	return fmt.Sprintf("%s && (%s) && %s.all(c, %s)", noRootCEL(spec), all(spec, podSecurityFields), containersCEL(spec), all("c", containerSecurityFields))
}

// TemplateAllowsCEL is the predicate over a workload's pod template spec
// that ValidateTemplate with d reports nothing: no explicit runAsUser 0
// anywhere, and the defaults do not fill in a pod-level runAsUser of 0
// (d's is not 0, or the template states its own). Rule 1 finds nothing
// then, whatever runAsNonRoot the pods end up with.
func TemplateAllowsCEL(spec string, d Defaults) string {
	if d.RunAsUser != 0 {
		return noRootCEL(spec)
	}
	return fmt.Sprintf("%s && %s", noRootCEL(spec), statedCEL(spec, "securityContext", "runAsUser"))
}
