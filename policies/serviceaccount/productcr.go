// Rule 1: product custom resources may not override the pod ServiceAccount.
//
// Reads: metadata.name, and in every object stored under a key podOverrides,
// at any depth (upstream: spec.<role>.podOverrides and
// spec.<role>.roleGroups.<group>.podOverrides), its spec.serviceAccountName
// and deprecated spec.serviceAccount, where "spec", "serviceAccountName" and
// "serviceAccount" are every spelling that encoding/json reads as that field
// (keysReadAs: "SPEC", "ServiceAccountName", "ſerviceAccountName", ...).
// The key podOverrides itself is matched exactly (docs/service-account.md,
// "Edges").
// Allows: either field absent or null; either field equal to the derived name
// Naming.ServiceAccount(group and kind, metadata.name), with a warning that it is
// redundant. Any other value (another name, "", a non-string) is denied, and
// so is any value at all when metadata.name is empty (generateName), because
// the name cannot be known yet. The name is the one Naming gives this
// product's pods (naming.go), "derived" below. A map or list nested deeper than
// maxWalkDepth is denied (ServiceAccountWalkTooDeep), never skipped.

package serviceaccount

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// podOverridesKey is the key under which kubedoop product custom resources
// hold a pod template (corev1.PodTemplateSpec) that the operator merges into
// the pods it builds. It is matched exactly: the operator finds it through
// its typed custom resource, which the Kubernetes JSON decoder fills
// case-sensitively, and the product CRDs' structural schemas prune any other
// spelling at the role and role group levels.
const podOverridesKey = "podOverrides"

// maxWalkDepth bounds the search for podOverrides: the maps and lists nested
// at most this deep below the object (the object itself is depth 0) are
// examined; a deeper one is denied with ServiceAccountWalkTooDeep at its path.
//
// The bound is no shallower than any object gatehouse is sent can be: the
// API server's JSON decoder (sigs.k8s.io/json) and the webhook's
// (encoding/json) both refuse nesting deeper than 10000 levels, the object
// itself being the first, so every map or list of a decoded object is at
// depth 9999 or less and is examined. The bound is only ever reached by an
// object built in Go, such as a map that contains itself, whose walk it ends.
// The walk keeps its own stack, so the depth costs heap, not goroutine stack.
const maxWalkDepth = 10000

// validateProductCR checks every podOverrides of a product custom resource of
// kind gk.
func validateProductCR(gk schema.GroupKind, obj map[string]any, naming Naming) []policies.Finding {
	name, _ := fields.String(obj, "metadata", "name")
	// Room for the depth of a typical product custom resource, so that the
	// stacks rarely grow.
	w := overrideWalker{kind: gk.Kind, name: name,
		stack: make([]frame, 0, 16), path: make([]pathStep, 0, 16), keys: make([]string, 0, 64)}
	if name != "" {
		w.derived = naming.ServiceAccount(gk, name)
	}
	w.walk(obj)
	return w.findings
}

// overrideWalker searches an object for podOverrides. It keeps the path to
// the current value as steps and builds a field.Path only for a finding, so
// that walking a large object allocates little.
type overrideWalker struct {
	kind, name, derived string

	// stack holds the maps and lists being visited, the object first, and
	// path the step to each of them below the object: len(path) is always
	// len(stack)-1, the depth of the top frame.
	stack []frame
	path  []pathStep
	// keys is one stack shared by every map frame: each map pushes its
	// sorted container-valued keys, visits them and pops them again.
	keys     []string
	findings []policies.Finding
	// tooDeep is set once a map or list past maxWalkDepth has been
	// reported: one finding says enough, and a wide map at the bound would
	// otherwise report each of its children.
	tooDeep bool
}

// frame is one map or list being visited. For a map, keys[next:end] are the
// keys still to visit and keys[start:end] its share of the shared stack; for
// a list, list[next:end] the items still to visit.
type frame struct {
	isMap            bool
	m                map[string]any
	list             []any
	start, next, end int
}

// pathStep is one step below the object: a map key, or a list index when
// index >= 0.
type pathStep struct {
	key   string
	index int
}

// walk visits every map and list inside obj, depth first, with a stack of
// its own rather than recursion. Map keys are visited in sorted order so
// that findings come out in the same order every time, even for distinct
// fields whose paths render alike.
func (w *overrideWalker) walk(obj map[string]any) {
	w.push(obj)
	for len(w.stack) > 0 {
		// Index the top afresh each time: a push may grow (and so move)
		// the stack.
		top := &w.stack[len(w.stack)-1]
		if top.next == top.end {
			if top.isMap {
				w.keys = w.keys[:top.start]
			}
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.path) > 0 {
				w.path = w.path[:len(w.path)-1]
			}
			continue
		}
		i := top.next
		top.next++
		var child any
		if top.isMap {
			k := w.keys[i]
			child = top.m[k]
			w.path = append(w.path, pathStep{key: k, index: -1})
			if k == podOverridesKey {
				if override, ok := child.(map[string]any); ok {
					w.checkOverride(override)
				}
			}
		} else {
			child = top.list[i]
			if !fields.IsContainer(child) {
				continue
			}
			w.path = append(w.path, pathStep{index: i})
		}
		if len(w.path) > maxWalkDepth {
			w.reportTooDeep()
			w.path = w.path[:len(w.path)-1]
			continue
		}
		w.push(child)
	}
}

// push starts visiting v, a map or list whose path is w.path.
func (w *overrideWalker) push(v any) {
	switch v := v.(type) {
	case map[string]any:
		start := len(w.keys)
		for k, child := range v {
			if fields.IsContainer(child) {
				w.keys = append(w.keys, k)
			}
		}
		slices.Sort(w.keys[start:])
		w.stack = append(w.stack, frame{isMap: true, m: v, start: start, next: start, end: len(w.keys)})
	case []any:
		w.stack = append(w.stack, frame{list: v, end: len(v)})
	}
}

// reportTooDeep denies the map or list at the walker's current path, past
// maxWalkDepth, once per object.
func (w *overrideWalker) reportTooDeep() {
	if w.tooDeep {
		return
	}
	w.tooDeep = true
	w.findings = append(w.findings, policies.Unratcheted(ServiceAccountWalkTooDeep, w.fieldPath(), msgWalkTooDeep, maxWalkDepth))
}

// checkOverride reports the ServiceAccount fields of the pod template
// override at the walker's current path, under every spelling of "spec" and
// of the field names that the operator reads as them (keysReadAs).
func (w *overrideWalker) checkOverride(override map[string]any) {
	for specKey, s := range keysReadAs(override, "spec") {
		spec, ok := s.(map[string]any)
		if !ok {
			continue
		}
		for _, name := range serviceAccountFields {
			for key, v := range keysReadAs(spec, name) {
				// null is absent: the operator decodes podOverrides into a
				// typed PodTemplateSpec, where null leaves the field empty
				// and unapplied.
				if v == nil {
					continue
				}
				w.checkValue(w.fieldPath().Child(specKey, key), v)
			}
		}
	}
}

// checkValue reports one ServiceAccount value set in a podOverrides.
func (w *overrideWalker) checkValue(path *field.Path, v any) {
	switch s, isString := v.(string); {
	case w.name == "":
		w.findings = append(w.findings, policies.Denial(ServiceAccountOverridden, path, evidenceOf(v), msgOverriddenNoName, w.kind))
	case isString && s == w.derived:
		w.findings = append(w.findings, policies.Warning(ServiceAccountOverrideRedundant, path, s, msgOverrideRedundant))
	default:
		w.findings = append(w.findings, policies.Denial(ServiceAccountOverridden, path, evidenceOf(v), msgOverridden, w.kind, w.derived))
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
