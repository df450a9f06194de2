// Key matching inside podOverrides, as the operator reads it.
//
// Reads: the keys of one map.
// Allows: nothing and denies nothing; it tells rule 1 which keys the operator
// takes for a field of corev1.PodTemplateSpec.

package serviceaccount

import (
	"iter"
	"strings"
)

// keysReadAs yields every key of m that Go's encoding/json takes for the
// struct field whose JSON name is name, with its value, in no particular
// order (callers sort what they report).
//
// kubedoop operator-go keeps podOverrides as raw JSON and decodes it with
// encoding/json into a corev1.PodTemplateSpec (docs/service-account.md,
// "Edges"). encoding/json matches an object key to a struct field by its
// exact name or else case-insensitively under Unicode simple case folding,
// which is what strings.EqualFold compares (encoding/json documents its own
// foldName as equivalent to bytes.EqualFold). So "SPEC", "Spec" and "ſpec"
// (U+017F, a long s) all fill PodTemplateSpec.Spec. encoding/json decodes
// every matching key, in document order, into the same field: the last
// string wins and objects merge. Which key comes last depends on how the API
// server serialises the object, so every matching key is yielded, not one.
func keysReadAs(m map[string]any, name string) iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for k, v := range m {
			if (k == name || strings.EqualFold(k, name)) && !yield(k, v) {
				return
			}
		}
	}
}
