package adapters

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// harness-labels: LABEL (docs/contracts.md §5), the scope labels of Enforce-mode
// harnesses copied onto new objects. Their protection on UPDATE is
// harness-labels-guard's, which fails closed.
//
// When gatehouse manages the namespace labels, a Namespace's own CREATE and
// UPDATE are sent here too, and get the managed labels they should carry
// at once (webhooks/route/selection.go): a namespace created with a scope label is
// selected before the first object is created in it, rather than when the
// controller gets to it.
func newHarnessLabels(opts route.Options) Evaluator {
	view := harnessView{state: opts.ClusterState, namespaces: opts.Namespaces}
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		var marked bool
		if route.IsNamespace(r.Resource.Group, r.Resource.Resource) {
			if opts.ManagedSelections {
				var err error
				if marked, err = markNamespace(opts, r.Object); err != nil {
					return Result{}, err
				}
			}
			if r.Operation != admissionregistrationv1.Create {
				return Result{Mutated: marked}, nil
			}
		}
		req := scopelabel.Request{
			Update:    r.Operation == admissionregistrationv1.Update,
			Namespace: labelNamespace(r),
			Object:    r.Object,
			OldObject: r.OldObject,
			Username:  r.Username,
		}
		changed, findings := scopelabel.Admit(req, view)
		return Result{Findings: findings, Mutated: changed || marked}, nil
	})
}

// markNamespace adds to a Namespace the managed labels it should carry and
// lacks. A Namespace whose labels cannot be written is left alone.
func markNamespace(opts route.Options, ns map[string]any) (bool, error) {
	meta, _ := ns["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	raw, hasLabels := meta["labels"]
	current, ok := raw.(map[string]any)
	if meta == nil || name == "" || (hasLabels && !ok) {
		return false, nil
	}
	labels := map[string]string{}
	for k, v := range current {
		if s, ok := v.(string); ok {
			labels[k] = s
		}
	}
	want, err := route.WithManagedLabels(opts, name, labels)
	if err != nil {
		return false, err
	}
	changed := false
	for k, v := range want {
		if _, has := current[k]; has {
			continue
		}
		if current == nil {
			current = map[string]any{}
			meta["labels"] = current
		}
		current[k] = v
		changed = true
	}
	return changed, nil
}

// labelNamespace is the namespace LABEL reads for r: none for a Namespace,
// whose requests carry its own name as namespace although it is a
// cluster-scoped object.
func labelNamespace(r *Review) string {
	if route.IsNamespace(r.Resource.Group, r.Resource.Resource) {
		return ""
	}
	return r.Namespace
}
