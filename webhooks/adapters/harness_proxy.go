package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// harness-proxy: PROXY (docs/contracts.md §4), the harness proxy injected into the
// pods of harnessed operators on Pod CREATE.
func newHarnessProxy(opts route.Options) Evaluator {
	// A broken proxy configuration fails every review rather than
	// injecting an unusable pod.
	invalid := configInvalid("harness proxy configuration", opts.Proxy.Validate(nil))
	view := harnessView{state: opts.ClusterState, namespaces: opts.Namespaces}
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		if invalid != nil {
			return Result{}, invalid
		}
		changed, findings := proxy.Admit(r.Object, r.Namespace, view, opts.Proxy)
		return Result{Findings: findings, Mutated: changed}, nil
	})
}
