// The read-only view of OperatorHarnesses PROXY needs, and the one pod-level
// decision: is this pod harnessed, and if so inject.
//
// Reads: spec.serviceAccountName of the pod, and through State the
// OperatorHarnesses of the pod's namespace. Allows: what Inject allows;
// denies a pod whose harnesses cannot be read (StateUnavailable).

package proxy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// State is the read-only view of OperatorHarnesses the webhook fills from an
// informer cache. An error means the view cannot answer.
type State interface {
	// HarnessesIn returns the OperatorHarnesses (decoded JSON, read-only)
	// whose spec.operator.namespace is namespace.
	HarnessesIn(namespace string) ([]map[string]any, error)
}

var pathServiceAccountName = field.NewPath("spec", "serviceAccountName")

// Admit applies §4 to the CREATE of pod in namespace: when some harness in
// state harnesses the pod's service account it injects the proxy (Inject),
// otherwise it leaves the pod alone.
func Admit(pod map[string]any, namespace string, state State, c Config) (changed bool, findings []policies.Finding) {
	harnesses, err := state.HarnessesIn(namespace)
	if err != nil {
		// Whether the pod is harnessed is unknown, and an unharnessed
		// operator pod would reach the real API server with its full
		// rights, so this denies.
		return false, []policies.Finding{policies.Unratcheted(policies.StateUnavailable, pathServiceAccountName,
			"the webhook's view of OperatorHarnesses is not available (cache not synced or failed), "+
				"so whether this pod must go through the harness proxy is unknown; retry later")}
	}
	account, _ := fields.String(pod, "spec", "serviceAccountName")
	if !Harnessed(harnesses, namespace, account) {
		return false, nil
	}
	return Inject(pod, c)
}
