package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// service-account: SA (docs/contracts.md §3) on product custom resources, Pods and
// every workload kind.
func newServiceAccount(opts route.Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: serviceaccount.Validate(r.Kind.GroupKind(), r.Object, opts.Products, opts.ServiceAccounts)}, nil
	})
}
