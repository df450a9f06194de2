//go:build !gatehouse_server

package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/klog/v2"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/admissionpolicy"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// inProcessPolicies is what `check --layout in-process` adds to the review
// chain: the admission policies that layout renders, evaluated by the API
// server's own admission-policy code, in the place the API server runs them
// (after the mutating webhooks, before the validating ones).
type inProcessPolicies struct {
	opts      route.Options
	validator *admissionpolicy.Validator
}

func newInProcessPolicies(opts route.Options, enabled func(string) bool, namespaces route.NamespaceReader) (*inProcessPolicies, error) {
	// The plugin's informers log their progress through klog; check's
	// stderr is for the user's input errors.
	klog.SetLogger(logr.Discard())
	rendered := render.InProcess(route.ManifestOptions{Namespace: DefaultNamespace, Options: opts})
	var vaps []admissionregistrationv1.ValidatingAdmissionPolicy
	var bindings []admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for i, p := range rendered.Validating {
		// A switched-off webhook takes its policy with it.
		if webhook, ok := rendered.Webhook(p.Name); ok && enabled(webhook) {
			vaps = append(vaps, p)
			bindings = append(bindings, rendered.Bindings[i])
		}
	}
	v, err := admissionpolicy.NewValidator(vaps, bindings, func(name string) (map[string]string, bool) {
		labels, err := namespaces.NamespaceLabels(name)
		return labels, err == nil && labels != nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading the in-process layout's admission policies: %w", err)
	}
	return &inProcessPolicies{opts: opts, validator: v}, nil
}

func (p *inProcessPolicies) close() { p.validator.Close() }

// review runs the policies on the object as the mutating webhooks left it.
// A validating webhook's decision on a request its policy decides is
// replaced by the policy's (the in-process layout does not send it the
// request); a policy that denies where no webhook decided adds its own.
func (p *inProcessPolicies) review(ctx context.Context, req ctrladmission.Request, final map[string]any, decisions []webhooks.Decision) ([]webhooks.Decision, error) {
	raw, err := json.Marshal(final)
	if err != nil {
		return nil, err
	}
	err = p.validator.Validate(ctx, admissionpolicy.Request{
		Kind: schema.GroupVersionKind(req.Kind), Resource: schema.GroupVersionResource(req.Resource), SubResource: req.SubResource,
		Namespace: req.Namespace, Name: req.Name, Operation: admission.Operation(req.Operation), Object: raw, Username: req.UserInfo.Username,
	})
	byWebhook := map[string]webhooks.Decision{}
	var unattributed []webhooks.Decision
	if err != nil {
		status := admissionpolicy.Denial(err)
		if status == nil {
			return nil, err
		}
		found := render.PolicyFindings(status.Message)
		for _, f := range found {
			d := byWebhook[f.Webhook]
			d.Webhook, d.Outcome = f.Webhook, webhooks.DecisionDenied
			d.Findings = append(d.Findings, policies.Finding{Code: policies.Code(f.Code), Field: f.Field, Message: f.Message, Severity: policies.Deny})
			d.Response = ctrladmission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: status}}
			byWebhook[f.Webhook] = d
		}
		if len(found) == 0 {
			unattributed = append(unattributed, webhooks.Decision{Webhook: "admission-policy", Outcome: webhooks.DecisionDenied,
				Response: ctrladmission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: status}}})
		}
	}
	out := make([]webhooks.Decision, 0, len(decisions)+1)
	for _, d := range decisions {
		def, _ := route.Lookup(d.Webhook)
		// A webhook in Warn or Audit keeps its own decision: its binding
		// only warns or audits (validationActions), which the plugin does
		// not return, and its policy finds what the webhook finds
		// (TestEveryLayoutGivesTheSameVerdict in e2e/layouts_test.go).
		// An undecided webhook stays undecided: its policy was evaluated
		// without what the webhook was missing either.
		if d.Outcome == webhooks.DecisionUndecided {
			delete(byWebhook, d.Webhook)
		} else if def.Type == route.Validating && p.opts.ModeOf(d.Webhook) == configv1alpha1.ModeEnforce {
			decides, err := render.InProcessDecides(d.Webhook, p.opts, &req, final, nil)
			if err != nil {
				return nil, err
			}
			if decides {
				if denial, ok := byWebhook[d.Webhook]; ok {
					d = denial
					delete(byWebhook, d.Webhook)
				} else {
					d = webhooks.Decision{Webhook: d.Webhook, Outcome: webhooks.DecisionAllowed,
						Response: ctrladmission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: 200}}}}
				}
			}
		}
		out = append(out, d)
	}
	for _, name := range route.Names() {
		if d, ok := byWebhook[name]; ok {
			out = append(out, d)
		}
	}
	return append(out, unattributed...), nil
}
