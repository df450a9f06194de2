// This file resolves an entry against the live workload of its component
// and kind, read through Live (CONTRACTS.md §9, what an in-API-server
// policy cannot do). It reads the entry's patch (template labels, volumes,
// container names), extraArgs and add lists, and the live workload's
// selector labels, volume names and container names, and rejects:
//
//   - a template label the selector uses, set to another value:
//     OverrideSelectorLabel (removing one takes a null or a $patch
//     directive, both denied wherever they appear);
//   - a patch volume named like a volume the operator declares that holds
//     more than its name (volumes merge on name, so it would redefine the
//     operator's volume, or with $patch: delete remove it; naming it alone
//     changes nothing): OverrideVolumeRedefined;
//   - a patch container, or an extraArgs container, the workload does not
//     have and the entry does not declare it adds: OverrideContainerUnknown;
//   - a declared addition the workload already has: OverrideContainerExists.
//
// Live lists containers and init containers together, so a patch entry in
// initContainers named like an ordinary container (or the reverse) counts
// as known. When live is nil or cannot read the workload, an entry that
// would need resolution gets one OverrideResolutionSkipped warning and the
// syntactic checks stand unchanged. Entries whose component or kind is
// wrong are not resolved: they match no workload.

package overrides

import (
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// Messages of resolution.
const (
	msgResolutionSkipped = "the live %s of component %s could not be read, so the containers, volumes and selector labels " +
		"this override refers to were not checked against it; the operator checks them when it applies the override"
	msgContainerUnknown = "the live %s of component %s has no %s named %s; declare it in %s to add it, or correct the name"
	msgArgsUnknown      = "the live %s of component %s has no container named %s to append arguments to, " +
		"and this override does not add one"
	msgContainerExists = "the live %s of component %s already has a container named %s; patch it instead of declaring it in %s"
	msgSelectorLabel   = "label %s is part of the selector of the live %s of component %s; changing its value would detach " +
		"the workload from its pods"
	msgVolumeRedefined = "volume %s is declared by the operator in the live %s of component %s; volumes merge on name, " +
		"so this entry would redefine or remove it under every mount that uses it; add a volume under a new name instead"
)

// resolve checks entry e against its live workload.
func (w *walker) resolve(e *entry) {
	if e.component == "" || e.kindName == "" {
		return
	}
	containers := patchedContainers(e.patch)
	labels := lookup(e.patch, "spec", "template", "metadata", "labels")
	volumes := lookup(e.patch, "spec", "template", "spec", "volumes")
	if len(containers) == 0 && !hasEntries(labels) && !hasEntries(volumes) && len(e.args) == 0 && len(e.added) == 0 {
		return
	}
	var live Workload
	ok := false
	if w.live != nil {
		live, ok = w.live.Workload(e.component, e.kindName)
		ok = ok && (live.Kind == "" || live.Kind == e.kindName)
	}
	if !ok {
		w.warn(CodeResolutionSkipped, e.path, "", msgResolutionSkipped, e.kindName, e.component)
		return
	}

	for _, a := range e.added {
		if slices.Contains(live.Containers, a.name) {
			w.deny(CodeContainerExists, a.path, a.name, msgContainerExists, e.kindName, e.component, a.name, addField(a.init))
		}
	}
	for _, c := range containers {
		if !slices.Contains(live.Containers, c.name) && !e.adds(c) {
			w.deny(CodeContainerUnknown, c.path(e.path).Child("name"), c.name, msgContainerUnknown,
				e.kindName, e.component, containerNoun(c.init), c.name, addField(c.init))
		}
	}
	for _, a := range e.args {
		if !slices.Contains(live.Containers, a.name) && !e.addsName(a.name) {
			w.deny(CodeContainerUnknown, a.path, a.name, msgArgsUnknown, e.kindName, e.component, a.name)
		}
	}
	w.resolveSelectorLabels(e, labels, live)
	w.resolveVolumes(e, volumes, live)
}

// resolveSelectorLabels reports template labels, the mapping labels, that
// change a label of the live selector.
func (w *walker) resolveSelectorLabels(e *entry, labels *yaml.Node, live Workload) {
	if labels == nil || labels.Kind != yaml.MappingNode {
		return
	}
	path := e.path.Child(fieldPatch, "spec", "template", "metadata", "labels")
	for i := 0; i+1 < len(labels.Content); i += 2 {
		key, value := deref(labels.Content[i]), deref(labels.Content[i+1])
		if key.Kind != yaml.ScalarNode || !isString(value) {
			continue
		}
		if selected, ok := live.SelectorLabels[key.Value]; ok && selected != value.Value {
			w.deny(CodeSelectorLabel, path.Key(key.Value), key.Value+"="+value.Value, msgSelectorLabel,
				key.Value, e.kindName, e.component)
		}
	}
}

// resolveVolumes reports entries of the patch's volumes list that redefine a
// volume of the live workload.
func (w *walker) resolveVolumes(e *entry, volumes *yaml.Node, live Workload) {
	if volumes == nil || volumes.Kind != yaml.SequenceNode {
		return
	}
	path := e.path.Child(fieldPatch, "spec", "template", "spec", "volumes")
	for j, item := range volumes.Content {
		item = deref(item)
		name := lookup(item, "name")
		if name == nil || !isString(name) || !slices.Contains(live.Volumes, name.Value) {
			continue
		}
		// An entry holding nothing but the name changes nothing.
		if len(item.Content) > 2 {
			w.deny(CodeVolumeRedefined, path.Index(j), w.evidence(item), msgVolumeRedefined,
				name.Value, e.kindName, e.component)
		}
	}
}

// hasEntries reports whether n is a mapping or list with entries.
func hasEntries(n *yaml.Node) bool {
	return n != nil && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) > 0
}
