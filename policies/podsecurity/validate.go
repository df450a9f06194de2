// Entry points of the validating side, finding codes and messages.
//
// Reads: the spec of a Pod, or the pod template spec of a workload kind (via
// workload.PodOf); oldObj's ephemeral container names on
// pods/ephemeralcontainers UPDATE.
// Allows: see runasroot.go (rule 1) and missing.go (rule 2). Objects without
// a pod spec, and kinds that carry no pod template, get no findings.

package podsecurity

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Finding codes of contract PSC.
const (
	// RunAsRootConflict (deny): a container runs as uid 0 from an
	// explicit runAsUser: 0 while its effective runAsNonRoot is true; the
	// kubelet would refuse to start it.
	RunAsRootConflict policies.Code = "RunAsRootConflict"
	// SecurityDefaultsMissing (deny): a field of the defaults table is
	// unset in a Pod (or a new ephemeral container) that reached validation:
	// the mutating webhook, which fails open, did not run.
	SecurityDefaultsMissing policies.Code = "SecurityDefaultsMissing"
)

// Messages. They name fields, paths and container names, never a value
// taken from the object.
const (
	msgRunAsRootContainer = "container %s sets runAsUser: 0 while its effective runAsNonRoot is true " +
		"(stated, inherited from the pod, or filled in by the pod security defaults), so the kubelet would refuse to start it; " +
		"set runAsNonRoot: false explicitly in %s, or choose a non-zero runAsUser"
	msgRunAsRootPodOne = "%s inherits runAsUser: 0 from the pod while its effective runAsNonRoot is true " +
		"(stated, or filled in by the pod security defaults), so the kubelet would refuse to start it; " +
		"set runAsNonRoot: false explicitly in %s and in any container securityContext that sets it to true, or choose a non-zero runAsUser"
	msgRunAsRootPodMany = "%s inherit runAsUser: 0 from the pod while their effective runAsNonRoot is true " +
		"(stated, or filled in by the pod security defaults), so the kubelet would refuse to start them; " +
		"set runAsNonRoot: false explicitly in %s and in any container securityContext that sets it to true, or choose a non-zero runAsUser"
	msgDefaultsMissing = "this pod security default is unset: the gatehouse pod-security-defaults mutating webhook did not run on this request " +
		"(it fails open, so gatehouse was unavailable, or the namespace's opt-in label was added while the request was under way); " +
		"retry the request once gatehouse is available, or set the field explicitly"
	msgNotObject = "this field is not an object, so the pod security defaults could not be applied below it " +
		"(the API server rejects it as well); write it as an object"
)

var podGK = schema.GroupKind{Kind: "Pod"}

// ValidatePod is the final-state guard on a Pod (CREATE, or
// pods/ephemeralcontainers UPDATE). It reports
//
//  1. RunAsRootConflict for every container whose effective runAsUser is an
//     explicit 0 while its effective runAsNonRoot is true (runasroot.go), on
//     all containers;
//  2. SecurityDefaultsMissing for every field of the defaults table that is
//     unset (missing.go): at the pod level and in every container when oldObj
//     is nil (CREATE), and only in the new ephemeral containers when oldObj,
//     the stored Pod, is given (pods/ephemeralcontainers UPDATE).
//
// Findings are sorted.
func ValidatePod(obj, oldObj map[string]any) []policies.Finding {
	pod, ok := workload.PodOf(podGK, obj)
	if !ok {
		return nil
	}
	findings := checkRunAsRoot(pod.SpecPath, pod.Spec)
	linux := !isWindows(pod.Spec)
	root := rootInUserNamespaceOf(pod.Spec)
	if oldObj == nil {
		findings = append(findings, checkPodDefaults(pod.SpecPath, pod.Spec, linux, root)...)
		for _, c := range workload.Containers(pod.SpecPath, pod.Spec) {
			findings = append(findings, checkContainerDefaults(c, linux, root)...)
		}
	} else {
		for _, c := range newEphemeralContainers(pod.SpecPath, pod.Spec, oldObj) {
			findings = append(findings, checkContainerDefaults(c, linux, root)...)
		}
	}
	policies.Sort(findings)
	return findings
}

// ValidateTemplate applies rule 1 to the pod template of a workload kind
// (every kind in workload.Kinds() that has a template) as its pods will look
// once the mutating webhook has filled in d, so that a workload whose pods
// the kubelet would refuse (or ValidatePod would deny) is denied when it is
// created instead of failing in its controller's events. The template itself
// is not changed: templates are not defaulted (docs/podsecurity.md), so rule 2
// does not apply to them. A Pod and every other kind get nil. Findings are
// sorted, with paths into the template.
func ValidateTemplate(gk schema.GroupKind, obj map[string]any, d Defaults) []policies.Finding {
	kind, ok := workload.Lookup(gk)
	if !ok || len(kind.Template) == 0 {
		return nil
	}
	pod, ok := workload.PodOf(gk, obj)
	if !ok {
		return nil
	}
	// Defaulted copies on write: the template itself is not changed.
	defaulted, _ := Defaulted(map[string]any{"spec": pod.Spec}, d)
	spec, _ := defaulted["spec"].(map[string]any)
	findings := checkRunAsRoot(pod.SpecPath, spec)
	policies.Sort(findings)
	return findings
}
