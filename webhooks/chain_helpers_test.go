package webhooks

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// decide runs req through w's own review chain, as its endpoint does, and
// returns the answer with the findings of w's decision.
func decide(ctx context.Context, w *Webhook, req admission.Request) (admission.Response, []policies.Finding) {
	v := w.Admission.Handler.(*endpoint).chain.review(ctx, &req)
	var findings []policies.Finding
	for _, d := range v.decisions {
		findings = append(findings, d.Findings...)
	}
	return v.resp, findings
}

// ownEndpoint serves def's own endpoint with eval in place of its
// evaluator.
func ownEndpoint(def route.Definition, eval adapters.Evaluator) *endpoint {
	return &endpoint{chain: &chain{name: def.Name, failurePolicy: def.FailurePolicy, members: []member{{Member: route.Member{Def: def}, eval: eval}}, serves: servesWebhook}}
}
