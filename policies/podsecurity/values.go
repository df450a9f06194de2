// Reading and writing the decoded JSON values of security contexts.
//
// Reads: spec.os.name of a pod spec; the name of each ephemeral container of
// an old Pod; otherwise only the maps it is given.
// Allows: every JSON type. A number may be a float64 (encoding/json), any Go
// integer or float type, or a json.Number (objects built in Go or decoded with
// UseNumber); where a number or a bool is needed, a value of another type
// reads as absent.

package podsecurity

import (
	"encoding/json"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// stated reports whether m holds key with a non-null value. A null is what
// the API server decodes as unset, so it is no statement.
func stated(m map[string]any, key string) bool {
	v, ok := m[key]
	return ok && v != nil
}

// seccompTypeStated reports whether a seccompProfile object states its type.
// An empty type is unset: SeccompProfile.Type has no omitempty, so a profile
// written without a type reaches a webhook as type: "".
func seccompTypeStated(profile map[string]any) bool {
	if !stated(profile, "type") {
		return false
	}
	s, isString := profile["type"].(string)
	return !isString || s != ""
}

// cow is a JSON object that is copied the first time it is written (copy on
// write), so the object it was made from is never changed: a defaulted Pod
// shares with the Pod it came from every part that defaulting left alone.
type cow struct {
	// m is the object as it reads now: the original until the first write,
	// then its own copy.
	m      map[string]any
	copied bool
}

// set writes m[key], copying m first if it is not yet its own.
func (c *cow) set(key string, value any) {
	if !c.copied {
		own := make(map[string]any, len(c.m)+1)
		maps.Copy(own, c.m)
		c.m, c.copied = own, true
	}
	c.m[key] = value
}

// objectField returns the object at parent[key] to write into, a new empty
// one (already counted as a change) when key is absent or null. ok is false
// when parent[key] holds anything else: such a value is left alone.
// setObjectField puts it back.
func objectField(parent *cow, key string) (obj cow, ok bool) {
	if !stated(parent.m, key) {
		return cow{m: map[string]any{}, copied: true}, true
	}
	m, ok := parent.m[key].(map[string]any)
	return cow{m: m}, ok
}

// setObjectField writes obj, from objectField, into parent[key] if it was
// written or created, and reports whether it was.
func setObjectField(parent *cow, key string, obj cow) bool {
	if obj.copied {
		parent.set(key, obj.m)
	}
	return obj.copied
}

// setDefault sets c[key] to value unless key is stated, and reports whether
// it did. It is generic so that value is boxed only when it is written.
func setDefault[T any](c *cow, key string, value T) bool {
	if stated(c.m, key) {
		return false
	}
	c.set(key, value)
	return true
}

// numberOf returns v as a float64 when it is a number.
func numberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// copyJSON returns a deep copy of a decoded JSON value: objects and lists are
// copied, every other value is shared (JSON scalars are immutable).
func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

// isWindows reports whether a pod spec declares the Windows OS, on which the
// API server forbids every field of the defaults table but runAsNonRoot.
func isWindows(spec map[string]any) bool {
	name, _ := fields.String(spec, "os", "name")
	return name == "windows"
}

// newEphemeralContainers returns the ephemeral containers of the pod spec at
// specPath whose name is not among the ephemeral containers of oldObj, the
// stored Pod; one without a string name counts as new. Entries that are not
// objects are skipped.
func newEphemeralContainers(specPath *field.Path, spec, oldObj map[string]any) []workload.Container {
	old := ephemeralContainerNames(oldObj)
	var out []workload.Container
	items, _ := fields.Slice(spec, "ephemeralContainers")
	for i, item := range items {
		if c, ok := item.(map[string]any); ok && isNewEphemeralContainer(c, old) {
			out = append(out, workload.Container{Path: specPath.Child("ephemeralContainers").Index(i), Obj: c})
		}
	}
	return out
}

// ephemeralContainerNames are the string names of the ephemeral containers
// of the Pod obj.
func ephemeralContainerNames(obj map[string]any) map[string]bool {
	names := map[string]bool{}
	items, _ := fields.Slice(obj, "spec", "ephemeralContainers")
	for _, item := range items {
		if c, ok := item.(map[string]any); ok {
			if name, ok := c["name"].(string); ok {
				names[name] = true
			}
		}
	}
	return names
}

// isNewEphemeralContainer reports whether the ephemeral container c is not
// among old (ephemeralContainerNames of the stored Pod); one without a
// string name counts as new.
func isNewEphemeralContainer(c map[string]any, old map[string]bool) bool {
	name, ok := c["name"].(string)
	return !ok || !old[name]
}
