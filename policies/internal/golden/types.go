package golden

import (
	"encoding/json"
	"reflect"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DecodeStrict decodes a YAML or JSON document into into as the API server's
// strict field validation would: duplicate keys, unknown or miscased fields
// and wrong types are errors. Tests use it to prove fixtures have the shape
// of the Go API types (api/harness/v1, api/helmetica/v1).
func DecodeStrict(data []byte, into any) []error {
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return []error{err}
	}
	strictErrs, err := kjson.UnmarshalStrict(raw, into, kjson.DisallowUnknownFields)
	if err != nil {
		return append(strictErrs, err)
	}
	return strictErrs
}

// RoundTrip decodes the YAML or JSON document doc strictly into into (a
// pointer to a Go API type) and encodes the typed object again: it fails the
// test unless the document decodes strictly and every field of it survives
// the round trip. Empty lists, objects and strings are pruned from both
// sides first: the types omit empty lists (omitempty) and add empty
// non-pointer structs (metadata.creationTimestamp, status, crdNames). into
// holds the decoded object afterwards, for the caller's own checks.
func RoundTrip(t testing.TB, doc []byte, into any) {
	t.Helper()
	if errs := DecodeStrict(doc, into); len(errs) > 0 {
		for _, err := range errs {
			t.Errorf("strict decoding into %T: %v", into, err)
		}
		return
	}
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	reencoded, err := json.Marshal(into)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := prunedJSON(t, raw), prunedJSON(t, reencoded); !reflect.DeepEqual(want, got) {
		t.Errorf("round trip through %T changed the object:\nwant %v\ngot  %v", into, want, got)
	}
}

func prunedJSON(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return prune(v)
}

// prune drops empty lists, objects and strings, at any depth.
func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if e = prune(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = prune(e)
		}
		return out
	case string:
		if v == "" {
			return nil
		}
		return v
	default:
		return v
	}
}
