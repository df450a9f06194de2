package webhooks

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
)

// harness-labels: LABEL (docs/contracts.md §5), the scope labels of Enforce-mode
// harnesses copied onto new objects. Their protection on UPDATE is
// harness-labels-guard's, which fails closed.
func newHarnessLabels(opts Options) Evaluator {
	view := harnessView{state: opts.ClusterState, namespaces: opts.Namespaces}
	return EvaluatorFunc(func(_ context.Context, r *Review) (Result, error) {
		req := scopelabel.Request{
			Update:    r.Operation == admissionregistrationv1.Update,
			Namespace: labelNamespace(r),
			Object:    r.Object,
			OldObject: r.OldObject,
			Username:  r.Username,
		}
		changed, findings := scopelabel.Admit(req, view)
		return Result{Findings: findings, Mutated: changed}, nil
	})
}

// labelNamespace is the namespace LABEL reads for r: none for a Namespace,
// whose requests carry its own name as namespace although it is a
// cluster-scoped object.
func labelNamespace(r *Review) string {
	if r.Resource.Group == "" && r.Resource.Resource == "namespaces" {
		return ""
	}
	return r.Namespace
}
