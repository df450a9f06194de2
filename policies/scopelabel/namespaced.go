// CREATE of a namespaced object in a namespace carrying a scope label.
//
// Reads and writes: metadata.labels. Allows: an object without the label or
// with the namespace's value; denies another value (ScopeLabelMismatch).

package scopelabel

import "github.com/gatehouse-dev/gatehouse/policies"

// ScopeLabelMismatch: a namespaced object carries a scope label with a value
// other than its namespace's, which would move it into another scope.
const ScopeLabelMismatch policies.Code = "ScopeLabelMismatch"

// ForNamespaced handles the CREATE of namespaced object obj in a namespace
// with labels namespaceLabels: for each key L of scopeLabels (the
// scopeToLabel of every Enforce-mode harness) that the namespace carries, it
// copies L with the namespace's value onto obj's metadata.labels, in place,
// and denies an object that already carries L with another value. It
// reports whether it changed obj.
func ForNamespaced(obj map[string]any, namespaceLabels map[string]string, scopeLabels []string) (changed bool, findings []policies.Finding) {
	for _, key := range keys(scopeLabels) {
		want, ok := namespaceLabels[key]
		if !ok {
			continue
		}
		if have, ok := label(obj, key); ok && have != want {
			findings = append(findings, policies.Denial(ScopeLabelMismatch, labelPath(key), have,
				"label %s must equal the namespace's value of that scope label; remove it or set it to the namespace's value", key))
			continue
		}
		if setLabel(obj, key, want) {
			changed = true
		}
	}
	return changed, findings
}
