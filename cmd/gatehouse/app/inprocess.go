package app

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// inProcessNarrowing is what `check --layout in-process` changes in the
// review chain: a validating member whose allows predicate holds on the
// object as the mutating webhooks left it is not called by the API server
// (docs/in-process.md), so it answers allowed, as the API server does.
// Where the predicate is sound (TestInProcessNarrowingIsSound) that is the
// member's own answer.
type inProcessNarrowing struct {
	narrowing render.InProcessNarrowing
}

func newInProcessNarrowing(opts route.Options) *inProcessNarrowing {
	return &inProcessNarrowing{narrowing: render.NewInProcessNarrowing(opts)}
}

// review replaces the decision of each member the layout narrows away from
// req. An undecided member stays undecided: the API server would have
// matched its entry's namespace selector first, which check could not.
func (p *inProcessNarrowing) review(_ context.Context, req ctrladmission.Request, final map[string]any, decisions []webhooks.Decision) ([]webhooks.Decision, error) {
	out := make([]webhooks.Decision, 0, len(decisions))
	for _, d := range decisions {
		if def, _ := route.Lookup(d.Webhook); def.Type == route.Validating && d.Outcome != webhooks.DecisionUndecided {
			allows, err := p.narrowing.Allows(d.Webhook, &req, final, nil)
			if err != nil {
				return nil, err
			}
			if allows {
				d = webhooks.Decision{Webhook: d.Webhook, Outcome: webhooks.DecisionAllowed,
					Response: ctrladmission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: 200}}}}
			}
		}
		out = append(out, d)
	}
	return out, nil
}
