package adapters

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/catalog"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// exception: EXC (docs/contracts.md §12) on Exceptions and
// ClusterExceptions, held to the configuration's exceptions block, the
// webhooks whose findings can be excused and the codes the policies report.
func newException(opts route.Options) Evaluator {
	rules := exception.Rules{
		MaxDuration: opts.ExceptionRules.MaxDuration.Duration,
		Namespaced:  opts.ExceptionRules.Namespaced,
		Webhooks:    ExcusableWebhooks(),
		Codes:       catalog.Codes(),
	}
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		e, err := exception.FromObject(r.Object)
		if err != nil {
			// The API server's schema keeps this from happening; without
			// evidence, it denies an UPDATE as it denies a CREATE.
			return Result{Findings: []policies.Finding{policies.Unratcheted(exception.ExceptionInvalid, nil,
				"the object %s", err.Error())}}, nil
		}
		return Result{Findings: exception.Validate(e, opts.Clock(), rules)}, nil
	})
}

// ExcusableWebhooks are the names of the webhooks an exception may name
// (route.Excusable says which and why).
func ExcusableWebhooks() []string {
	var out []string
	for _, def := range route.Registry() {
		if route.Excusable(def) {
			out = append(out, def.Name)
		}
	}
	return out
}
