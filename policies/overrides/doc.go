// Package overrides implements contract OVR (docs/contracts.md §9): the
// allowlist of the component workload overrides in the
// unbounded-component-overrides ConfigMap. Every data key holds one overrides
// document; each of its entries names a component and kind and carries a
// strategic-merge patch of that workload, extra arguments, and the names of
// the containers it adds.
//
// Validate is pure: it reads the ConfigMap's data and, through the Live
// interface, what the webhook could read of the live workloads (one per Site
// for a per-Site component), and returns every finding at once, sorted, each
// attributed to data[<key>].overrides[<i>].<path> (data[<key>] for the
// document as a whole). Each content finding's Evidence fingerprints the
// offending value, so the webhook can ratchet it on UPDATE when that value
// did not change; a limit or parse failure carries no evidence and never
// ratchets. docs/component-overrides.md describes the edges.
//
// Files: validate.go (entry point, codes, Live), document.go (one YAML
// document per key), node.go (the YAML node the checks read),
// blockstyle.go and flowstyle.go (the readers of plain block-style
// documents and the flow collections inside them, which yaml/v3 reads
// otherwise; docs/design.md), walker.go (the YAML walk and the checks that hold
// everywhere), envelope.go (apiVersion and the entries), entry.go (the
// fields of an entry), components.go (the component table and its upstream
// presets), limits.go (the engine's parse limits), allowlist.go (what a
// patch may set), protected.go (what it never may), patch.go (the patch walk), additions.go (addContainers),
// resolve.go (checks against each live workload, per Site), apply.go (what
// the engine refuses of one entry), compose.go (what it refuses across the
// entries that reach one workload), warnings.go.
//
// Codes (deny unless marked warn):
//
//	OverrideDocumentEmpty (warn)  a key whose value is empty; the operator ignores it
//	OverrideDocumentInvalid       not YAML (never ratchets), no document, not a mapping
//	OverrideConfigMapTooLarge     the values together past the engine's 1 MiB; never ratchets
//	OverrideDocumentTooLong       a key's value past the engine's 256 KiB; never ratchets
//	OverrideDocumentTooManyNodes  more than the engine's 20000 YAML nodes; never ratchets
//	OverrideMappingTooManyKeys    a mapping of more than the engine's 1024 keys; never ratchets
//	OverrideTooManyEntries        more than the engine's 256 overrides; never ratchets
//	OverrideDocumentTooDeep       nesting past the engine's 32 levels (100 once aliases are expanded, or the parser's limit); never ratchets
//	OverrideDocumentTooLarge      past the walk budget once aliases are expanded; never ratchets
//	OverrideTooManyFindings       more than 1000 findings in one document; never ratchets
//	OverrideMultipleDocuments     more than one document in a key
//	OverrideAPIVersionUnknown     apiVersion missing or not overrides.unbounded-cloud.io/v1alpha1
//	OverrideYAMLMergeKey          a YAML merge key (<<)
//	OverrideDuplicateKey          a key given twice in one mapping
//	OverrideUnknownField          a field an overrides document or entry does not have
//	OverrideTypeInvalid           a value of the wrong YAML type
//	OverrideNull                  an explicit null
//	OverrideDirective             a $-prefixed key (strategic-merge directive)
//	OverrideComponentUnknown      component missing or not in the component table
//	OverrideKindMismatch          kind missing, unknown, or not one the component runs as
//	OverrideSitesInvalid          sites on a singleton, empty, or with a bad or repeated name
//	OverrideEmpty                 an entry that changes nothing; extraArgs with no arguments
//	OverrideNameInvalid           an empty, repeated or doubly declared container name
//	OverrideAdditionUndefined     a declared addition the patch does not define
//	OverridePathNotAllowed        a patch path outside the allowlist
//	OverridePathProtected         an always-rejected field, at its position
//	OverrideReservedKey           a label or annotation key under unbounded-cloud.io/
//	OverrideListKeyInvalid        a merged-list entry without its merge key
//	OverrideSelectorLabel         a template label the live selector uses, changed
//	OverrideVolumeRedefined       a volume the live workload declares, redefined or removed
//	OverrideContainerUnknown      a patch container (init container) the live workload lacks in that list, an extraArgs container it lacks
//	OverrideContainerExists       a declared addition the live workload already has in that list
//	OverrideNodeSelectorOwned     a nodeSelector key the operator sets, given another value
//	OverrideConflict              entries (or keys of one) setting one field differently, extraArgs twice, one addition twice
//	OverrideFieldOwnedBySite      metalman spec.replicas, owned by the Site
//	OverrideEnvValueAndValueFrom  an env var with value and valueFrom, in one item, merged onto the operator's, or across entries
//	OverrideStrategyInvalid       Recreate/OnDelete with rollingUpdate, an unknown strategy type
//	OverrideAffinityInvalid       malformed affinity, two terms without requirements the engine combines, or more required terms than it combines
//	OverrideResolutionSkipped (warn)  the live workload could not be read
//	OverrideArgsReplaced (warn)   a patch sets args or command, replacing the list
//	OverrideImagePinned (warn)    a patch sets an image, pinning it across upgrades
//
// Decisions where the contract leaves room:
//
//   - The component table is configuration (components.go): a preset, one
//     of upstream's tables at the commit it is named for, or a list. The
//     default, any, is every component of every preset: upstream's table
//     changed between releases (storage came and went, racer was split into
//     racer-controlplane and racer-dataplane and later was one Deployment),
//     and a default that refused what a released engine accepts would deny
//     documents real clusters hold. A platform team that knows its release
//     picks its preset and refuses what that release refuses too.
//   - addContainers and addInitContainers hold container names, as upstream
//     does: the container itself is defined in the patch
//     (spec.template.spec.containers or .initContainers), and its name listed
//     here declares that the entry means to add it rather than modify it.
//     A declared name the patch does not define is OverrideAdditionUndefined;
//     a patch container the live workload lacks and the entry does not
//     declare is OverrideContainerUnknown; a list item that is a container
//     object is OverrideTypeInvalid, with a message saying where the
//     container goes. Reading the lists as container objects would deny the
//     documents real clusters hold.
//   - "Always rejected" fields are positions, not names (upstream): the
//     workload's own apiVersion, kind and status, its metadata.name,
//     .namespace, .ownerReferences, .finalizers and .resourceVersion, its
//     spec.selector, and the pod template spec's serviceAccountName,
//     serviceAccount, hostNetwork, hostPID and hostIPC. No permitted subtree
//     holds one of these positions, so inside a permitted subtree a field of
//     that name is an ordinary field: env valueFrom.fieldRef.apiVersion,
//     dataSourceRef.kind and a volume claim template's spec.selector pass.
//     Keys of free-form string maps (labels, annotations, matchLabels,
//     nodeSelector, csi.volumeAttributes, flexVolume.options, resource
//     lists) are data, never fields, and are rendered as path[key].
//   - The reserved prefix covers unbounded-cloud.io/ and its subdomains
//     (net.unbounded-cloud.io/...), in any case, in every labels and
//     annotations map of a patch (also a volume claim template's), not in
//     nodeSelector or matchLabels, which select rather than label.
//   - The allowlist is kind-aware: spec.replicas and spec.strategy are
//     permitted on a Deployment only, spec.updateStrategy on a DaemonSet only
//     (the other kind has no such field, so the operator's merge or the API
//     server would fail). An entry whose kind is wrong is checked against
//     both.
//   - Values inside permitted subtrees are open, except what the operator's
//     merge itself cannot take (upstream checks the same): the YAML type of
//     enumerated fields (a mapping where a list belongs), string values of
//     labels, annotations and nodeSelector, the merge key of each entry of a
//     merged list (name, mountPath, containerPort, topologyKey), and scalars
//     JSON cannot carry (timestamps, binary and custom tags, infinities, NaN).
//   - Nulls and $-keys are rejected everywhere in a document, the entry
//     fields included (sites: null, overrides: null), not only in patches.
//     Nothing below a rejected field is reported.
//   - Aliases are plain YAML and the operator expands them, so they are
//     expanded and checked where they land. Merge keys are rejected, also
//     quoted, as upstream does. The engine's parse limits come first
//     (limits.go, measured on the tree as written, aliases unexpanded, as
//     the engine measures it); then, aliases expanded, a document may nest
//     100 levels, walk (and render as evidence) 8 nodes per byte of its text
//     plus 1024, and report 1000 findings; one Validate call walks at most
//     2^22 nodes, keys in sorted order so that this runs out at the same
//     place every time. Past these bounds, which only alias expansion
//     reaches, the document is OverrideDocumentTooDeep,
//     OverrideDocumentTooLarge or OverrideTooManyFindings. All of these are
//     limits, which never ratchet.
//   - One document per key, as upstream: a trailing "---" starts a second
//     document and is an error. A value that is empty or white space is
//     ignored by the operator, so it only warns; one with only comments is an
//     error (the operator rejects it).
//   - A missing apiVersion is reported and the document is checked as
//     v1alpha1; an unknown apiVersion is reported and nothing else is
//     checked, since its schema is not this one. A document without
//     overrides, or with an empty list, is valid and overrides nothing.
//   - "At least one of patch, extraArgs, addContainers, addInitContainers"
//     means present and not empty: patch: {} changes nothing. A null counts
//     as present (it is reported as null).
//   - String fields (component, kind, sites, extraArgs arguments, added
//     names) take any plain scalar as written, as the operator's decoder does:
//     --port=5 and 5 are both arguments. Site names must be Site object names
//     (RFC 1123 subdomains) and distinct.
//   - Resolution runs only for entries whose component is known and whose
//     kind it runs as, per Site: against the workload of each Site the entry
//     names, or of every Site, one by one, in Site order (never a merge). A
//     Workload whose Kind is set and differs from the kind asked for is not
//     the entry's. When live is nil or cannot read the workloads, or a named
//     Site has none, each entry that refers to them (patch containers,
//     template labels, volumes, mounts or node selector, extraArgs,
//     additions) gets one OverrideResolutionSkipped warning; the syntactic
//     findings stand. A finding several Sites draw is reported once, naming
//     them.
//   - Live lists containers and init containers apart: a patch entry is
//     resolved against its own list, as the engine resolves it, and
//     extraArgs against both. The operator's env vars are read with how each
//     takes its value, so that a patch value over its valueFrom (or the
//     reverse) is refused; an empty value is no value, as the API server
//     has it.
//   - A node selector term without requirements is accepted, as the
//     engine accepts it; the engine refuses to combine two of them (the
//     first two blocks of terms it folds, the operator's first). The
//     operator's terms always have requirements; without a live workload
//     none is assumed, so two such entries are refused there too, as
//     entries that conflict with each other are.
//   - A selector label is changed when a template label the selector uses is
//     given another string value. Removing one takes a null or a $patch,
//     reported as such. A patch volume named like an operator volume is a
//     redefinition when it holds more than its name (upstream), so
//     {name: config, $patch: delete} is both a directive and a redefinition.
//   - OverrideArgsReplaced and OverrideImagePinned concern containers the
//     entry modifies, not those it adds, and only values of the right type.
//   - Messages never repeat a value from the document: parse errors give a
//     line number and a fixed description of the problem, never the parser's
//     text, which can quote the document. Field paths, keys, container,
//     volume and label names may appear. Evidence is the offending value in a
//     canonical rendering (tags kept, so true and "true" differ; layout and
//     comments ignored); for a name finding, the name; for a problem of the
//     whole document, its text.
//   - What the engine refuses at apply time is refused at admission
//     (apply.go, compose.go): conflicts across the entries that reach one
//     workload in any data key (identical values never conflict; extraArgs
//     appended twice always do), and also between list items of one entry
//     with the same merge key; Site-owned fields; strategies; env vars with
//     value and valueFrom (also given by two entries); malformed affinity,
//     terms without requirements combined, and a product of required node
//     affinity terms past 128. Each is reported at every entry involved, so
//     findings do not depend on entry or Site order.
//   - Every rule applies on CREATE and UPDATE; ratcheting on UPDATE is the
//     webhook's, through Evidence.
package overrides
