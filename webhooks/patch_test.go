package webhooks

import (
	"encoding/json"

	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
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
