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
