package webhooks

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
)

type recorderKey struct{}

// Decide runs req through w exactly as the server does (controller-runtime's
// admission.Webhook, then the shared handler) and also returns the findings
// behind the response, for `gatehouse check` and tests.
func Decide(ctx context.Context, w *Webhook, req admission.Request) (admission.Response, []policies.Finding) {
	var findings []policies.Finding
	ctx = context.WithValue(ctx, recorderKey{}, &findings)
	resp := w.Admission.Handle(ctx, req)
	return resp, findings
}

// record hands findings to Decide's caller, if any.
func record(ctx context.Context, findings []policies.Finding) {
	if dst, ok := ctx.Value(recorderKey{}).(*[]policies.Finding); ok {
		*dst = findings
	}
}
