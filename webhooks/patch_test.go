package webhooks

import (
	"encoding/json"
	"testing"

	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// applyOps applies a webhook's JSON patch to the object it was computed
// on, as the API server does.
func applyOps(raw []byte, ops []gomodulesjsonpatch.JsonPatchOperation) ([]byte, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return nil, err
	}
	return patch.Apply(raw)
}

// TestEncodedPatchIsWhatCompleteWrites: withEncodedPatch writes the bytes
// controller-runtime's Response.Complete writes for the same operations
// (every operation, null and absent values, strings it escapes).
func TestEncodedPatchIsWhatCompleteWrites(t *testing.T) {
	ops := []gomodulesjsonpatch.JsonPatchOperation{
		gomodulesjsonpatch.NewOperation("add", "/spec/securityContext", map[string]any{"runAsUser": float64(1000), "seccompProfile": map[string]any{"type": "RuntimeDefault"}}),
		gomodulesjsonpatch.NewOperation("add", "/metadata/labels/a~1b", nil),
		gomodulesjsonpatch.NewOperation("replace", "/spec/x", nil),
		gomodulesjsonpatch.NewOperation("replace", "/spec/y", []string{"<ALL> & \u2028"}),
		gomodulesjsonpatch.NewOperation("remove", "/spec/z/0", nil),
		gomodulesjsonpatch.NewOperation("copy", "/spec/w", int64(3)),
	}
	want := admission.Response{Patches: ops}
	want.Allowed = true
	if err := want.Complete(admission.Request{}); err != nil {
		t.Fatal(err)
	}
	got := withEncodedPatch(admission.Response{Patches: ops})
	if string(got.Patch) != string(want.Patch) || got.PatchType == nil || *got.PatchType != *want.PatchType || len(got.Patches) != 0 {
		t.Fatalf("withEncodedPatch wrote %s (type %v), Complete %s (type %v)", got.Patch, got.PatchType, want.Patch, want.PatchType)
	}
	if err := got.Complete(admission.Request{}); err != nil || string(got.Patch) != string(want.Patch) {
		t.Fatalf("Complete changed the encoded patch: %s, %v", got.Patch, err)
	}
}

// FuzzAppendJSONValueIsMarshal: the patch's value encoder writes every
// decoded JSON value byte for byte as json.Marshal does (strings that need
// escaping, floats in both notations, nesting, null).
func FuzzAppendJSONValueIsMarshal(f *testing.F) {
	for _, seed := range []string{
		`{"runAsUser":1001,"capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"RuntimeDefault"}}`,
		`[null,true,false,0,-0,1e21,1e20,123456789012345678901234,1e-6,1e-7,0.5,-2.25,3.0]`,
		`{"<a>":"x & y","\u2028":"\u00e9\ud83d\ude00","ctl":"\u0001\t\n","q":"\"\\/"}`,
		`{"b":{"z":[],"a":{}},"a":[[[]]],"":""}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		want, err := json.Marshal(v)
		got, ok := appendJSONValue(nil, v)
		if ok != (err == nil) || (ok && string(got) != string(want)) {
			t.Fatalf("appendJSONValue(%s) = %s, %v; json.Marshal: %s, %v", doc, got, ok, want, err)
		}
	})
}

// TestAppendJSONValueTypes: the Go types the evaluators put into a patch
// beside the decoded ones encode as json.Marshal encodes them.
func TestAppendJSONValueTypes(t *testing.T) {
	for _, v := range []any{int64(-7), 1001, map[string]any(nil), []any(nil), []string{"a"}, map[string]string{"k": "v"}, float32(0.1)} {
		want, _ := json.Marshal(v)
		if got, ok := appendJSONValue(nil, v); !ok || string(got) != string(want) {
			t.Errorf("appendJSONValue(%#v) = %s, %v; want %s", v, got, ok, want)
		}
	}
}
