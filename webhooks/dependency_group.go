package webhooks

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
)

// dependency-group: DG (docs/contracts.md §6), one CRD per DependencyGroup,
// against the other groups in the cluster state.
func newDependencyGroup(opts Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: dependencygroup.ValidateGroup(r.Object, policyState{opts.ClusterState})}, nil
	})
}

// crd-source: CRDS (docs/contracts.md §7) against the other sources and groups.
func newCRDSource(opts Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: dependencygroup.ValidateSource(r.Object, policyState{opts.ClusterState})}, nil
	})
}
