package webhooks

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
)

// service-account: SA (docs/contracts.md §3) on product custom resources, Pods and
// every workload kind.
func newServiceAccount(opts Options) Evaluator {
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		return Result{Findings: serviceaccount.Validate(r.Kind.GroupKind(), r.Object, opts.Products, opts.ServiceAccounts)}, nil
	})
}
