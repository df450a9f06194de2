// This file checks the fields of one override entry (upstream) but its
// patch (patch.go). It reads and allows:
//
//   - component: one of the component table (components.go);
//   - kind: Deployment or DaemonSet, one the component runs as;
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
)

// Messages about the fields of an entry.
const (
	msgComponentRequired = "component is required: one of %s"
	msgComponentUnknown  = "component must be one of %s"
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

// value enters the value n of an entry field at p, reporting a null. It
// returns false when there is nothing more to check.
func (w *walker) value(n *node, p place) (*node, bool) {
	if n == nil {
		return nil, false
	}
	n, ok := w.enter(n)
	if !ok {
		return nil, false
	}
	if isNull(n) {
		w.deny(OverrideNull, w.path(p), "", msgNull)
		return nil, false
	}
	return n, true
}

// entryField is the place of the entry's field name.
func (w *walker) entryField(e *entry, name string) place {
	return w.child(placeOf(e.path), name, false)
}

func (w *walker) component(e *entry, n *node) {
	p := w.entryField(e, fieldComponent)
	if n == nil {
		w.deny(OverrideComponentUnknown, w.path(p), "", msgComponentRequired, w.table.names)
		return
	}
	n, ok := w.value(n, p)
	if !ok {
		return
	}
	name, _ := scalarString(n)
	comp, known := w.table.lookup(name)
	if !known {
		w.deny(OverrideComponentUnknown, w.path(p), w.evidence(n), msgComponentUnknown, w.table.names)
		return
	}
	e.component, e.comp = name, comp
}

// kind checks the entry's kind; component must have run first.
func (w *walker) kind(e *entry, n *node) {
	p := w.entryField(e, fieldKind)
	if n == nil {
		if e.component != "" {
			w.deny(OverrideKindMismatch, w.path(p), "", msgKindRequiredFor, e.component, e.comp.kinds)
		} else {
			w.deny(OverrideKindMismatch, w.path(p), "", msgKindRequired)
		}
		return
	}
	n, ok := w.value(n, p)
	if !ok {
		return
	}
	name, _ := scalarString(n)
	kind, known := parseKind(name)
	switch {
	case !known:
		w.deny(OverrideKindMismatch, w.path(p), w.evidence(n), msgKindUnknown)
	case e.component != "" && e.comp.kinds&kind == 0:
		w.deny(OverrideKindMismatch, w.path(p), e.component+"/"+name, msgKindMismatch, e.component, e.comp.kinds)
	default:
		e.kind = kind
		if e.component != "" {
			e.kindName = name
		}
	}
}

// sites checks the Site selector; component must have run first.
func (w *walker) sites(e *entry, n *node) {
	p := w.entryField(e, fieldSites)
	n, ok := w.value(n, p)
	switch {
	case !ok:
		return
	case n.kind != yaml.SequenceNode:
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgSitesNotList)
		return
	case e.component != "" && !e.comp.perSite:
		w.deny(OverrideSitesInvalid, w.path(p), w.evidence(n), msgSitesSingleton, e.component)
		return
	case len(n.content) == 0:
		e.hasSites = true
		w.deny(OverrideSitesInvalid, w.path(p), "", msgSitesEmpty)
		return
	}
	e.hasSites = true
	seen := map[string]bool{}
	for j, item := range n.content {
		w.descend(func() {
			at := w.item(p, j)
			item, ok := w.value(item, at)
			if !ok {
				return
			}
			site, isScalar := scalarString(item)
			switch {
			case !isScalar || len(validation.IsDNS1123Subdomain(site)) > 0:
				w.deny(OverrideSitesInvalid, w.path(at), w.evidence(item), msgSiteNotName)
			case seen[site]:
				w.deny(OverrideSitesInvalid, w.path(at), site, msgSiteRepeated)
			default:
				e.sites = append(e.sites, site)
			}
			seen[site] = true
		})
	}
}

func (w *walker) extraArgs(e *entry, n *node) {
	p := w.entryField(e, fieldExtraArgs)
	n, ok := w.value(n, p)
	if !ok {
		return
	}
	if n.kind != yaml.MappingNode {
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgExtraArgsNotMap)
		return
	}
	w.pairs(n, p, true, func(name string, args *node) {
		at := w.child(p, name, true)
		if name == "" {
			w.deny(OverrideNameInvalid, w.path(at), "", msgNameEmpty)
			return
		}
		e.args = append(e.args, namedRef{name: name, path: w.path(at)})
		w.descend(func() {
			args, ok := w.value(args, at)
			switch {
			case !ok:
				return
			case args.kind != yaml.SequenceNode:
				w.deny(OverrideTypeInvalid, w.path(at), w.evidence(args), msgArgsNotList, name)
				return
			case len(args.content) == 0:
				w.deny(OverrideEmpty, w.path(at), "", msgArgsEmpty, name)
				return
			}
			for k, arg := range args.content {
				w.descend(func() {
					argAt := w.item(at, k)
					if arg, ok := w.value(arg, argAt); ok {
						if _, isScalar := scalarString(arg); !isScalar {
							w.deny(OverrideTypeInvalid, w.path(argAt), w.evidence(arg), msgArgNotScalar)
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
	p := w.entryField(e, fieldName)
	n, ok := w.value(n, p)
	if !ok {
		return
	}
	if n.kind != yaml.SequenceNode {
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgAddNotList, fieldName)
		return
	}
	listName := "containers"
	if init {
		listName = "initContainers"
	}
	for j, item := range n.content {
		w.descend(func() {
			at := w.item(p, j)
			item, ok := w.value(item, at)
			if !ok {
				return
			}
			name, isScalar := scalarString(item)
			switch {
			case !isScalar:
				w.deny(OverrideTypeInvalid, w.path(at), w.evidence(item), msgAddNotName, fieldName, listName)
				return
			case name == "":
				w.deny(OverrideNameInvalid, w.path(at), "", msgNameEmpty)
				return
			}
			for _, other := range e.added {
				if other.name != name {
					continue
				}
				if other.init == init {
					w.deny(OverrideNameInvalid, w.path(at), name, msgAddRepeated, fieldName, name)
				} else {
					w.deny(OverrideNameInvalid, w.path(at), name, msgAddInBoth, name)
				}
				return
			}
			e.added = append(e.added, addition{namedRef: namedRef{name: name, path: w.path(at)}, init: init})
		})
	}
}

// patch checks the entry's patch against the allowlist (patch.go).
func (w *walker) patch(e *entry, n *node) {
	p := w.entryField(e, fieldPatch)
	n, ok := w.value(n, p)
	if !ok {
		return
	}
	if n.kind != yaml.MappingNode {
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgPatchNotMap)
		return
	}
	e.patch = n
	w.walkFields(n, patchRule, p, "", e.kind)
}
