package webhooks

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
)

// harness: HARNESS (docs/contracts.md §8), the review of an OperatorHarness
// (vshn.net/v1, or helmetica.io/v1 with scopeToLabel and operator only)
// against the other harnesses of both groups, plus PROXY's warning when the pods it sends
// through the harness proxy would not be guarded while gatehouse is
// unavailable.
func newHarness(opts Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		validate := harness.ValidateHarness
		if r.Kind.Group == harness.HelmeticaGVK.Group {
			validate = harness.ValidateHelmeticaHarness
		}
		findings := validate(r.Object, policyState{opts.ClusterState})
		if opts.Namespaces != nil {
			findings = append(findings, proxy.FailOpenWarning(r.Object, opts.Namespaces, opts.HarnessedNamespaceLabel)...)
		}
		return Result{Findings: findings}, nil
	})
}
