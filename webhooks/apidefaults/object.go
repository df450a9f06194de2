package apidefaults

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PreAdmission returns obj as the API server hands it to admission when it
// is created: for a built-in kind, decoded into its Go type (strictly, as
// kubectl asks by default), defaulted and converted as the server does, and
// encoded again (so fields the type does not know, and empty optional
// fields, are gone). A custom resource is returned unchanged. obj is not
// modified. An error says why the server would refuse the object before
// admission; it names fields, never values.
func PreAdmission(obj map[string]any) (map[string]any, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if !IsBuiltin(gvk) {
		return obj, nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("not a valid %s: %w", kind, err)
	}
	typed, err := DecodeStrict(gvk, raw)
	if err != nil {
		return nil, err
	}
	if err := Default(typed); err != nil {
		return nil, fmt.Errorf("not a valid %s: %w", kind, err)
	}
	raw, err = json.Marshal(typed)
	if err != nil {
		return nil, fmt.Errorf("not a valid %s: %w", kind, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("not a valid %s: %w", kind, err)
	}
	// A create carries no creationTimestamp yet; the Go type encodes its
	// absence as null.
	if meta, ok := out["metadata"].(map[string]any); ok {
		if ts, present := meta["creationTimestamp"]; present && ts == nil {
			delete(meta, "creationTimestamp")
		}
	}
	return out, nil
}
