package webhooks

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// canonicalPatch orders a generated patch so the same request always gets
// the same patch bytes (the generator walks Go maps). Operations compare
// path segment by segment, array indices by number. The only operations
// whose order matters are those the generator writes at the tail of one
// array: adds in ascending index order, removes in descending order (every
// other operation on that array's elements has a lower index and is not
// shifted by them). Sorting a remove's final index in reverse keeps both.
func canonicalPatch(ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	sort.SliceStable(ops, func(i, j int) bool { return comparePatchPaths(ops[i], ops[j]) < 0 })
	return ops
}

// comparePatchPaths orders two operations by path, segment by segment,
// without allocating: array indices by number (a remove's final index in
// reverse), an index before a name, names as strings; a parent before its
// children; then by operation.
func comparePatchPaths(a, b jsonpatch.JsonPatchOperation) int {
	pa, pb := a.Path, b.Path
	for {
		if pa == "" || pb == "" {
			if pa != pb {
				if pa == "" {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Operation, b.Operation)
		}
		sa, ra := nextSegment(pa)
		sb, rb := nextSegment(pb)
		if c := compareSegments(sa, ra == "" && a.Operation == "remove", sb, rb == "" && b.Operation == "remove"); c != 0 {
			return c
		}
		pa, pb = ra, rb
	}
}

// nextSegment splits "/a/b" into "a" and "/b".
func nextSegment(path string) (segment, rest string) {
	path = path[1:]
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

func compareSegments(a string, aRemoved bool, b string, bRemoved bool) int {
	na, aIndex := arrayIndex(a)
	nb, bIndex := arrayIndex(b)
	switch {
	case aIndex && bIndex:
		if aRemoved {
			na = -na - 1
		}
		if bRemoved {
			nb = -nb - 1
		}
		return na - nb
	case aIndex:
		return -1
	case bIndex:
		return 1
	}
	return strings.Compare(a, b)
}

// arrayIndex reads a segment written as an array index ("0", "12"; not
// "01", "-1" or "+1").
func arrayIndex(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// diffJSON is the JSON patch from a to b, two decoded JSON documents that
// the review chain holds in memory (the object as sent, and as the mutating
// members left it), with the operations gomodules.xyz/jsonpatch's
// CreatePatch writes for the same documents serialised: keys added,
// replaced and removed; array tails removed and added; a value whose JSON
// type changed replaced whole. Comparing in memory spares a mutating review
// the encoding of the mutated object and the two decodes of CreatePatch.
// Values compare as JSON does: numbers of any Go type by their float64
// value, other Go types (an evaluator's []string) by their JSON form.
func diffJSON(a, b map[string]any) []jsonpatch.JsonPatchOperation {
	return diffObjects(a, b, "", nil)
}

func diffObjects(a, b map[string]any, path string, ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	for key, bv := range b {
		av, ok := a[key]
		switch {
		case !ok:
			ops = append(ops, jsonpatch.NewOperation("add", path+"/"+rfc6901.Replace(key), bv))
		case !sameValue(av, bv):
			ops = diffValues(av, bv, path+"/"+rfc6901.Replace(key), ops)
		}
	}
	for key := range a {
		if _, ok := b[key]; !ok {
			ops = append(ops, jsonpatch.NewOperation("remove", path+"/"+rfc6901.Replace(key), nil))
		}
	}
	return ops
}

var rfc6901 = strings.NewReplacer("~", "~0", "/", "~1")

func diffValues(av, bv any, p string, ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	av, bv = asJSON(av), asJSON(bv)
	ak, bk := jsonKindOf(av), jsonKindOf(bv)
	switch {
	case ak == jsonNull && bk == jsonNull:
		return ops
	case ak != bk:
		return append(ops, jsonpatch.NewOperation("replace", p, bv))
	}
	switch at := av.(type) {
	case map[string]any:
		return diffObjects(at, bv.(map[string]any), p, ops)
	case []any:
		bt := bv.([]any)
		n := min(len(at), len(bt))
		for i := len(at) - 1; i >= n; i-- {
			ops = append(ops, jsonpatch.NewOperation("remove", p+"/"+strconv.Itoa(i), nil))
		}
		for i := n; i < len(bt); i++ {
			ops = append(ops, jsonpatch.NewOperation("add", p+"/"+strconv.Itoa(i), bt[i]))
		}
		for i := 0; i < n; i++ {
			if !sameValue(at[i], bt[i]) {
				ops = diffValues(at[i], bt[i], p+"/"+strconv.Itoa(i), ops)
			}
		}
		return ops
	}
	if !sameScalar(av, bv) {
		ops = append(ops, jsonpatch.NewOperation("replace", p, bv))
	}
	return ops
}

// sameValue reports, without allocating, that a and b need no operation:
// equal scalars of the same decoded type, or the same object or list (one
// that a copy-on-write member shares between the object as sent and as it
// left it). false means only that diffValues must look.
func sameValue(a, b any) bool {
	switch at := a.(type) {
	case nil:
		return b == nil
	case string:
		bt, ok := b.(string)
		return ok && at == bt
	case bool:
		bt, ok := b.(bool)
		return ok && at == bt
	case float64:
		bt, ok := b.(float64)
		return ok && at == bt
	case map[string]any:
		bt, ok := b.(map[string]any)
		return ok && reflect.ValueOf(at).UnsafePointer() == reflect.ValueOf(bt).UnsafePointer()
	case []any:
		bt, ok := b.([]any)
		return ok && len(at) == len(bt) && (len(at) == 0 || &at[0] == &bt[0])
	}
	return false
}

// The JSON types, as encoding/json decodes them.
const (
	jsonNull = iota
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

func jsonKindOf(v any) int {
	switch v.(type) {
	case nil:
		return jsonNull
	case bool:
		return jsonBool
	case string:
		return jsonString
	case map[string]any:
		return jsonObject
	case []any:
		return jsonArray
	}
	return jsonNumber
}

// asJSON returns v as encoding/json would decode its encoding, for the Go
// types an evaluator may write that a decode never makes; numbers stay.
func asJSON(v any) any {
	switch v.(type) {
	case nil, bool, string, map[string]any, []any, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return v
	}
	return out
}

func sameScalar(a, b any) bool {
	if jsonKindOf(a) == jsonNumber {
		return asFloat(a) == asFloat(b)
	}
	return a == b
}

func asFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case float32:
		return float64(n)
	case int:
		return float64(n)
	case int8:
		return float64(n)
	case int16:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	case uint:
		return float64(n)
	case uint8:
		return float64(n)
	case uint16:
		return float64(n)
	case uint32:
		return float64(n)
	case uint64:
		return float64(n)
	}
	return 0
}

// deepCopyJSON copies a decoded JSON value; a value of another Go type that
// an evaluator put in it is copied as its decoded JSON form.
func deepCopyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return asJSON(v)
}

// withEncodedPatch is resp with its patch operations already encoded into
// resp.Patch, byte for byte as controller-runtime's Response.Complete
// encodes them (json.Marshal of the operations, each through its
// MarshalJSON, which marshals the operation again and is then compacted):
// here each operation is marshalled once, with the same fields. resp is
// returned as it was if the operations do not encode; Complete then says
// why.
func withEncodedPatch(resp admission.Response) admission.Response {
	if len(resp.Patches) == 0 {
		return resp
	}
	raw := make([]byte, 0, 256)
	raw = append(raw, '[')
	for i, p := range resp.Patches {
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = append(raw, `{"op":`...)
		raw = appendJSON(raw, p.Operation)
		raw = append(raw, `,"path":`...)
		raw = appendJSON(raw, p.Path)
		// jsonpatch.Operation.MarshalJSON writes "value" for an add or a
		// replace even when it is null, and otherwise only when it is set.
		if p.Value != nil || p.Operation == "add" || p.Operation == "replace" {
			raw = append(raw, `,"value":`...)
			var ok bool
			if raw, ok = appendJSONValue(raw, p.Value); !ok {
				return resp
			}
		}
		raw = append(raw, '}')
	}
	raw = append(raw, ']')
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType, resp.Patches = raw, &pt, nil
	return resp
}

// appendJSONValue appends v as encoding/json marshals it, byte for byte:
// the values of a patch are the decoded object's (maps, slices, strings,
// numbers, booleans, null), which are written here without reflection;
// any other value, and any string or number whose encoding is not plain,
// goes through json.Marshal. ok is false when v does not marshal.
func appendJSONValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case string:
		return appendJSON(b, v), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case float64:
		// encoding/json writes a float as 'f' below 1e21 and at or above
		// 1e-6; an integral one in that range reads as an integer.
		if v == math.Trunc(v) && math.Abs(v) < 1e21 {
			return strconv.AppendFloat(b, v, 'f', -1, 64), true
		}
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSONValue(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSONValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// appendJSON appends s as a JSON string, as encoding/json writes it: a
// string of printable ASCII that encoding/json does not escape ('"', '\\'
// and its HTML-safe '<', '>', '&') is quoted as it is, any other through
// json.Marshal.
func appendJSON(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always marshals
			return append(b, raw...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
