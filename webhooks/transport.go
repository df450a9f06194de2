package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"

	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// ReviewHandler serves a review chain over HTTP. controller-runtime's
// admission.Webhook still decides each review (Handle: the request's
// logger, panic recovery into a denying 500 with the panic counted, the
// response's UID and patch), and the server's Register instruments the
// handler as any other; only reading the AdmissionReview is gatehouse's.
// controller-runtime reads it with the API machinery's universal
// deserializer, which first runs a full encoding/json pass over the body
// only to learn its apiVersion and kind, then decodes it again: about an
// eighth of the server's CPU per review (docs/design.md, "Transport").
// Here the body is read once (readReview): its objects into the maps the
// members read, the rest with the same decoder (sigs.k8s.io/json,
// case-sensitive, as the deserializer decodes it) into the review and its
// type, under the same limits: a body over 7 MiB answers 413, an
// empty one or a content type other than application/json 400, a body that
// is not an admission.k8s.io/v1 or v1beta1 AdmissionReview 400; the answer
// is an AdmissionReview of the version asked in.
type ReviewHandler struct {
	*admission.Webhook
}

// admissionLog is controller-runtime's logger of its admission webhooks
// (logf.Log forwards to the logger set later).
var admissionLog = logf.Log.WithName("admission")

// maxReviewBytes is controller-runtime's limit on a review's body.
const maxReviewBytes = 7 * 1024 * 1024

// maxBodyHint bounds the buffer a request's Content-Length reserves before
// its body arrives: a client that states 7 MiB and sends nothing holds no
// more than this while the read times out.
const maxBodyHint = 256 * 1024

// readBody reads r to its end, as io.ReadAll does, into a buffer sized by
// hint, the request's Content-Length (-1 when unknown), so a body of the
// stated length is read without the doubling copies io.ReadAll makes from
// 512 bytes up (about a seventh of a review's allocated bytes). A hint that
// is wrong only costs those copies again.
func readBody(r io.Reader, hint int64) ([]byte, error) {
	size := 512
	if hint > 0 {
		size = int(min(hint, maxBodyHint)) + 1 // +1: EOF is read without growing
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// sentReview is an AdmissionReview as read: its type, and the request
// decoded where the chain reads it.
type sentReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *admissionv1.AdmissionRequest `json:"request,omitempty"`
}

// ServeHTTP answers one AdmissionReview.
func (h ReviewHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if h.WithContextFunc != nil {
		ctx = h.WithContextFunc(ctx, r)
	}
	if r.Body == nil || r.Body == http.NoBody {
		refuse(w, http.StatusBadRequest, errors.New("request body is empty"))
		return
	}
	defer r.Body.Close()
	limited := &io.LimitedReader{R: r.Body, N: maxReviewBytes}
	body, err := readBody(limited, r.ContentLength)
	if err != nil {
		refuse(w, http.StatusBadRequest, err)
		return
	}
	if limited.N <= 0 {
		refuse(w, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", maxReviewBytes))
		return
	}
	if contentType := r.Header.Get("Content-Type"); contentType != "application/json" {
		refuse(w, http.StatusBadRequest, fmt.Errorf("contentType=%s, expected application/json", contentType))
		return
	}
	var req admission.Request
	tm, objects, err := readReview(body, &req.AdmissionRequest)
	if err != nil {
		refuse(w, http.StatusBadRequest, err)
		return
	}
	if objects != nil {
		ctx = context.WithValue(ctx, decodedObjectsKey{}, objects)
	}
	gvk := reviewKind(tm)
	debug := admissionLog.V(5) // controller-runtime's debug lines, at its verbosity
	if debug.Enabled() {
		requestLogger(debug, &req).Info("received request")
	}
	resp := h.Handle(ctx, req)
	if writeReview(w, resp, gvk) {
		if debug.Enabled() {
			if res := resp.Result; res != nil {
				debug = debug.WithValues("code", res.Code, "reason", res.Reason, "message", res.Message)
			}
			debug.Info("wrote response", "requestID", resp.UID, "allowed", resp.Allowed)
		}
	}
}

// readReview decodes body, an AdmissionReview, into req, and returns the
// type it names. The body is read once: apidefaults.ReadReview decodes the
// request and, in the same pass, its objects into the maps the members read
// (returned as objects). A body it is not sure of is decoded whole by
// sigs.k8s.io/json, which answers and errs as before (objects nil; each
// member then decodes the object from req).
func readReview(body []byte, req *admissionv1.AdmissionRequest) (metav1.TypeMeta, *apidefaults.ReviewObjects, error) {
	if tm, objects, ok := apidefaults.ReadReview(body, req); ok {
		return tm, &objects, nil
	}
	*req = admissionv1.AdmissionRequest{}
	sent := sentReview{Request: req}
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &sent)
	return sent.TypeMeta, nil, err
}

// decodedObjectsKey holds, in a review's context, the objects readReview
// decoded.
type decodedObjectsKey struct{}

// decodedObjectsOf returns the objects readReview decoded from the body of
// ctx's request, or nil.
func decodedObjectsOf(ctx context.Context) *apidefaults.ReviewObjects {
	s, _ := ctx.Value(decodedObjectsKey{}).(*apidefaults.ReviewObjects)
	return s
}

// reviewKind is the type the answer is written as: the type the review
// names, as it names it, or the v1 AdmissionReview when it names none. This
// is controller-runtime's answer: it decodes into a type of its own that no
// scheme knows, so the deserializer keeps the body's apiVersion and kind
// without defaults, and its writer types an answer to a review that names
// no type as v1. (Its deserializer reads them case-insensitively; a body
// whose apiVersion or kind key is spelled in another case, which no API
// server sends, is answered here as one that names no type.)
func reviewKind(tm metav1.TypeMeta) schema.GroupVersionKind {
	if gvk := tm.GroupVersionKind(); gvk != (schema.GroupVersionKind{}) {
		return gvk
	}
	return admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
}

// refuse answers a body that is not a review, as controller-runtime does:
// an AdmissionReview without a type around the error.
func refuse(w io.Writer, code int32, err error) {
	admissionLog.Error(err, "bad request")
	writeReview(w, admission.Errored(code, err), schema.GroupVersionKind{})
}

// writeReview writes resp as an AdmissionReview of type gvk (none for an
// answer to a body that was not a review), and reports whether it could.
func writeReview(w io.Writer, resp admission.Response, gvk schema.GroupVersionKind) bool {
	ar := admissionv1.AdmissionReview{Response: &resp.AdmissionResponse}
	ar.SetGroupVersionKind(gvk)
	if err := json.NewEncoder(w).Encode(ar); err != nil {
		// The review always encodes: the connection broke. Say so once.
		admissionLog.Error(err, "unable to write the response")
		return false
	}
	return true
}
