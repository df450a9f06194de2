package webhooks

import (
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// sharedReview is the review of one request, decoded when the first member
// runs and shared by every member after it.
type sharedReview struct {
	req *admission.Request
	// objects are req's objects as the transport decoded them, or nil.
	objects *apidefaults.ReviewObjects
	done    bool
	review  *adapters.Review
	err     error
	// sent is the object as decoded from the request, the patch's starting
	// point while sentIntact: no member has changed an object in place
	// since (every mutating member so far copied on write).
	sent       map[string]any
	sentIntact bool
	// decodedInto holds the review, so a review costs no allocation of its
	// own beyond the chain's state.
	decodedInto adapters.Review
}

// decoded returns the review, or says why the request cannot be decoded:
// an object that is missing, not a JSON object, not of the request's kind,
// or that does not decode into its Go type. def is the member asking, whom
// the error names. The errors never quote the object.
func (s *sharedReview) decoded(def route.Definition) (*adapters.Review, error) {
	if !s.done {
		if s.err = decode(s.req, s.objects, &s.decodedInto); s.err == nil {
			s.review = &s.decodedInto
			s.sent, s.sentIntact = s.review.Object, true
		}
		s.done = true
	}
	if u, ok := s.err.(*undecodable); ok {
		return nil, fmt.Errorf("%s: request.%s is %s; the API server never sends an object that does not decode into its type (gatehouse %s)",
			ReasonUndecodableObject, u.what, u.err, def.Name)
	}
	return s.review, s.err
}

// decode decodes req into r, taking each object from objects when the
// transport decoded it from the same bytes.
func decode(req *admission.Request, objects *apidefaults.ReviewObjects, r *adapters.Review) error {
	gvk := schema.GroupVersionKind(req.Kind)
	op := admissionregistrationv1.OperationType(req.Operation)
	var decoded, oldDecoded map[string]any
	if objects != nil {
		decoded = decodedFrom(objects.Object, req.Object.Raw, gvk)
		oldDecoded = decodedFrom(objects.OldObject, req.OldObject.Raw, gvk)
	}
	obj, err := decodeObject("object", req.Object.Raw, gvk, decoded)
	if err != nil {
		return err
	}
	*r = adapters.Review{
		Operation:   op,
		Kind:        gvk,
		Resource:    schema.GroupVersionResource(req.Resource),
		Subresource: req.SubResource,
		Namespace:   req.Namespace,
		Name:        req.Name,
		Username:    req.UserInfo.Username,
		Object:      obj,
	}
	if op == admissionregistrationv1.Update {
		if r.OldObject, err = decodeObject("oldObject", req.OldObject.Raw, gvk, oldDecoded); err != nil {
			return err
		}
	}
	return nil
}

// decodedFrom is o's map when it was decoded, as gvk, from raw itself.
func decodedFrom(o apidefaults.ReviewObject, raw []byte, gvk schema.GroupVersionKind) map[string]any {
	if o.Map == nil || o.Kind != gvk || len(raw) != len(o.Raw) || len(raw) == 0 || &raw[0] != &o.Raw[0] {
		return nil
	}
	return o.Map
}

// undecodable is an object of a built-in kind that does not decode into its
// Go type; the member that meets it names itself in the error.
type undecodable struct {
	what string
	err  error
}

func (u *undecodable) Error() string { return fmt.Sprintf("request.%s is %s", u.what, u.err) }

// decodeObject decodes one object of the review. An object of a built-in
// kind must also decode into its Go type (k8s.io/api), as the API server's
// own decoder requires: a Pod whose spec.containers is a string would
// otherwise reach the evaluators, which skip what is not a list, and be
// allowed. The API server never sends such an object (it decoded the object
// before admission), so whoever did is answered with a 400 naming the field,
// which denies on every webhook whatever its failure policy. Fields the Go
// type does not know are accepted: an API server newer than gatehouse's
// k8s.io/api sends them.
//
// The object is read once: apidefaults.DecodeMap makes the map and checks
// the Go type in the same pass (decoded, when the transport's pass already
// did). Only an object it is not sure of (one the API server would not
// send, or that uses what that pass leaves alone) is decoded again the slow
// way, which says why.
func decodeObject(what string, raw []byte, gvk schema.GroupVersionKind, decoded map[string]any) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("request.%s is missing", what)
	}
	obj, decodes := decoded, decoded != nil
	if !decodes {
		obj, decodes = apidefaults.DecodeMap(gvk, raw)
	}
	if !decodes {
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("request.%s is not a JSON object", what)
		}
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if (apiVersion != "" || kind != "") && (apiVersion != gvk.GroupVersion().String() || kind != gvk.Kind) {
		return nil, fmt.Errorf("request.%s is not a %s, as request.kind says", what, gvk.Kind)
	}
	if !decodes {
		if _, err := apidefaults.Decode(gvk, raw); err != nil {
			return nil, &undecodable{what: what, err: err}
		}
	}
	return obj, nil
}

// ReasonUndecodableObject names a review whose object, of a built-in kind,
// does not decode into its Go type.
const ReasonUndecodableObject = "UndecodableObject"
