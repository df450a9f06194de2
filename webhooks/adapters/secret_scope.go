package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// secret-scope: SCOPE (docs/contracts.md §1) on PVCs, Pods, every workload kind
// and product custom resources.
func newSecretScope(route.Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: scope.Validate(r.Kind.GroupKind(), r.Object)}, nil
	})
}
