package webhooks

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
)

// harness: HARNESS (CONTRACTS.md §8), the review of an OperatorHarness
// against the other harnesses.
func newHarness(opts Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: harness.ValidateHarness(r.Object, policyState{opts.ClusterState})}, nil
	})
}
