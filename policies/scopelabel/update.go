// UPDATE by a harnessed service account, through the main resource or a
// subresource that persists metadata (pods/status and the other status
// subresources).
//
// Reads: metadata.labels of the object and of the old object, and the
// labels of the object's namespace. Allows: an update that keeps every scope
// label the old object carried and adds a scope label only with the
// namespace's value of it; denies removing or changing one
// (ScopeLabelChanged) and adding one with any other value, or to a
// cluster-scoped object or in a namespace without that label
// (ScopeLabelAdded).

package scopelabel

import "github.com/gatehouse-dev/gatehouse/policies"

// ScopeLabelChanged: a harnessed service account removed or changed a scope
// label, which would move the object out of its scope.
const ScopeLabelChanged policies.Code = "ScopeLabelChanged"

// ScopeLabelAdded: a harnessed service account added a scope label with a
// value other than the object's namespace's value of that label, which would
// move the object into another scope.
const ScopeLabelAdded policies.Code = "ScopeLabelAdded"

// CheckUpdate handles an UPDATE of oldObj to obj by a harnessed service
// account. scopeLabels are the keys it guards (the scopeToLabel of every
// Enforce-mode harness, not only the caller's); namespaceLabels are the
// labels of the object's namespace when namespaced is true. It
// denies each key the old object carries that obj lacks or carries with
// another value, and each key obj gains with a value other than the
// namespace's value of it (a cluster-scoped object, or a namespace without
// the key, has no such value, so any added key is denied).
func CheckUpdate(obj, oldObj map[string]any, scopeLabels []string, namespaceLabels map[string]string, namespaced bool) []policies.Finding {
	var findings []policies.Finding
	for _, key := range keys(scopeLabels) {
		have, present := label(obj, key)
		old, had := label(oldObj, key)
		switch {
		case had && !present:
			findings = append(findings, policies.Denial(ScopeLabelChanged, labelPath(key), "",
				"scope label %s cannot be removed by a harnessed operator", key))
		case had && have != old:
			findings = append(findings, policies.Denial(ScopeLabelChanged, labelPath(key), have,
				"scope label %s cannot be changed by a harnessed operator", key))
		case had || !present:
		default:
			want, scoped := namespaceLabels[key]
			switch {
			case !namespaced:
				findings = append(findings, policies.Denial(ScopeLabelAdded, labelPath(key), have,
					"scope label %s cannot be added by a harnessed operator to a cluster-scoped object; "+
						"only its create is labelled", key))
			case !scoped:
				findings = append(findings, policies.Denial(ScopeLabelAdded, labelPath(key), have,
					"scope label %s cannot be added by a harnessed operator in a namespace that does not carry it", key))
			case have != want:
				findings = append(findings, policies.Denial(ScopeLabelAdded, labelPath(key), have,
					"scope label %s can be added by a harnessed operator only with the namespace's value of that label", key))
			}
		}
	}
	return findings
}
