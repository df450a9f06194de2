package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// harness-labels-guard: the UPDATE rule of LABEL. A harnessed service
// account may not remove or change any Enforce-mode harness's scope label,
// nor add one with a value other than the namespace's, through the main
// resource or a status subresource (whose request carries the whole object).
func newHarnessLabelsGuard(opts route.Options) Evaluator {
	view := harnessView{state: opts.ClusterState, namespaces: opts.Namespaces}
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		// The adapter's ratcheting pass judges the old object alone; the
		// guard judges transitions only, so it has nothing to say there
		// and none of its findings ratchet.
		if r.OldObject == nil {
			return Result{}, nil
		}
		req := scopelabel.Request{
			Update:    true,
			Namespace: labelNamespace(r),
			Object:    r.Object,
			OldObject: r.OldObject,
			Username:  r.Username,
		}
		return Result{Findings: scopelabel.Guard(req, view)}, nil
	})
}
