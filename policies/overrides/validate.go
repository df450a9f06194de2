// Entry point of contract OVR, its finding codes and what it reads of the
// live workloads.
//
// Reads: every key of the ConfigMap's data, each one an overrides document
// (document.go), and through Live the selector labels, volume names and
// container names of the live workload of each component an override targets
// (resolve.go).
// Allows: see document.go (YAML), envelope.go and entry.go (the document and
// its entries), patch.go (the allowlist), additions.go, resolve.go
// (resolution) and warnings.go.

package overrides

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Finding codes of contract OVR. Every code denies unless marked "warns".
const (
	// OverrideDocumentEmpty warns: the key's value is empty or white space; the
	// operator ignores it.
	OverrideDocumentEmpty policies.Code = "OverrideDocumentEmpty"
	// OverrideDocumentInvalid: the key's value is not YAML (a parse failure,
	// which never ratchets), holds no document, or is not a mapping.
	OverrideDocumentInvalid policies.Code = "OverrideDocumentInvalid"
	// OverrideDocumentTooDeep: the document nests deeper than the overrides
	// engine reads (32 levels, limits.go), or than the walk follows once
	// aliases are expanded (maxDepth), or than the YAML parser's own limit.
	// A limit: it never ratchets.
	OverrideDocumentTooDeep policies.Code = "OverrideDocumentTooDeep"
	// OverrideConfigMapTooLarge: the ConfigMap's values together hold more than
	// the 1 MiB the overrides engine reads (limits.go). A limit.
	OverrideConfigMapTooLarge policies.Code = "OverrideConfigMapTooLarge"
	// OverrideDocumentTooLong: one key's value holds more than the 256 KiB the
	// overrides engine reads in one document. A limit.
	OverrideDocumentTooLong policies.Code = "OverrideDocumentTooLong"
	// OverrideDocumentTooManyNodes: the document has more than the 20000 YAML
	// nodes the overrides engine reads. A limit.
	OverrideDocumentTooManyNodes policies.Code = "OverrideDocumentTooManyNodes"
	// OverrideMappingTooManyKeys: a mapping of the document has more than the
	// 1024 keys the overrides engine reads in one mapping. A limit.
	OverrideMappingTooManyKeys policies.Code = "OverrideMappingTooManyKeys"
	// OverrideTooManyEntries: the document has more than the 256 overrides the
	// overrides engine reads in one document. A limit.
	OverrideTooManyEntries policies.Code = "OverrideTooManyEntries"
	// OverrideDocumentTooLarge: the document, or the ConfigMap's documents
	// together, grow past the walk budget once their aliases are expanded. A
	// limit: it never ratchets.
	OverrideDocumentTooLarge policies.Code = "OverrideDocumentTooLarge"
	// OverrideTooManyFindings: the document has more than maxFindings findings;
	// the rest was not checked. A limit: it never ratchets.
	OverrideTooManyFindings policies.Code = "OverrideTooManyFindings"
	// OverrideMultipleDocuments: the key's value holds more than one document.
	OverrideMultipleDocuments policies.Code = "OverrideMultipleDocuments"
	// OverrideAPIVersionUnknown: apiVersion is missing or is not
	// overrides.unbounded-cloud.io/v1alpha1.
	OverrideAPIVersionUnknown policies.Code = "OverrideAPIVersionUnknown"
	// OverrideYAMLMergeKey: a YAML merge key (<<), anywhere.
	OverrideYAMLMergeKey policies.Code = "OverrideYAMLMergeKey"
	// OverrideDuplicateKey: a key given twice in one mapping, anywhere.
	OverrideDuplicateKey policies.Code = "OverrideDuplicateKey"
	// OverrideUnknownField: a field the document or an entry does not have.
	OverrideUnknownField policies.Code = "OverrideUnknownField"
	// OverrideTypeInvalid: a value of the wrong YAML type: a mapping where a list
	// belongs, a label value that is not a string, a YAML timestamp, a key
	// that is not a string.
	OverrideTypeInvalid policies.Code = "OverrideTypeInvalid"
	// OverrideNull: an explicit null, anywhere.
	OverrideNull policies.Code = "OverrideNull"
	// OverrideDirective: a key starting with "$" (a strategic-merge directive),
	// anywhere.
	OverrideDirective policies.Code = "OverrideDirective"

	// OverrideComponentUnknown: component is missing or is not one of the
	// component table (components.go).
	OverrideComponentUnknown policies.Code = "OverrideComponentUnknown"
	// OverrideKindMismatch: kind is missing or is not a kind the component runs as.
	OverrideKindMismatch policies.Code = "OverrideKindMismatch"
	// OverrideSitesInvalid: sites on a cluster singleton, an empty sites list,
	// or a Site name that is empty, not an object name, or listed twice.
	OverrideSitesInvalid policies.Code = "OverrideSitesInvalid"
	// OverrideEmpty: an entry that changes nothing, or an extraArgs container
	// with no arguments.
	OverrideEmpty policies.Code = "OverrideEmpty"
	// OverrideNameInvalid: an empty container name in extraArgs or in an add
	// list, or a name an add list repeats or both add lists hold.
	OverrideNameInvalid policies.Code = "OverrideNameInvalid"
	// OverrideAdditionUndefined: addContainers or addInitContainers names a
	// container the patch does not define.
	OverrideAdditionUndefined policies.Code = "OverrideAdditionUndefined"

	// OverridePathNotAllowed: a patch path outside the allowlist.
	OverridePathNotAllowed policies.Code = "OverridePathNotAllowed"
	// OverridePathProtected: a field that is always rejected (apiVersion, kind,
	// metadata.name, spec.selector, serviceAccountName, hostNetwork, status
	// and the others in protected.go), at any depth of a patch.
	OverridePathProtected policies.Code = "OverridePathProtected"
	// OverrideReservedKey: a label or annotation key under unbounded-cloud.io/.
	OverrideReservedKey policies.Code = "OverrideReservedKey"
	// OverrideListKeyInvalid: an entry of a merged list (containers, volumes,
	// env, ports, ...) without its merge key, or with one of the wrong type.
	OverrideListKeyInvalid policies.Code = "OverrideListKeyInvalid"

	// OverrideSelectorLabel: the patch changes a template label the live
	// workload's selector uses.
	OverrideSelectorLabel policies.Code = "OverrideSelectorLabel"
	// OverrideVolumeRedefined: the patch redefines a volume the live workload
	// declares.
	OverrideVolumeRedefined policies.Code = "OverrideVolumeRedefined"
	// OverrideContainerUnknown: the patch or extraArgs names a container the live
	// workload does not have and the entry does not add.
	OverrideContainerUnknown policies.Code = "OverrideContainerUnknown"
	// OverrideContainerExists: an add list names a container the live workload
	// already has.
	OverrideContainerExists policies.Code = "OverrideContainerExists"
	// OverrideNodeSelectorOwned: the patch gives a nodeSelector key the live
	// workload's operator sets another value (the engine refuses it at apply
	// time).
	OverrideNodeSelectorOwned policies.Code = "OverrideNodeSelectorOwned"

	// OverrideConflict: entries that reach the same workload (or keys of one
	// entry) set the same field to different values, append extraArgs to the
	// same container, or add the same container differently; the engine
	// refuses them at apply time rather than let list order decide.
	OverrideConflict policies.Code = "OverrideConflict"
	// OverrideFieldOwnedBySite: the patch sets a field a typed Site field owns
	// (spec.replicas of metalman, owned by spec.components.metalman.replicas).
	OverrideFieldOwnedBySite policies.Code = "OverrideFieldOwnedBySite"
	// OverrideEnvValueAndValueFrom: an env var with both value and valueFrom.
	OverrideEnvValueAndValueFrom policies.Code = "OverrideEnvValueAndValueFrom"
	// OverrideStrategyInvalid: a Recreate (Deployment) or OnDelete (DaemonSet)
	// strategy with rollingUpdate, in one entry or across the entries that
	// reach one workload, or a strategy type the kind does not have.
	OverrideStrategyInvalid policies.Code = "OverrideStrategyInvalid"
	// OverrideAffinityInvalid: malformed affinity the engine cannot combine: an
	// empty nodeSelectorTerms list, an empty or malformed term, a section
	// that is not a list of mappings, or more required node affinity terms,
	// once the engine multiplies those of the operator and of every entry
	// for the workload, than it allows (maxRequiredTerms).
	OverrideAffinityInvalid policies.Code = "OverrideAffinityInvalid"

	// OverrideResolutionSkipped warns: the live workload could not be read, so
	// the entry's references to it were not checked.
	OverrideResolutionSkipped policies.Code = "OverrideResolutionSkipped"

	// OverrideArgsReplaced warns: the patch sets a container's args or command,
	// which replaces the whole list.
	OverrideArgsReplaced policies.Code = "OverrideArgsReplaced"
	// OverrideImagePinned warns: the patch sets a container's image, which then
	// no longer follows operator upgrades.
	OverrideImagePinned policies.Code = "OverrideImagePinned"
)

// Workload is what the webhook could read of one live workload of a
// component (for resolution). A per-Site component has one per Site.
type Workload struct {
	// Site is the Site the workload belongs to (the value of the first of
	// its component's Site labels it carries, Table.SiteLabels); empty for
	// a cluster singleton.
	Site string
	// Kind is Deployment or DaemonSet.
	Kind string
	// SelectorLabels is spec.selector.matchLabels.
	SelectorLabels map[string]string
	// Volumes are the names of the volumes the operator declares in the pod
	// template.
	Volumes []string
	// Containers are the names of the pod template's containers, and
	// InitContainers those of its initContainers: the engine resolves a
	// patch's entries of each list against the same list (upstream
	// checkContainerNames), extraArgs against both.
	Containers     []string
	InitContainers []string
	// Mounts maps a container (or init container) name to its volume
	// mounts: mountPath -> volume name.
	Mounts map[string]map[string]string
	// Env maps a container (or init container) name to the env vars the
	// operator sets in it, by name, and how each takes its value. A patch
	// env var merges onto the operator's by name, so a value over a
	// valueFrom (or the reverse) leaves both set, which the API server
	// rejects.
	Env map[string]map[string]EnvSource
	// NodeSelector is the pod template's nodeSelector, which the operator
	// sets.
	NodeSelector map[string]string
	// RequiredNodeTerms is the number of the pod template's required node
	// affinity terms (nodeSelectorTerms), which the engine multiplies with
	// those of the overrides.
	RequiredNodeTerms int
}

// EnvSource is how an operator's env var takes its value.
type EnvSource uint8

// The sources of an env var; an env var the API server admits has one.
const (
	// EnvValue: a non-empty value.
	EnvValue EnvSource = 1 << iota
	// EnvValueFrom: valueFrom.
	EnvValueFrom
)

// Live answers the live workloads of a component and kind: one per Site for
// a per-Site component, in any order. ok=false when they cannot be read
// (then resolution checks are skipped with one warning per affected
// override, never a crash or an allow-by-error of the syntactic rules).
type Live interface {
	Workloads(component, kind string) (ws []Workload, ok bool)
}

// Validate checks every key of a ConfigMap's data (map key -> YAML document)
// against the component table and returns all findings at once, each
// attributed to data[<key>].overrides[<i>].<path> (or to data[<key>] itself
// for problems of the whole document), sorted. live may be nil: then no
// resolution is possible, and every entry that would need it gets a warning.
func Validate(table *Table, data map[string]string, live Live) []policies.Finding {
	keys := make([]string, 0, len(data))
	for key := range data {
		keys = append(keys, key)
	}
	// Sorted, so that the shared alias budget (walker.budget) runs out at
	// the same place on every call.
	slices.Sort(keys)
	w := &walker{table: table, live: live, budget: maxVisits, steps: make([]step, 0, 16)}
	if w.configMapTooLong(data) {
		return w.findings
	}
	for _, key := range keys {
		w.document(field.NewPath("data").Key(key), data[key])
	}
	w.compose()
	policies.Sort(w.findings)
	return w.findings
}
