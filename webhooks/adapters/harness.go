package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// harness: HARNESS (docs/contracts.md §8), the review of an OperatorHarness
// (vshn.net/v1, or helmetica.io/v1 with scopeToLabel and operator only)
// against the other harnesses of both groups, plus PROXY's denial when it
// injects the proxy into a namespace exempt from gatehouse's webhooks,
// where no pod is ever injected (§11), and otherwise its warning when the
// pods it sends through the harness proxy would not be guarded while
// gatehouse is unavailable.
func newHarness(opts route.Options) Evaluator {
	exemptions := route.ExemptionsOf(&opts)
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		validate := harness.ValidateHarness
		if r.Kind.Group == harness.HelmeticaGVK.Group {
			validate = harness.ValidateHelmeticaHarness
		}
		findings := validate(r.Object, route.PolicyStateOf(opts.ClusterState))
		exempt := proxy.ExemptNamespace(r.Object, exemptions)
		findings = append(findings, exempt...)
		if opts.Namespaces != nil && len(exempt) == 0 {
			findings = append(findings, proxy.FailOpenWarning(r.Object, opts.Namespaces, opts.HarnessedNamespaceLabel)...)
		}
		return Result{Findings: findings}, nil
	})
}
