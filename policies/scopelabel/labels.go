// Reading and writing metadata.labels.
//
// Reads and writes: metadata.labels. Allows: anything; a metadata or labels
// that is not an object is left alone.

package scopelabel

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// labelPath is the field path of label key in an object's metadata.
func labelPath(key string) *field.Path {
	return field.NewPath("metadata", "labels").Key(key)
}

// keys returns the non-empty keys, deduplicated and sorted.
func keys(scopeLabels []string) []string {
	out := make([]string, 0, len(scopeLabels))
	for _, k := range scopeLabels {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	n := 0
	for i, k := range out {
		if i == 0 || k != out[n-1] {
			out[n] = k
			n++
		}
	}
	return out[:n]
}

// labelKeys returns the keys of the labels of every object (whatever their
// values), deduplicated and sorted.
func labelKeys(objs ...map[string]any) []string {
	var out []string
	for _, obj := range objs {
		meta, _ := obj["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		for k := range labels {
			out = append(out, k)
		}
	}
	return keys(out)
}

// label returns the string value of label key on obj.
func label(obj map[string]any, key string) (string, bool) {
	return fields.String(obj, "metadata", "labels", key)
}

// labelsForWrite returns obj's metadata.labels, creating metadata and labels
// when absent (or null); false when either is present but not an object.
func labelsForWrite(obj map[string]any) (map[string]any, bool) {
	if obj == nil {
		return nil, false
	}
	meta, ok := child(obj, "metadata")
	if !ok {
		return nil, false
	}
	return child(meta, "labels")
}

func child(m map[string]any, key string) (map[string]any, bool) {
	v, present := m[key]
	if !present || v == nil {
		c := map[string]any{}
		m[key] = c
		return c, true
	}
	c, ok := v.(map[string]any)
	return c, ok
}

// setLabel sets key=value on obj and reports whether it changed anything.
func setLabel(obj map[string]any, key, value string) bool {
	if v, ok := label(obj, key); ok && v == value {
		return false
	}
	// Check writability before creating anything, so a failed write
	// leaves obj untouched.
	if !writable(obj) {
		return false
	}
	labels, _ := labelsForWrite(obj)
	labels[key] = value
	return true
}

func writable(obj map[string]any) bool {
	if obj == nil {
		return false
	}
	meta, present := obj["metadata"]
	if !present || meta == nil {
		return true
	}
	m, ok := meta.(map[string]any)
	if !ok {
		return false
	}
	labels, present := m["labels"]
	if !present || labels == nil {
		return true
	}
	_, ok = labels.(map[string]any)
	return ok
}
