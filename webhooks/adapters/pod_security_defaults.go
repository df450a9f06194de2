package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// pod-security-defaults: PSC's mutation (docs/contracts.md §2) on Pod CREATE and
// on pods/ephemeralcontainers UPDATE, in namespaces that opt in. It fails
// open; pod-security is the enforcement.
func newPodSecurityDefaults(opts route.Options) Evaluator {
	// A broken table fails every review rather than judging by it.
	invalid := configInvalid("pod security defaults", opts.PodDefaults.Validate(nil))
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		if invalid != nil {
			return Result{}, invalid
		}
		// Copy on write: the chain keeps the pod as sent for the patch.
		var changed bool
		if r.Subresource == route.SubresourceEphemeralContainers {
			r.Object, changed = podsecurity.DefaultedNewEphemeralContainers(r.Object, r.OldObject, opts.PodDefaults)
		} else {
			r.Object, changed = podsecurity.Defaulted(r.Object, opts.PodDefaults)
		}
		return Result{Mutated: changed, CopiedOnWrite: true}, nil
	})
}
