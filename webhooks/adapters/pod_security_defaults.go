package adapters

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// pod-security-defaults: PSC's mutation (docs/contracts.md §2) on Pod CREATE and
// on pods/ephemeralcontainers UPDATE, in namespaces that opt in. It fails
// open; pod-security is the enforcement.
func newPodSecurityDefaults(opts route.Options) Evaluator {
	// A broken table fails every review rather than judging by it.
	invalid := configInvalid("pod security defaults", opts.PodDefaults.Validate(nil))
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		if invalid != nil {
			return Result{}, invalid
		}
		// Copy on write: the chain keeps the pod as sent for the patch.
		var changed bool
		if r.Subresource == route.SubresourceEphemeralContainers {
			r.Object, changed = podsecurity.DefaultedNewEphemeralContainers(r.Object, r.OldObject, opts.PodDefaults)
		} else {
			r.Object, changed = podsecurity.Defaulted(r.Object, opts.PodDefaults)
		}
		return Result{Mutated: changed, CopiedOnWrite: true}, nil
	})
}

// configInvalid renders the errors of a configuration's check (errs, their
// paths relative to the configuration what names) as the one error every
// review is then answered with, or nil when there are none: one line, the
// errors separated by "; " since their own texts hold commas.
func configInvalid(what string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s: %s", what, strings.Join(msgs, "; "))
}
