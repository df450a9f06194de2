// UPDATE by a harnessed service account.
//
// Reads: metadata.labels of the object and of the old object. Allows: any
// update that keeps every scope label the old object carried; denies one
// that removes or changes it (ScopeLabelChanged).

package scopelabel

import "github.com/gatehouse-dev/gatehouse/policies"

// ScopeLabelChanged: a harnessed service account removed or changed a scope
// label, which would move the object out of its scope.
const ScopeLabelChanged policies.Code = "ScopeLabelChanged"

// CheckUpdate handles an UPDATE of oldObj to obj by a service account of the
// harnesses whose scopeToLabel keys are scopeLabels: it denies each key the
// old object carries that obj lacks or carries with another value.
func CheckUpdate(obj, oldObj map[string]any, scopeLabels []string) []policies.Finding {
	var findings []policies.Finding
	for _, key := range keys(scopeLabels) {
		old, ok := label(oldObj, key)
		if !ok {
			continue
		}
		have, ok := label(obj, key)
		switch {
		case !ok:
			findings = append(findings, policies.Denial(ScopeLabelChanged, labelPath(key), "",
				"scope label %s cannot be removed by the harnessed operator", key))
		case have != old:
			findings = append(findings, policies.Denial(ScopeLabelChanged, labelPath(key), have,
				"scope label %s cannot be changed by the harnessed operator", key))
		}
	}
	return findings
}
