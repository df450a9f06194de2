// This file lists what a patch may never set, wherever it appears, even
// inside a permitted subtree (CONTRACTS.md §9 "always rejected"):
//
//   - the fields apiVersion, kind, serviceAccountName, serviceAccount,
//     hostNetwork, hostPID, hostIPC and status, as a key of any mapping;
//   - name, namespace, ownerReferences, finalizers and resourceVersion as
//     keys of any mapping held by a metadata key, and selector as a key of
//     any mapping held by a spec key;
//   - a label or annotation key under unbounded-cloud.io/ or any of its
//     subdomains (prefix case ignored), in any labels or annotations map;
//   - keys starting with "$" and explicit nulls (walker.go), anywhere.
//
// Keys of maps whose keys are data rather than fields (labels, annotations,
// matchLabels, nodeSelector) are not matched against the field names: a
// label may be called "kind".

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
	reasonGVKNested = "apiVersion and kind are rejected at every depth of a patch, also where Kubernetes has a field of that name " +
		"(omit env valueFrom.fieldRef.apiVersion: it defaults to v1)"
	reasonName            = "renaming the workload orphans the original, which the operator does not prune"
	reasonOwner           = "owner references drive per-Site garbage collection"
	reasonFinalizers      = "finalizers order the deletion the operator relies on"
	reasonResourceVersion = "the operator applies the workload, so a resourceVersion here is always wrong"
	reasonSelector        = "a workload's selector is immutable and must keep matching its pod template labels"
	reasonServiceAccount  = "the ServiceAccount decides the component's API permissions"
	reasonHostNamespace   = "host namespaces are a deliberate decision of each component"
	reasonStatus          = "status is written by the workload controller"
)

// protectedAnywhere are rejected as a key of any mapping in a patch.
var protectedAnywhere = map[string]string{
	"apiVersion":         reasonGVK,
	"kind":               reasonGVK,
	"serviceAccountName": reasonServiceAccount,
	"serviceAccount":     reasonServiceAccount,
	"hostNetwork":        reasonHostNamespace,
	"hostPID":            reasonHostNamespace,
	"hostIPC":            reasonHostNamespace,
	"status":             reasonStatus,
}

// protectedBelow are rejected as a key of a mapping held by the outer key.
var protectedBelow = map[string]map[string]string{
	"metadata": {
		"name":            reasonName,
		"namespace":       reasonName,
		"ownerReferences": reasonOwner,
		"finalizers":      reasonFinalizers,
		"resourceVersion": reasonResourceVersion,
	},
	"spec": {
		"selector": reasonSelector,
	},
}

// dataKeyed are the keys that hold maps whose keys are data, not fields.
var dataKeyed = map[string]bool{
	"labels":       true,
	"annotations":  true,
	"matchLabels":  true,
	"nodeSelector": true,
}

// protectedReason reports whether key, in a mapping held by owner (""
// for the patch itself and for list entries), is a protected field, and why.
// root is set for the patch itself.
func protectedReason(owner, key string, root bool) (string, bool) {
	if reason, ok := protectedAnywhere[key]; ok {
		if reason == reasonGVK && !root {
			reason = reasonGVKNested
		}
		return reason, true
	}
	reason, ok := protectedBelow[owner][key]
	return reason, ok
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
