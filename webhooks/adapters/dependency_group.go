package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// dependency-group: DG (docs/contracts.md §6), one CRD per DependencyGroup,
// against the other groups in the cluster state.
func newDependencyGroup(opts route.Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: dependencygroup.ValidateGroup(r.Object, route.PolicyStateOf(opts.ClusterState))}, nil
	})
}

// crd-source: CRDS (docs/contracts.md §7) against the other sources and groups.
func newCRDSource(opts route.Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: dependencygroup.ValidateSource(r.Object, route.PolicyStateOf(opts.ClusterState))}, nil
	})
}
