// CREATE of a cluster-scoped object by a harnessed service account.
//
// Reads and writes: metadata.labels. Allows: anything; a label already
// present keeps its value.

package scopelabel

// ClusterScopedValue is the value of the scope label added to cluster-scoped
// objects (see doc.go).
const ClusterScopedValue = "true"

// ForClusterScoped handles the CREATE of cluster-scoped object obj by a
// service account of the harnesses whose scopeToLabel keys are scopeLabels:
// it adds each key L that obj does not carry, as L=ClusterScopedValue, in
// place, and reports whether it changed obj. It never denies.
func ForClusterScoped(obj map[string]any, scopeLabels []string) (changed bool) {
	for _, key := range keys(scopeLabels) {
		if _, ok := label(obj, key); ok {
			continue
		}
		if setLabel(obj, key, ClusterScopedValue) {
			changed = true
		}
	}
	return changed
}
