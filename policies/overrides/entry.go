// This file checks the fields of one override entry (upstream) but its
// patch (patch.go). It reads and allows:
//
//   - component: one of net, machina, gantry, metalman, storage;
//   - kind: Deployment or DaemonSet, one the component runs as
//     (components.go);
//   - sites: per-Site components only; omitted selects every Site; a list
//     of distinct Site object names, never empty;
//   - extraArgs: container name -> a non-empty list of arguments;
//   - addContainers, addInitContainers: lists of distinct, non-empty names
//     of the containers (init containers) the patch adds, never the same
//     name in both (additions.go checks the patch defines them);
//   - patch: a mapping.
//
// String fields take any plain scalar as written, as the operator's decoder
// does.

package overrides

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages about the fields of an entry.
const (
	msgComponentRequired = "component is required: one of " + componentNames
	msgComponentUnknown  = "component must be one of " + componentNames
	msgKindRequired      = "kind is required: Deployment or DaemonSet"
	msgKindRequiredFor   = "kind is required: component %s runs as %s"
	msgKindUnknown       = "kind must be Deployment or DaemonSet"
	msgKindMismatch      = "component %s runs as %s only, so this override would match nothing"
	msgSitesNotList      = "sites must be a list of Site names"
	msgSitesSingleton    = "component %s is a cluster singleton, not per Site; omit sites"
	msgSitesEmpty        = "sites is empty, which would select no Site; omit it to select every Site"
	msgSiteNotName       = "a Site name must be the name of a Site object: a lowercase RFC 1123 subdomain"
	msgSiteRepeated      = "this Site is listed more than once"
	msgExtraArgsNotMap   = "extraArgs must map container names to lists of arguments"
	msgArgsNotList       = "the arguments for container %s must be a list"
	msgArgsEmpty         = "no arguments are listed for container %s; remove the key or add arguments"
	msgArgNotScalar      = "each argument must be a single value"
	msgNameEmpty         = "a container name must not be empty"
	msgAddNotList        = "%s must be a list of the names of the containers the patch adds"
	msgAddNotName        = "%s lists the names of containers the patch adds; define the container itself in the patch, under " +
		"spec.template.spec.%s, and list only its name here"
	msgAddRepeated = "%s lists container %s more than once"
	msgAddInBoth   = "container %s is declared in both addContainers and addInitContainers; container names are unique across both lists"
	msgPatchNotMap = "patch must be a mapping: a strategic-merge patch of the whole workload"
)

// value enters the value n of an entry field at path, reporting a null. It
// returns false when there is nothing more to check.
func (w *walker) value(n *node, path *field.Path) (*node, bool) {
	if n == nil {
		return nil, false
	}
	n, ok := w.enter(n)
	if !ok {
		return nil, false
	}
	if isNull(n) {
		w.deny(CodeNull, path, "", msgNull)
		return nil, false
	}
	return n, true
}

func (w *walker) component(e *entry, n *node) {
	path := e.path.Child(fieldComponent)
	if n == nil {
		w.deny(CodeComponentUnknown, path, "", msgComponentRequired)
		return
	}
	n, ok := w.value(n, path)
	if !ok {
		return
	}
	name, _ := scalarString(n)
	comp, known := components[name]
	if !known {
		w.deny(CodeComponentUnknown, path, w.evidence(n), msgComponentUnknown)
		return
	}
	e.component, e.comp = name, comp
}

// kind checks the entry's kind; component must have run first.
func (w *walker) kind(e *entry, n *node) {
	path := e.path.Child(fieldKind)
	if n == nil {
		if e.component != "" {
			w.deny(CodeKindMismatch, path, "", msgKindRequiredFor, e.component, e.comp.kinds)
		} else {
			w.deny(CodeKindMismatch, path, "", msgKindRequired)
		}
		return
	}
	n, ok := w.value(n, path)
	if !ok {
		return
	}
	name, _ := scalarString(n)
	kind, known := parseKind(name)
	switch {
	case !known:
		w.deny(CodeKindMismatch, path, w.evidence(n), msgKindUnknown)
	case e.component != "" && e.comp.kinds&kind == 0:
		w.deny(CodeKindMismatch, path, e.component+"/"+name, msgKindMismatch, e.component, e.comp.kinds)
	default:
		e.kind = kind
		if e.component != "" {
			e.kindName = name
		}
	}
}

// sites checks the Site selector; component must have run first.
func (w *walker) sites(e *entry, n *node) {
	path := e.path.Child(fieldSites)
	n, ok := w.value(n, path)
	switch {
	case !ok:
		return
	case n.kind != yaml.SequenceNode:
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgSitesNotList)
		return
	case e.component != "" && !e.comp.perSite:
		w.deny(CodeSitesInvalid, path, w.evidence(n), msgSitesSingleton, e.component)
		return
	case len(n.content) == 0:
		e.hasSites = true
		w.deny(CodeSitesInvalid, path, "", msgSitesEmpty)
		return
	}
	e.hasSites = true
	seen := map[string]bool{}
	for j, item := range n.content {
		w.descend(func() {
			itemPath := path.Index(j)
			item, ok := w.value(item, itemPath)
			if !ok {
				return
			}
			site, isScalar := scalarString(item)
			switch {
			case !isScalar || len(validation.IsDNS1123Subdomain(site)) > 0:
				w.deny(CodeSitesInvalid, itemPath, w.evidence(item), msgSiteNotName)
			case seen[site]:
				w.deny(CodeSitesInvalid, itemPath, site, msgSiteRepeated)
			default:
				e.sites = append(e.sites, site)
			}
			seen[site] = true
		})
	}
}

func (w *walker) extraArgs(e *entry, n *node) {
	path := e.path.Child(fieldExtraArgs)
	n, ok := w.value(n, path)
	if !ok {
		return
	}
	if n.kind != yaml.MappingNode {
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgExtraArgsNotMap)
		return
	}
	w.pairs(n, placeOf(path), true, func(name string, args *node) {
		argsPath := path.Key(name)
		if name == "" {
			w.deny(CodeNameInvalid, argsPath, "", msgNameEmpty)
			return
		}
		e.args = append(e.args, namedRef{name: name, path: argsPath})
		w.descend(func() {
			args, ok := w.value(args, argsPath)
			switch {
			case !ok:
				return
			case args.kind != yaml.SequenceNode:
				w.deny(CodeTypeInvalid, argsPath, w.evidence(args), msgArgsNotList, name)
				return
			case len(args.content) == 0:
				w.deny(CodeEmpty, argsPath, "", msgArgsEmpty, name)
				return
			}
			for k, arg := range args.content {
				w.descend(func() {
					if arg, ok := w.value(arg, argsPath.Index(k)); ok {
						if _, isScalar := scalarString(arg); !isScalar {
							w.deny(CodeTypeInvalid, argsPath.Index(k), w.evidence(arg), msgArgNotScalar)
						}
					}
				})
			}
		})
	})
}

// additions checks the add list fieldName of the entry; with init set it is
// addInitContainers, which runs after addContainers.
func (w *walker) additions(e *entry, n *node, fieldName string, init bool) {
	path := e.path.Child(fieldName)
	n, ok := w.value(n, path)
	if !ok {
		return
	}
	if n.kind != yaml.SequenceNode {
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgAddNotList, fieldName)
		return
	}
	listName := "containers"
	if init {
		listName = "initContainers"
	}
	for j, item := range n.content {
		w.descend(func() {
			itemPath := path.Index(j)
			item, ok := w.value(item, itemPath)
			if !ok {
				return
			}
			name, isScalar := scalarString(item)
			switch {
			case !isScalar:
				w.deny(CodeTypeInvalid, itemPath, w.evidence(item), msgAddNotName, fieldName, listName)
				return
			case name == "":
				w.deny(CodeNameInvalid, itemPath, "", msgNameEmpty)
				return
			}
			for _, other := range e.added {
				if other.name != name {
					continue
				}
				if other.init == init {
					w.deny(CodeNameInvalid, itemPath, name, msgAddRepeated, fieldName, name)
				} else {
					w.deny(CodeNameInvalid, itemPath, name, msgAddInBoth, name)
				}
				return
			}
			e.added = append(e.added, addition{namedRef: namedRef{name: name, path: itemPath}, init: init})
		})
	}
}

// patch checks the entry's patch against the allowlist (patch.go).
func (w *walker) patch(e *entry, n *node) {
	path := e.path.Child(fieldPatch)
	n, ok := w.value(n, path)
	if !ok {
		return
	}
	if n.kind != yaml.MappingNode {
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgPatchNotMap)
		return
	}
	e.patch = n
	w.walkFields(n, patchRule, placeOf(path), "", e.kind)
}
