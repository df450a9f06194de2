package webhooks

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// Evaluator decides one decoded review; an error is an internal failure and
// denies.
type Evaluator interface {
	Evaluate(ctx context.Context, review *Review) (Result, error)
}

// EvaluatorFunc adapts a function to Evaluator.
type EvaluatorFunc func(ctx context.Context, review *Review) (Result, error)

// Evaluate calls f.
func (f EvaluatorFunc) Evaluate(ctx context.Context, review *Review) (Result, error) {
	return f(ctx, review)
}

// Result is what an evaluator decided.
type Result struct {
	Findings []policies.Finding
	// Mutated reports that a mutating evaluator changed review.Object in
	// place. The adapter turns the change into a JSON patch against the raw
	// request bytes, so fields the evaluator does not know survive.
	Mutated bool
}

// Review is an admission request decoded once for the evaluators.
type Review struct {
	Operation admissionregistrationv1.OperationType
	Kind      schema.GroupVersionKind
	Resource  schema.GroupVersionResource
	// Subresource is set for subresource requests (pods/ephemeralcontainers,
	// pods/status).
	Subresource string
	Namespace   string
	Name        string
	// Object is the object being admitted, decoded from JSON.
	Object map[string]any
	// OldObject is the stored object on UPDATE, nil otherwise.
	OldObject map[string]any
	// Request is the raw request, for evaluators that need userInfo.
	Request *admission.Request
}

// decodeReview turns a request into a Review, or says why it cannot: a
// resource this webhook does not intercept, a kind that disagrees with the
// resource, or an object that is missing or not a JSON object. The errors
// never quote the object.
func decodeReview(def Definition, opts Options, req *admission.Request) (*Review, error) {
	op := admissionregistrationv1.OperationType(req.Operation)
	gvr := schema.GroupVersionResource(req.Resource)
	gvk := schema.GroupVersionKind(req.Kind)
	if !def.Intercept.Matches(op, gvr, req.SubResource, opts) {
		res := gvr.GroupResource().String()
		if req.SubResource != "" {
			res += "/" + req.SubResource
		}
		return nil, fmt.Errorf("webhook %s does not handle %s of %s; check the rules of its webhook configuration", def.Name, op, res)
	}
	if !def.Intercept.UserMatches(op, req.UserInfo.Username) {
		return nil, fmt.Errorf("webhook %s takes UPDATEs from service accounts only; check the matchConditions of its webhook configuration", def.Name)
	}
	if !def.Intercept.ChangeMatches(op, req.Object.Raw, req.OldObject.Raw) {
		return nil, fmt.Errorf("webhook %s takes only UPDATEs that change labels; check the matchConditions of its webhook configuration", def.Name)
	}
	if err := def.Intercept.checkKind(gvr, req.SubResource, gvk); err != nil {
		return nil, err
	}
	if !def.Intercept.ObjectMatches(req.Namespace, req.Name, opts) {
		return nil, fmt.Errorf("webhook %s validates only %s/%s; check the matchConditions of its webhook configuration",
			def.Name, opts.Overrides.Namespace, opts.Overrides.ConfigMapName)
	}
	obj, err := decodeObject(def, "object", req.Object.Raw, gvk)
	if err != nil {
		return nil, err
	}
	r := &Review{
		Operation:   op,
		Kind:        gvk,
		Resource:    gvr,
		Subresource: req.SubResource,
		Namespace:   req.Namespace,
		Name:        req.Name,
		Object:      obj,
		Request:     req,
	}
	if op == admissionregistrationv1.Update {
		if r.OldObject, err = decodeObject(def, "oldObject", req.OldObject.Raw, gvk); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// decodeObject decodes one object of the review. An object of a built-in
// kind must also decode into its Go type (k8s.io/api), as the API server's
// own decoder requires: a Pod whose spec.containers is a string would
// otherwise reach the evaluators, which skip what is not a list, and be
// allowed. The API server never sends such an object (it decoded the object
// before admission), so whoever did is answered with a 400 naming the field,
// which denies on every webhook whatever its failure policy. Fields the Go
// type does not know are accepted: an API server newer than gatehouse's
// k8s.io/api sends them.
func decodeObject(def Definition, what string, raw []byte, gvk schema.GroupVersionKind) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("request.%s is missing", what)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("request.%s is not a JSON object", what)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if (apiVersion != "" || kind != "") && (apiVersion != gvk.GroupVersion().String() || kind != gvk.Kind) {
		return nil, fmt.Errorf("request.%s is not a %s, as request.kind says", what, gvk.Kind)
	}
	if _, err := apidefaults.Decode(gvk, raw); err != nil {
		return nil, fmt.Errorf("%s: request.%s is %s; the API server never sends an object that does not decode into its type (gatehouse %s)",
			ReasonUndecodableObject, what, err, def.Name)
	}
	return obj, nil
}

// ReasonUndecodableObject names a review whose object, of a built-in kind,
// does not decode into its Go type.
const ReasonUndecodableObject = "UndecodableObject"
