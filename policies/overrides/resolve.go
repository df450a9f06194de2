// This file resolves an entry against the live workloads of its component
// and kind, read through Live (what an in-API-server policy cannot do).
// Resolution is per Site (upstream resolves an entry to each workload it
// matches): an entry with sites is checked against the workload of each of
// those Sites, one by one, and an entry without sites against every Site's
// workload, one by one; never against a merge of them. The workloads are
// taken in Site order, so the verdict never depends on the order Live lists
// them in. It reads the entry's patch (template labels, volumes, containers
// and their volume mounts, nodeSelector), extraArgs and add lists, and each
// workload's selector labels, volumes, containers, mounts and nodeSelector,
// and rejects:
//
//   - a template label the selector uses, set to another value:
//     OverrideSelectorLabel (removing one takes a null or a $patch
//     directive, both denied wherever they appear);
//   - a patch volume named like a volume the operator declares that holds
//     more than its name (volumes merge on name, so it would redefine the
//     operator's volume, or with $patch: delete remove it; naming it alone
//     changes nothing), or a patch mount at a mountPath where the operator
//     mounts another volume in that container (volumeMounts merge on
//     mountPath): OverrideVolumeRedefined;
//   - a patch container, or init container, the workload does not have in
//     that list, or an extraArgs container it has in neither, that the
//     entry does not declare it adds: OverrideContainerUnknown (upstream
//     resolve.go checkContainerNames, checkExtraArgsTargets);
//   - a declared addition the workload already has in that list:
//     OverrideContainerExists;
//   - an env var of a patch container whose value would merge onto the
//     operator's valueFrom of the same name, or whose valueFrom onto its
//     value: OverrideEnvValueAndValueFrom (the merged var has both, which
//     the API server's validateEnvVarValueFrom rejects);
//   - a nodeSelector key the operator sets, given another value (the engine
//     refuses it at apply time): OverrideNodeSelectorOwned.
//
// A finding that several Sites' workloads draw is reported once, naming the
// Sites. When live is nil or cannot read the workloads, or a Site
// the entry names has none, the entry gets one OverrideResolutionSkipped
// warning and the syntactic checks stand unchanged. Entries whose component
// or kind is wrong are not resolved: they match no workload.

package overrides

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Messages of resolution.
const (
	msgResolutionSkipped = "the live %s of component %s could not be read, so the containers, volumes, selector labels and " +
		"node selector this override refers to were not checked against it; the operator checks them when it applies the override"
	msgResolutionSkippedSites = "component %s has no live %s in Site %s that could be read, so the containers, volumes, " +
		"selector labels and node selector this override refers to were not checked there; the operator checks them when it " +
		"applies the override"
	msgContainerUnknown = "the live %s of component %s has no %s named %s; declare it in %s to add it, or correct the name"
	msgArgsUnknown      = "the live %s of component %s has no container named %s to append arguments to, " +
		"and this override does not add one"
	msgContainerExists = "the live %s of component %s already has a container named %s; patch it instead of declaring it in %s"
	msgSelectorLabel   = "label %s is part of the selector of the live %s of component %s; changing its value would detach " +
		"the workload from its pods"
	msgVolumeRedefined = "volume %s is declared by the operator in the live %s of component %s; volumes merge on name, " +
		"so this entry would redefine or remove it under every mount that uses it; add a volume under a new name instead"
	msgMountRedefined = "container %s of the live %s of component %s mounts operator volume %s at this mountPath; volume mounts " +
		"merge on mountPath, so this entry would repoint an operator mount; mount the volume at another path"
	msgNodeSelectorOwned = "the operator sets node selector %s on the live %s of component %s to another value; overriding it " +
		"would change where the workload may run, and the operator refuses it when it applies the override"
	msgEnvOverValueFrom = "the operator sets env var %s of %s %s in the live %s of component %s from %s; env vars merge on " +
		"name, so this %s would leave both set, which the API server rejects; use another name, or leave the operator's var alone"
	msgInSites = " (%s %s)"
)

// resolved is one finding of resolution, before its Sites are named.
type resolved struct {
	code     codeAt
	evidence string
	message  string
	sites    []string
}

// codeAt identifies a resolution finding across the workloads of an entry.
type codeAt struct {
	code policies.Code
	path string
}

// resolution collects the findings of one entry over its workloads.
type resolution struct {
	order []codeAt
	found map[codeAt]*resolved
	paths map[codeAt]*field.Path
}

func (r *resolution) add(site string, code policies.Code, path *field.Path, evidence, message string) {
	at := codeAt{code: code, path: path.String()}
	if f, ok := r.found[at]; ok {
		if site != "" && !slices.Contains(f.sites, site) {
			f.sites = append(f.sites, site)
		}
		return
	}
	if r.found == nil {
		r.found, r.paths = map[codeAt]*resolved{}, map[codeAt]*field.Path{}
	}
	f := &resolved{code: at, evidence: evidence, message: message}
	if site != "" {
		f.sites = []string{site}
	}
	r.found[at], r.paths[at] = f, path
	r.order = append(r.order, at)
}

// resolve checks entry e against the live workloads it targets.
func (w *walker) resolve(e *entry) {
	if e.component == "" || e.kindName == "" {
		return
	}
	containers := e.containers
	labels := lookup(e.patch, "spec", "template", "metadata", "labels")
	volumes := lookup(e.patch, "spec", "template", "spec", "volumes")
	nodeSelector := lookup(e.patch, "spec", "template", "spec", "nodeSelector")
	if len(containers) == 0 && !hasEntries(labels) && !hasEntries(volumes) && !hasEntries(nodeSelector) &&
		len(e.args) == 0 && len(e.added) == 0 {
		return
	}
	targets, missing, ok := w.targets(e)
	if !ok {
		w.warn(OverrideResolutionSkipped, e.path, "", msgResolutionSkipped, e.kindName, e.component)
		return
	}
	if len(missing) > 0 {
		w.warn(OverrideResolutionSkipped, e.path, "", msgResolutionSkippedSites, e.component, e.kindName, strings.Join(missing, ", "))
	}
	var r resolution
	for _, live := range targets {
		w.resolveOne(e, live, containers, labels, volumes, nodeSelector, &r)
	}
	for _, at := range r.order {
		f := r.found[at]
		suffix := ""
		if len(f.sites) > 0 {
			sort.Strings(f.sites)
			suffix = fmt.Sprintf(msgInSites, policies.Plural(len(f.sites), "Site"), strings.Join(f.sites, ", "))
		}
		w.deny(at.code, r.paths[at], f.evidence, "%s%s", f.message, suffix)
	}
}

// targets returns the live workloads entry e is checked against, in Site
// order, and the Sites it names that have none. ok is false when the
// workloads cannot be read at all.
func (w *walker) targets(e *entry) (targets []*Workload, missing []string, ok bool) {
	if w.live == nil {
		return nil, nil, false
	}
	all, ok := w.live.Workloads(e.component, e.kindName)
	if !ok {
		return nil, nil, false
	}
	targets = make([]*Workload, 0, len(all))
	for i := range all {
		// A workload of another kind than asked for is not this one.
		if live := &all[i]; live.Kind == "" || live.Kind == e.kindName {
			targets = append(targets, live)
		}
	}
	// Site order, so that nothing depends on the order Live lists them in.
	slices.SortStableFunc(targets, bySite)
	if e.hasSites {
		var selected []*Workload
		for _, site := range e.sites {
			n := len(selected)
			for _, live := range targets {
				if live.Site == site {
					selected = append(selected, live)
				}
			}
			if len(selected) == n {
				missing = append(missing, site)
			}
		}
		slices.SortStableFunc(selected, bySite)
		sort.Strings(missing)
		targets = selected
		if len(targets) == 0 && len(missing) == 0 {
			return nil, nil, true
		}
	}
	if len(targets) == 0 && len(missing) == 0 {
		return nil, nil, false
	}
	return targets, missing, true
}

// bySite orders workloads by Site.
func bySite(a, b *Workload) int { return strings.Compare(a.Site, b.Site) }

// resolveOne checks entry e against one live workload.
func (w *walker) resolveOne(e *entry, live *Workload, containers []patchedContainer, labels, volumes, nodeSelector *node,
	r *resolution) {
	add := func(code policies.Code, path *field.Path, evidence, format string, args ...any) {
		r.add(live.Site, code, path, evidence, fmt.Sprintf(format, args...))
	}
	// Each list against its own (upstream checkContainerNames): a patch
	// entry in initContainers named like one of the workload's containers
	// would add an init container, which the engine refuses.
	listed := func(init bool) []string {
		if init {
			return live.InitContainers
		}
		return live.Containers
	}
	for _, a := range e.added {
		if slices.Contains(listed(a.init), a.name) {
			add(OverrideContainerExists, a.path, a.name, msgContainerExists, e.kindName, e.component, a.name, addField(a.init))
		}
	}
	for _, c := range containers {
		if !slices.Contains(listed(c.init), c.name) && !e.adds(c) {
			add(OverrideContainerUnknown, c.path(e.path).Child("name"), c.name, msgContainerUnknown,
				e.kindName, e.component, containerNoun(c.init), c.name, addField(c.init))
		}
	}
	// extraArgs against both lists (upstream checkExtraArgsTargets).
	for _, a := range e.args {
		if !slices.Contains(live.Containers, a.name) && !slices.Contains(live.InitContainers, a.name) && !e.addsName(a.name) {
			add(OverrideContainerUnknown, a.path, a.name, msgArgsUnknown, e.kindName, e.component, a.name)
		}
	}
	// Env vars merge on name onto the operator's: a value over its
	// valueFrom, or a valueFrom over its value, leaves both set.
	for _, c := range containers {
		operator := live.Env[c.name]
		if len(operator) == 0 || e.adds(c) {
			continue
		}
		forEnv(c.node, func(i int, name string, source EnvSource) {
			set := operator[name]
			switch {
			case source == EnvValue && set&EnvValueFrom != 0:
				add(OverrideEnvValueAndValueFrom, c.path(e.path).Child("env").Index(i), name, msgEnvOverValueFrom,
					name, containerNoun(c.init), c.name, e.kindName, e.component, "valueFrom", "value")
			case source == EnvValueFrom && set&EnvValue != 0:
				add(OverrideEnvValueAndValueFrom, c.path(e.path).Child("env").Index(i), name, msgEnvOverValueFrom,
					name, containerNoun(c.init), c.name, e.kindName, e.component, "value", "valueFrom")
			}
		})
	}
	// Paths below the patch's pod template, built only for a finding.
	templatePath := func(names ...string) *field.Path {
		return e.path.Child(fieldPatch, "spec", "template").Child(names[0], names[1:]...)
	}
	forStrings(labels, func(key, value string) {
		// A reserved key is denied by the walk already.
		if selected, ok := live.SelectorLabels[key]; ok && selected != value && !isReserved(key) {
			add((OverrideSelectorLabel), templatePath("metadata", "labels").Key(key), key+"="+value, msgSelectorLabel,
				key, e.kindName, e.component)
		}
	})
	forStrings(nodeSelector, func(key, value string) {
		if set, ok := live.NodeSelector[key]; ok && set != value {
			add((OverrideNodeSelectorOwned), templatePath("spec", "nodeSelector").Key(key), key+"="+value,
				msgNodeSelectorOwned, key, e.kindName, e.component)
		}
	})
	if volumes != nil && volumes.kind == yaml.SequenceNode {
		for j, item := range volumes.content {
			item = deref(item)
			name := lookup(item, "name")
			if name == nil || !isString(name) || !slices.Contains(live.Volumes, name.value) {
				continue
			}
			// An entry holding nothing but the name changes nothing.
			if len(item.content) > 2 {
				add((OverrideVolumeRedefined), templatePath("spec", "volumes").Index(j), w.evidence(item), msgVolumeRedefined,
					name.value, e.kindName, e.component)
			}
		}
	}
	for _, c := range containers {
		mounts := lookup(c.node, "volumeMounts")
		if mounts == nil || mounts.kind != yaml.SequenceNode {
			continue
		}
		for j, item := range mounts.content {
			item = deref(item)
			mountPath, name := lookup(item, "mountPath"), lookup(item, "name")
			if mountPath == nil || !isString(mountPath) {
				continue
			}
			operatorVolume, mounted := live.Mounts[c.name][mountPath.value]
			if !mounted || (name != nil && isString(name) && name.value == operatorVolume) {
				continue
			}
			add((OverrideVolumeRedefined), c.path(e.path).Child("volumeMounts").Index(j), w.evidence(item), msgMountRedefined,
				c.name, e.kindName, e.component, operatorVolume)
		}
	}
}

// forEnv calls fn for every env var of the patch container c that takes one
// source only: a non-empty value (EnvValue) or valueFrom (EnvValueFrom);
// one with both is refused on its own (apply.go).
func forEnv(c *node, fn func(i int, name string, source EnvSource)) {
	env := lookup(c, "env")
	if env == nil || env.kind != yaml.SequenceNode {
		return
	}
	for i, item := range env.content {
		name := lookup(item, "name")
		if name == nil || !isString(name) {
			continue
		}
		if source := envSource(item); source == EnvValue || source == EnvValueFrom {
			fn(i, name.value, source)
		}
	}
}

// envSource is how the env var item of a patch takes its value. An empty
// string value is no value: the API server admits it beside valueFrom.
func envSource(item *node) EnvSource {
	var source EnvSource
	if value := lookup(item, "value"); value != nil && !isNull(value) && (!isString(value) || value.value != "") {
		source |= EnvValue
	}
	if valueFrom := lookup(item, "valueFrom"); valueFrom != nil && !isNull(valueFrom) {
		source |= EnvValueFrom
	}
	return source
}

// forStrings calls fn for every string-valued entry of mapping n.
func forStrings(n *node, fn func(key, value string)) {
	if n == nil || n.kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.content); i += 2 {
		key, value := deref(n.content[i]), deref(n.content[i+1])
		if key.kind == yaml.ScalarNode && isString(value) {
			fn(key.value, value.value)
		}
	}
}

// hasEntries reports whether n is a mapping or list with entries.
func hasEntries(n *node) bool {
	return n != nil && (n.kind == yaml.MappingNode || n.kind == yaml.SequenceNode) && len(n.content) > 0
}
