// This file lists what a patch may never set (upstream, "always rejected").
// These are positions in the workload, not field names wherever they occur:
//
//   - at the workload's top level: apiVersion, kind and status;
//   - in the workload's metadata: name, namespace, ownerReferences,
//     finalizers and resourceVersion;
//   - in the workload's spec: selector;
//   - in the pod template's spec: serviceAccountName, serviceAccount,
//     hostNetwork, hostPID and hostIPC;
//   - a label or annotation key under unbounded-cloud.io/ or any of its
//     subdomains (prefix case ignored), in any labels or annotations map;
//   - keys starting with "$" and explicit nulls (walker.go), anywhere.
//
// So a field of the same name elsewhere is an ordinary field, as upstream
// has it: env valueFrom.fieldRef.apiVersion, a volume's
// ephemeral.volumeClaimTemplate.spec.selector or dataSourceRef.kind, a
// hostNetwork key in a securityContext (which Kubernetes would drop). Keys of
// maps whose keys are data rather than fields (labels, annotations,
// matchLabels, nodeSelector, csi.volumeAttributes, flexVolume.options,
// resource lists) are never fields: they are rendered as path[key].

package overrides

import "strings"

// reservedDomain is the operator's label and annotation prefix (upstream).
const reservedDomain = "unbounded-cloud.io"

// Messages of the rejections in this file.
const (
	msgProtected = "this field is always rejected in a patch: %s"
	msgReserved  = "label and annotation keys under " + reservedDomain + "/ belong to the operator " +
		"(config hashes, Site scoping, override visibility)"
)

// Why each field is protected.
const (
	reasonGVK = "the group, version and kind decide what object the operator writes, " +
		"and the operator holds escalate and bind on cluster role bindings"
	reasonName            = "renaming the workload orphans the original, which the operator does not prune"
	reasonOwner           = "owner references drive per-Site garbage collection"
	reasonFinalizers      = "finalizers order the deletion the operator relies on"
	reasonResourceVersion = "the operator applies the workload, so a resourceVersion here is always wrong"
	reasonSelector        = "a workload's selector is immutable and must keep matching its pod template labels"
	reasonServiceAccount  = "the ServiceAccount decides the component's API permissions"
	reasonHostNamespace   = "host namespaces are a deliberate decision of each component"
	reasonStatus          = "status is written by the workload controller"
)

// Protected fields, by the position (allowlist rule) whose mapping holds them.
var (
	protectedWorkload = map[string]string{
		"apiVersion": reasonGVK,
		"kind":       reasonGVK,
		"status":     reasonStatus,
	}
	protectedWorkloadMetadata = map[string]string{
		"name":            reasonName,
		"namespace":       reasonName,
		"ownerReferences": reasonOwner,
		"finalizers":      reasonFinalizers,
		"resourceVersion": reasonResourceVersion,
	}
	protectedWorkloadSpec = map[string]string{
		"selector": reasonSelector,
	}
	protectedPodSpec = map[string]string{
		"serviceAccountName": reasonServiceAccount,
		"serviceAccount":     reasonServiceAccount,
		"hostNetwork":        reasonHostNamespace,
		"hostPID":            reasonHostNamespace,
		"hostIPC":            reasonHostNamespace,
	}
)

// dataKeyed are the keys, inside a permitted subtree, that hold maps whose
// keys are data, not fields.
var dataKeyed = map[string]bool{
	"labels":           true,
	"annotations":      true,
	"matchLabels":      true,
	"nodeSelector":     true,
	"volumeAttributes": true, // csi
	"options":          true, // flexVolume (dnsConfig.options is a list)
	"limits":           true, // resource lists
	"requests":         true,
}

// isReserved reports whether a label or annotation key is under the
// operator's prefix: unbounded-cloud.io/ or <subdomain>.unbounded-cloud.io/.
func isReserved(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	prefix = strings.ToLower(prefix)
	return prefix == reservedDomain || strings.HasSuffix(prefix, "."+reservedDomain)
}
