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
// stated (StatesDefaultsCEL).
func PodAllowsCEL(spec string) string {
	return fmt.Sprintf("%s && %s", noRootCEL(spec), StatesDefaultsCEL(spec))
}

// StatesDefaultsCEL is the predicate over a pod spec that every field of
// the defaults table is stated at the pod level and in every container,
// with a seccompProfile type that is not empty: DefaultPod changes nothing
// then, and rule 2 (missing.go) finds nothing.
func StatesDefaultsCEL(spec string) string {
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
	return fmt.Sprintf("(%s) && %s.all(c, %s)", all(spec, podSecurityFields), containersCEL(spec), all("c", containerSecurityFields))
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

// The defaults as a MutatingAdmissionPolicy's JSON patch, for the
// in-process layout: where DefaultsDecidableCEL holds, DefaultsPatchCEL
// adds exactly what DefaultPod fills in (TestEveryLayoutGivesTheSameVerdict
// compares the two on the real API server), and leaves a Pod that states
// every default alone, so a reinvocation changes nothing. Elsewhere the
// policy does nothing and the webhook defaults the Pod. Both read object
// as the API server types it (a Pod with its defaults: spec.securityContext
// is always there).

// podContainerLists are the container lists of a created Pod (ephemeral
// containers cannot be created with it).
var podContainerLists = []string{"initContainers", "containers"}

// DefaultsDecidableCEL is the predicate over a created Pod under which
// DefaultsPatchCEL gives DefaultPod's result: a Linux pod (not
// os.name windows) without its own user namespace (hostUsers not false:
// there runAsNonRoot depends on the uids), with a pod securityContext,
// whose pod-level seccompProfile is absent or names a type other than
// Localhost (a container copies the pod's profile), and no container is
// privileged or adds CAP_SYS_ADMIN (allowPrivilegeEscalation then defaults
// to true) or states a seccompProfile without a type.
func DefaultsDecidableCEL() string {
	s, p := "object.spec", "object.spec.securityContext"
	container := "!has(c.securityContext) || (!(has(c.securityContext.privileged) && c.securityContext.privileged == true) && " +
		"!(has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add) && c.securityContext.capabilities.add.exists(a, a == '" + capSysAdmin + "')) && " +
		"(!has(c.securityContext.seccompProfile) || (has(c.securityContext.seccompProfile.type) && c.securityContext.seccompProfile.type != '')))"
	terms := []string{
		"has(object.spec) && has(object.spec.securityContext)",
		fmt.Sprintf("!(has(%s.os) && has(%s.os.name) && %s.os.name == 'windows')", s, s, s),
		fmt.Sprintf("!(has(%s.hostUsers) && %s.hostUsers == false)", s, s),
		fmt.Sprintf("!(has(%s.ephemeralContainers) && %s.ephemeralContainers.size() > 0)", s, s),
		fmt.Sprintf("(!has(%s.seccompProfile) || (has(%s.seccompProfile.type) && %s.seccompProfile.type != '' && %s.seccompProfile.type != '%s' && !has(%s.seccompProfile.localhostProfile)))",
			p, p, p, p, seccompLocalhost, p),
	}
	for _, l := range podContainerLists {
		terms = append(terms, fmt.Sprintf("(!has(%s.%s) || %s.%s.all(c, %s))", s, l, s, l, container))
	}
	return strings.Join(terms, " && ")
}

// DefaultsPatchCEL is the CEL list of JSON patch operations that fill in d
// where DefaultsDecidableCEL holds: each unset pod-level field, and in each
// init and regular container either a whole securityContext or each unset
// field, a container inheriting the pod's runAsNonRoot and seccomp type as
// they are after the pod level's defaults.
func DefaultsPatchCEL(d Defaults) string {
	p := "object.spec.securityContext"
	add := func(cond, path, value string) string {
		return fmt.Sprintf("(%s ? [JSONPatch{op: \"add\", path: %s, value: %s}] : [])", cond, path, value)
	}
	seccomp := func(of, typ string) string {
		return fmt.Sprintf("%s.seccompProfile{type: %s}", of, typ)
	}
	drop := make([]string, len(d.CapabilitiesDrop))
	for i, c := range d.CapabilitiesDrop {
		drop[i] = fmt.Sprintf("%q", c)
	}
	dropList := "[" + strings.Join(drop, ", ") + "]"
	var parts []string
	for _, f := range []struct{ key, value string }{
		{"runAsUser", fmt.Sprint(d.RunAsUser)}, {"runAsGroup", fmt.Sprint(d.RunAsGroup)}, {"fsGroup", fmt.Sprint(d.FSGroup)},
		{"fsGroupChangePolicy", fmt.Sprintf("%q", d.FSGroupChangePolicy)}, {"runAsNonRoot", fmt.Sprint(d.RunAsNonRoot)},
		{"seccompProfile", seccomp("Object.spec.securityContext", fmt.Sprintf("%q", d.SeccompProfileType))},
	} {
		parts = append(parts, add(fmt.Sprintf("!has(%s.%s)", p, f.key), fmt.Sprintf("%q", "/spec/securityContext/"+f.key), f.value))
	}
	nonRoot := fmt.Sprintf("(has(%s.runAsNonRoot) ? %s.runAsNonRoot : %t)", p, p, d.RunAsNonRoot)
	typ := fmt.Sprintf("(has(%s.seccompProfile) ? %s.seccompProfile.type : %q)", p, p, d.SeccompProfileType)
	for _, l := range podContainerLists {
		of := "Object.spec." + l + ".securityContext"
		path := func(rest string) string {
			return fmt.Sprintf("%q + string(i) + %q", "/spec/"+l+"/", "/securityContext"+rest)
		}
		each := func(cond, rest, value string) string {
			return fmt.Sprintf("(has(object.spec.%s) ? object.spec.%s.transformList(i, c, %s, JSONPatch{op: \"add\", path: %s, value: %s}) : [])",
				l, l, cond, path(rest), value)
		}
		whole := fmt.Sprintf("%s{runAsNonRoot: %s, seccompProfile: %s, allowPrivilegeEscalation: %t, capabilities: %s.capabilities{drop: %s}}",
			of, nonRoot, seccomp(of, typ), d.AllowPrivilegeEscalation, of, dropList)
		parts = append(parts,
			each("!has(c.securityContext)", "", whole),
			each("has(c.securityContext) && !has(c.securityContext.runAsNonRoot)", "/runAsNonRoot", nonRoot),
			each("has(c.securityContext) && !has(c.securityContext.seccompProfile)", "/seccompProfile", seccomp(of, typ)),
			each("has(c.securityContext) && !has(c.securityContext.allowPrivilegeEscalation)", "/allowPrivilegeEscalation", fmt.Sprint(d.AllowPrivilegeEscalation)),
			each("has(c.securityContext) && !has(c.securityContext.capabilities)", "/capabilities", fmt.Sprintf("%s.capabilities{drop: %s}", of, dropList)),
			each("has(c.securityContext) && has(c.securityContext.capabilities) && !has(c.securityContext.capabilities.drop)", "/capabilities/drop", dropList),
		)
	}
	return strings.Join(parts, " +\n")
}
