// Rule 1: product custom resources may not override the pod ServiceAccount.
//
// Reads: metadata.name, and in every object stored under a key podOverrides,
// at any depth (upstream: spec.<role>.podOverrides and
// spec.<role>.roleGroups.<group>.podOverrides), its spec.serviceAccountName
// and deprecated spec.serviceAccount.
// Allows: either field absent or null; either field equal to the derived name
// DerivedServiceAccountName(kind, metadata.name), with a warning that it is
// redundant. Any other value (another name, "", a non-string) is denied, and
// so is any value at all when metadata.name is empty (generateName), because
// the derived name cannot be known yet.

package serviceaccount

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// podOverridesKey is the key under which kubedoop product custom resources
// hold a pod template (corev1.PodTemplateSpec) that the operator merges into
// the pods it builds.
const podOverridesKey = "podOverrides"

// maxWalkDepth bounds the search for podOverrides: the entries of maps and
// lists nested at most this deep below the object (the object itself is depth
// 0) are examined, deeper ones are not. It keeps hostile nesting from costing
// unbounded stack, and ends the walk of a map that contains itself (which
// only Go code, never JSON decoding, can build). Nothing is missed that
// matters: the operator reads podOverrides only from the maps at depth 2
// (spec.<role>) and 4 (spec.<role>.roleGroups.<group>).
const maxWalkDepth = 64

// validateProductCR checks every podOverrides of a product custom resource of
// the given kind.
func validateProductCR(kind string, obj map[string]any) []policies.Finding {
	name, _ := fields.String(obj, "metadata", "name")
	w := overrideWalker{kind: kind, name: name}
	if name != "" {
		w.derived = DerivedServiceAccountName(kind, name)
	}
	w.walk(obj, 0)
	return w.findings
}

// overrideWalker searches an object for podOverrides. It keeps the path to
// the current value as steps and builds a field.Path only for a finding, so
// that walking a large object allocates little.
type overrideWalker struct {
	kind, name, derived string

	path []pathStep
	// keys is one stack shared by every level of the walk: each map pushes
	// its sorted keys, visits them and pops them again.
	keys     []string
	findings []policies.Finding
}

// pathStep is one step below the object: a map key, or a list index when
// index >= 0.
type pathStep struct {
	key   string
	index int
}

// walk visits the maps and lists inside v, which sits at depth. Map keys are
// visited in sorted order so that findings come out in the same order every
// time, even for distinct fields whose paths render alike.
func (w *overrideWalker) walk(v any, depth int) {
	if depth > maxWalkDepth {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		start := len(w.keys)
		for k, child := range v {
			if isContainer(child) {
				w.keys = append(w.keys, k)
			}
		}
		end := len(w.keys)
		slices.Sort(w.keys[start:end])
		// Index w.keys afresh each time: a deeper level may grow (and so
		// move) it, but it leaves [start:end] as it found it.
		for i := start; i < end; i++ {
			k := w.keys[i]
			w.path = append(w.path, pathStep{key: k, index: -1})
			if k == podOverridesKey {
				if override, ok := v[k].(map[string]any); ok {
					w.checkOverride(override)
				}
			}
			w.walk(v[k], depth+1)
			w.path = w.path[:len(w.path)-1]
		}
		w.keys = w.keys[:start]
	case []any:
		for i, item := range v {
			if isContainer(item) {
				w.path = append(w.path, pathStep{index: i})
				w.walk(item, depth+1)
				w.path = w.path[:len(w.path)-1]
			}
		}
	}
}

// checkOverride reports the ServiceAccount fields of the pod template
// override at the walker's current path.
func (w *overrideWalker) checkOverride(override map[string]any) {
	spec, ok := fields.Map(override, "spec")
	if !ok {
		return
	}
	for _, name := range serviceAccountFields {
		v, set := spec[name]
		// null is absent: the operator decodes podOverrides into a typed
		// PodTemplateSpec, where null leaves the field empty and unapplied.
		if !set || v == nil {
			continue
		}
		path := w.fieldPath().Child("spec", name)
		switch s, isString := v.(string); {
		case w.name == "":
			w.findings = append(w.findings, policies.Denial(CodeOverridden, path, evidenceOf(v), msgOverriddenNoName, w.kind))
		case isString && s == w.derived:
			w.findings = append(w.findings, policies.Warning(CodeOverrideRedundant, path, s, msgOverrideRedundant))
		default:
			w.findings = append(w.findings, policies.Denial(CodeOverridden, path, evidenceOf(v), msgOverridden, w.kind, w.derived))
		}
	}
}

// fieldPath renders the walker's current path. The object is a map, so the
// first step is always a key.
func (w *overrideWalker) fieldPath() *field.Path {
	p := field.NewPath(w.path[0].key)
	for _, step := range w.path[1:] {
		if step.index >= 0 {
			p = p.Index(step.index)
		} else {
			p = p.Child(step.key)
		}
	}
	return p
}

// isContainer reports whether v can hold a podOverrides: a map or a list.
func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
