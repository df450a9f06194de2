// Rule 1: a container that runs as uid 0 must not have runAsNonRoot true.
//
// Reads: runAsUser and runAsNonRoot of the pod spec's securityContext and of
// every init, regular and ephemeral container's securityContext; each
// container's name, for the message.
// Allows: every container whose effective runAsUser (the container's, else
// the pod's) is not an explicit number 0, or whose effective runAsNonRoot
// (the container's, else the pod's) is not true. A runAsUser that is not a
// number, or a runAsNonRoot that is not a bool, reads as absent. An image's
// USER 0 is invisible at admission and is not a finding.

package podsecurity

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// rootEvidence is the Evidence of a RunAsRootConflict: the offending pair of
// values. A pod-level finding appends the containers it affects.
const rootEvidence = "0/true"

// checkRunAsRoot reports RunAsRootConflict for the containers of the pod spec
// at specPath: once per container whose own runAsUser is 0, at that field,
// and once for all containers that inherit a pod-level runAsUser: 0, at the
// pod's field.
func checkRunAsRoot(specPath *field.Path, spec map[string]any) []policies.Finding {
	podSC, _ := fields.Map(spec, "securityContext")
	podUser, podUserSet := numberOf(podSC["runAsUser"])
	podNonRoot, _ := podSC["runAsNonRoot"].(bool)

	var findings []policies.Finding
	var inheriting []string
	for _, c := range workload.Containers(specPath, spec) {
		sc, _ := fields.Map(c.Obj, "securityContext")
		nonRoot := podNonRoot
		if v, ok := sc["runAsNonRoot"].(bool); ok {
			nonRoot = v
		}
		if !nonRoot {
			continue
		}
		if user, ok := numberOf(sc["runAsUser"]); ok {
			if user == 0 {
				scPath := c.Path.Child("securityContext")
				findings = append(findings, policies.Denial(RunAsRootConflict, scPath.Child("runAsUser"), rootEvidence,
					msgRunAsRootContainer, containerLabel(c), scPath))
			}
			continue
		}
		if podUserSet && podUser == 0 {
			inheriting = append(inheriting, containerLabel(c))
		}
	}
	if len(inheriting) > 0 {
		scPath := specPath.Child("securityContext")
		format := msgRunAsRootPodOne
		if len(inheriting) > 1 {
			format = msgRunAsRootPodMany
		}
		names := policies.Plural(len(inheriting), "container") + " " + strings.Join(inheriting, ", ")
		findings = append(findings, policies.Denial(RunAsRootConflict, scPath.Child("runAsUser"),
			rootEvidence+":"+strings.Join(inheriting, ","), format, names, scPath))
	}
	return findings
}

// containerLabel names a container in a message: its quoted name, or its
// path when it has none.
func containerLabel(c workload.Container) string {
	if name, ok := c.Obj["name"].(string); ok && name != "" {
		return strconv.Quote(name)
	}
	return "at " + c.Path.String()
}
