package adapters

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/policies/overrides"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// liveLookupTimeout bounds every read of live workloads within one review,
// well inside the API server's webhook timeout: an unsynced or hung cache
// costs a resolution warning, never the review.
const liveLookupTimeout = 1 * time.Second

// component-overrides: OVR (docs/contracts.md §9) on the one override ConfigMap,
// resolved against the operator's live workloads where they can be read.
func newComponentOverrides(opts route.Options) Evaluator {
	table := opts.OverrideTable
	if table == nil {
		table = overrides.MustPreset(overrides.PresetAny)
	}
	return EvaluatorFunc(func(ctx context.Context, r *Review) (Result, error) {
		data := map[string]string{}
		if m, ok := r.Object["data"].(map[string]any); ok {
			for key, value := range m {
				if s, ok := value.(string); ok {
					data[key] = s
				}
			}
		}
		var live overrides.Live
		if opts.Workloads != nil {
			live = &liveWorkloads{ctx: ctx, opts: opts, table: table}
		}
		return Result{Findings: overrides.Validate(table, data, live)}, nil
	})
}
