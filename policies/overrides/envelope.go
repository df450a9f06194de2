// This file checks an overrides document and dispatches its entries. It
// reads:
//
//   - apiVersion: required, exactly overrides.unbounded-cloud.io/v1alpha1. A
//     document with another apiVersion is not checked further: its schema is
//     not this one.
//   - overrides: a list of entries (entry.go); absent or empty is a document
//     that overrides nothing.
//   - per entry, which fields it has: component, kind, sites, patch,
//     extraArgs, addContainers and addInitContainers; any other is unknown.
//     At least one of patch, extraArgs, addContainers and addInitContainers
//     must be present and not empty.

package overrides

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// APIVersion is the only overrides document version (upstream).
const APIVersion = "overrides.unbounded-cloud.io/v1alpha1"

// Field names of an entry.
const (
	fieldComponent         = "component"
	fieldKind              = "kind"
	fieldSites             = "sites"
	fieldPatch             = "patch"
	fieldExtraArgs         = "extraArgs"
	fieldAddContainers     = "addContainers"
	fieldAddInitContainers = "addInitContainers"
)

// Messages about the document.
const (
	msgAPIVersionMissing = "apiVersion is required and must be " + APIVersion
	msgAPIVersionUnknown = "the only supported apiVersion is " + APIVersion + "; the rest of this document was not checked"
	msgUnknownDocField   = "an overrides document has only apiVersion and overrides; check the spelling of this field"
	msgUnknownEntryField = "an override has only component, kind, sites, patch, extraArgs, addContainers and addInitContainers; " +
		"check the spelling of this field"
	msgOverridesNotList = "overrides must be a list of overrides"
	msgEntryNotMapping  = "an override must be a mapping"
	msgEntryNoEffect    = "this override changes nothing; set patch, extraArgs, addContainers or addInitContainers"
)

// entry is what the checks after the first pass need of one override.
type entry struct {
	path *field.Path
	// component is the component's name, "" when it is missing or unknown.
	component string
	comp      component
	// kind is the kind the patch is checked against: the entry's kind, or
	// eitherKind when that is missing or wrong. kindName is set only when the
	// kind is valid for a known component.
	kind     workloadKind
	kindName string
	// hasSites is set when the entry has a sites list; sites are its valid,
	// distinct Site names. Without one the entry selects every Site.
	hasSites bool
	sites    []string
	// patch is the patch mapping, nil when absent or not a mapping, and
	// containers the named entries of its containers and initContainers.
	patch      *node
	containers []patchedContainer
	// terms is the number of the patch's required node affinity terms, and
	// termsPath where they are (apply.go); emptyTerm is the first of them
	// without requirements, nil when none is.
	terms     int
	termsPath *field.Path
	emptyTerm *field.Path
	// order is the entry's place among the entries of every document, in
	// the engine's order: sorted key, then index.
	order int
	// claims are the values the patch sets at merged positions (compose.go),
	// and meets is set when another entry reaches a workload this one
	// reaches, so that they can conflict.
	claims []entryClaim
	meets  bool
	// args are the containers extraArgs names.
	args []namedRef
	// added are the containers addContainers (init false) and
	// addInitContainers (init true) declare.
	added []addition
}

// entryFields are the values of an entry's fields, nil for those it lacks.
type entryFields struct {
	component, kind, sites, patch, extraArgs, addContainers, addInitContainers *node
}

// namedRef is a container name and where the document gives it.
type namedRef struct {
	name string
	path *field.Path
}

// addition is a container an entry declares it adds.
type addition struct {
	namedRef
	init bool
}

// envelope checks the document mapping root at path.
func (w *walker) envelope(root *node, path *field.Path) {
	var apiVersion, overrides *node
	w.pairs(root, placeOf(path), false, func(key string, value *node) {
		switch key {
		case "apiVersion":
			apiVersion = value
		case "overrides":
			overrides = value
		default:
			w.deny(OverrideUnknownField, pathOf(path, key, false), w.evidence(value), msgUnknownDocField)
		}
	})
	if !w.apiVersion(apiVersion, path.Child("apiVersion")) || overrides == nil {
		return
	}
	w.descend(func() {
		listPath := path.Child("overrides")
		list, ok := w.enter(overrides)
		switch {
		case !ok:
			return
		case isNull(list):
			w.deny(OverrideNull, listPath, "", msgNull)
			return
		case list.kind != yaml.SequenceNode:
			w.deny(OverrideTypeInvalid, listPath, w.evidence(list), msgOverridesNotList)
			return
		case w.tooManyEntries(listPath, list):
			return
		}
		for i, item := range list.content {
			w.descend(func() { w.entry(item, listPath.Index(i)) })
		}
	})
}

// apiVersion checks the document's apiVersion, n (nil when absent). It
// returns false when the rest of the document must not be checked.
func (w *walker) apiVersion(n *node, path *field.Path) bool {
	if n == nil {
		w.deny(OverrideAPIVersionUnknown, path, "", msgAPIVersionMissing)
		return true
	}
	var ok bool
	w.descend(func() { n, ok = w.enter(n) })
	switch {
	case !ok:
		return false
	case isNull(n):
		w.deny(OverrideNull, path, "", msgNull)
		return true
	}
	if version, _ := scalarString(n); version != APIVersion {
		w.deny(OverrideAPIVersionUnknown, path, w.evidence(n), msgAPIVersionUnknown)
		return false
	}
	return true
}

// entry checks one override, item, at path.
func (w *walker) entry(item *node, path *field.Path) {
	n, ok := w.enter(item)
	switch {
	case !ok:
		return
	case isNull(n):
		w.deny(OverrideNull, path, "", msgNull)
		return
	case n.kind != yaml.MappingNode:
		w.deny(OverrideTypeInvalid, path, w.evidence(n), msgEntryNotMapping)
		return
	}
	var fields entryFields
	w.pairs(n, placeOf(path), false, func(key string, value *node) {
		switch key {
		case fieldComponent:
			fields.component = value
		case fieldKind:
			fields.kind = value
		case fieldSites:
			fields.sites = value
		case fieldPatch:
			fields.patch = value
		case fieldExtraArgs:
			fields.extraArgs = value
		case fieldAddContainers:
			fields.addContainers = value
		case fieldAddInitContainers:
			fields.addInitContainers = value
		default:
			w.deny(OverrideUnknownField, pathOf(path, key, false), w.evidence(value), msgUnknownEntryField)
		}
	})
	e := &entry{path: path, kind: eitherKind}
	w.descend(func() {
		w.component(e, fields.component)
		w.kind(e, fields.kind)
		w.sites(e, fields.sites)
		w.extraArgs(e, fields.extraArgs)
		w.additions(e, fields.addContainers, fieldAddContainers, false)
		w.additions(e, fields.addInitContainers, fieldAddInitContainers, true)
		w.patch(e, fields.patch)
	})
	if w.stopped {
		return
	}
	e.containers = patchedContainers(e.patch)
	if !hasEffect(fields) {
		w.deny(OverrideEmpty, path, w.evidence(n), msgEntryNoEffect)
	}
	w.checkAdditions(e)
	w.applyChecks(e)
	w.warnReplacements(e)
	w.resolve(e)
	if e.component != "" && e.kindName != "" {
		e.order = len(w.entries)
		w.entries = append(w.entries, e)
	}
}

// hasEffect reports whether any of the fields that change a workload is
// present and not an empty mapping or list. A null counts as present: it is
// reported as null.
func hasEffect(fields entryFields) bool {
	for _, n := range []*node{fields.patch, fields.extraArgs, fields.addContainers, fields.addInitContainers} {
		n = deref(n)
		if n == nil {
			continue
		}
		if (n.kind != yaml.MappingNode && n.kind != yaml.SequenceNode) || len(n.content) > 0 {
			return true
		}
	}
	return false
}
