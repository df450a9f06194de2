// This file checks that every container an entry declares it adds is
// defined by its patch (upstream). It reads addContainers and
// addInitContainers, and the names of the entries of the patch's
// spec.template.spec.containers and .initContainers.
//
// Strategic merge cannot tell a sidecar from a typo: a patch entry whose
// name the workload lacks creates a container either way. So an entry adds
// a container only by declaring its name in addContainers (or
// addInitContainers, for an init container) and defining it in the patch's
// matching list; a declared name the patch does not define would add
// nothing, and is an error. A patch entry the workload lacks and the entry
// does not declare is found by resolution (resolve.go).

package overrides

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const msgAdditionUndefined = "%s declares container %s, but the patch defines no %s with that name, so nothing would be added; " +
	"define it under patch.spec.template.spec.%s"

// patchedContainer is one entry of the patch's containers or initContainers
// that has a name.
type patchedContainer struct {
	name string
	init bool
	// index is the entry's position in its list.
	index int
	node  *node
}

// listName is the pod spec field that holds the container.
func (c patchedContainer) listName() string { return containerList(c.init) }

// path is the container's path below the entry at entryPath.
func (c patchedContainer) path(entryPath *field.Path) *field.Path {
	return entryPath.Child(fieldPatch, "spec", "template", "spec", c.listName()).Index(c.index)
}

// containerList names the pod spec field of containers (init false) or init
// containers (init true).
func containerList(init bool) string {
	if init {
		return "initContainers"
	}
	return "containers"
}

// containerNoun names a container or an init container in messages.
func containerNoun(init bool) string {
	if init {
		return "init container"
	}
	return "container"
}

// addField names the add list of containers (init false) or init containers.
func addField(init bool) string {
	if init {
		return fieldAddInitContainers
	}
	return fieldAddContainers
}

// patchedContainers returns the named entries of the patch's containers and
// initContainers, in that order. Entries without a string name were reported
// by the walk.
func patchedContainers(patch *node) []patchedContainer {
	var out []patchedContainer
	for _, init := range []bool{false, true} {
		list := lookup(patch, "spec", "template", "spec", containerList(init))
		if list == nil || list.kind != yaml.SequenceNode {
			continue
		}
		for i, item := range list.content {
			name := lookup(item, "name")
			if name == nil || !isString(name) || name.value == "" {
				continue
			}
			out = append(out, patchedContainer{name: name.value, init: init, index: i, node: deref(item)})
		}
	}
	return out
}

// adds reports whether the entry declares it adds the patch container c.
func (e *entry) adds(c patchedContainer) bool {
	for _, a := range e.added {
		if a.name == c.name && a.init == c.init {
			return true
		}
	}
	return false
}

// addsName reports whether the entry declares it adds a container or init
// container called name.
func (e *entry) addsName(name string) bool {
	for _, a := range e.added {
		if a.name == name {
			return true
		}
	}
	return false
}

// checkAdditions reports each declared addition the patch does not define.
func (w *walker) checkAdditions(e *entry) {
	if len(e.added) == 0 {
		return
	}
	defined := e.containers
	for _, a := range e.added {
		found := false
		for _, c := range defined {
			if c.name == a.name && c.init == a.init {
				found = true
				break
			}
		}
		if !found {
			w.deny(OverrideAdditionUndefined, a.path, a.name, msgAdditionUndefined,
				addField(a.init), a.name, containerNoun(a.init), containerList(a.init))
		}
	}
}
