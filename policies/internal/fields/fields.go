// Package fields reads decoded JSON objects (map[string]any) without copying
// and without unguarded type assertions: a value of the wrong type reads as
// absent, so hostile input cannot panic an evaluator.
package fields

// Map returns the object at keys below m.
func Map(m map[string]any, keys ...string) (map[string]any, bool) {
	v, ok := get(m, keys)
	if !ok {
		return nil, false
	}
	out, ok := v.(map[string]any)
	return out, ok
}

// Slice returns the list at keys below m.
func Slice(m map[string]any, keys ...string) ([]any, bool) {
	v, ok := get(m, keys)
	if !ok {
		return nil, false
	}
	out, ok := v.([]any)
	return out, ok
}

// String returns the string at keys below m.
func String(m map[string]any, keys ...string) (string, bool) {
	v, ok := get(m, keys)
	if !ok {
		return "", false
	}
	out, ok := v.(string)
	return out, ok
}

// StringMap returns the string-valued entries of the object at keys below m,
// such as labels or annotations. Entries whose value is not a string are
// skipped: the API server rejects them before any webhook sees them.
func StringMap(m map[string]any, keys ...string) map[string]string {
	obj, ok := Map(m, keys...)
	if !ok || len(obj) == 0 {
		return nil
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func get(m map[string]any, keys []string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = obj[k]
		if !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// Bool returns the bool at keys; false when absent or not a bool.
func Bool(m map[string]any, keys ...string) (bool, bool) {
	v, ok := get(m, keys)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	return b, ok
}

// IsContainer reports whether v, a decoded JSON value, is an object or a
// list: what the generic custom-resource walks descend into.
func IsContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
