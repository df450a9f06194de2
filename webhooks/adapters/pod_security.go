package adapters

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// pod-security: PSC's final-state guard (docs/contracts.md §2) on the Pods that
// pod-security-defaults mutates, and early on the pod templates of workloads
// so that a workload whose pods would be refused fails at apply time.
func newPodSecurity(opts route.Options) Evaluator {
	// A broken table fails every review rather than judging by it.
	invalid := configInvalid("pod security defaults", opts.PodDefaults.Validate(nil))
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		if invalid != nil {
			return Result{}, invalid
		}
		if r.Kind.GroupKind() != corev1.SchemeGroupVersion.WithKind("Pod").GroupKind() {
			return Result{Findings: podsecurity.ValidateTemplate(r.Kind.GroupKind(), r.Object, opts.PodDefaults)}, nil
		}
		var old map[string]any
		if r.Subresource == route.SubresourceEphemeralContainers {
			old = r.OldObject
		}
		return Result{Findings: podsecurity.ValidatePod(r.Object, old)}, nil
	})
}
