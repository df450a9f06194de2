package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"gomodules.xyz/jsonpatch/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Webhook is one enabled registry entry, ready to serve.
type Webhook struct {
	Definition
	handler *handler
	// Admission is controller-runtime's HTTP adapter around the handler: it
	// caps the body, checks the content type, echoes the UID and recovers
	// panics into a denying 500. It hands the API server's ?timeout= to the
	// handler (withReviewDeadline).
	Admission *admission.Webhook
}

// Build returns the enabled webhooks of the registry, in registry order.
func Build(opts Options, enabled func(name string) bool) []*Webhook {
	var out []*Webhook
	for _, def := range Registry {
		if !enabled(def.Name) {
			continue
		}
		h := &handler{def: def, opts: opts, eval: def.New(opts)}
		out = append(out, &Webhook{
			Definition: def,
			handler:    h,
			Admission:  &admission.Webhook{Handler: h, WithContextFunc: withReviewDeadline, LogConstructor: requestLogger},
		})
	}
	return out
}

// requestLogger is the logger of one review: the request ID only. The
// decision line adds the operation, resource, namespace and name; the
// controller-runtime default would add them (and more) to every review's
// logger up front, which cost about a tenth of the server's CPU per review.
func requestLogger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil {
		return base
	}
	return base.WithValues("requestID", req.UID)
}

// handler is the adapter shared by every webhook: decode -> evaluate ->
// ratchet -> respond within the review's deadline (deadline.go), with one log
// line and one metric per decision.
type handler struct {
	def  Definition
	opts Options
	eval Evaluator
}

func (h *handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	findings, resp, timedOut := h.decideInTime(ctx, &req)
	record(ctx, findings)
	decision := decisionOf(resp)
	recordDecision(h.def.Name, decision, findings)
	// Denials, warnings, patches and errors are logged; a plain allow only
	// at verbosity 1 and above, as most reviews are plain allows and the
	// line was a tenth of the server's CPU.
	log := logf.FromContext(ctx)
	if decision == DecisionAllowed && len(findings) == 0 && len(resp.Patches) == 0 {
		log = log.V(1)
	}
	log.Info("decision",
		"webhook", h.def.Name,
		"operation", req.Operation,
		"resource", req.Resource.Resource,
		"namespace", req.Namespace,
		"name", req.Name,
		"decision", decision,
		"codes", findingCodes(findings),
		"durationSeconds", time.Since(start).Seconds(),
		"timedOut", timedOut,
	)
	return resp
}

func (h *handler) decide(ctx context.Context, req *admission.Request) ([]policies.Finding, admission.Response) {
	review, err := decodeReview(h.def, h.opts, req)
	if err != nil {
		return nil, admission.Errored(http.StatusBadRequest, err)
	}
	result, err := h.eval.Evaluate(ctx, review)
	if err != nil {
		return nil, internalError(h.def, err)
	}
	findings := result.Findings
	if review.Operation == admissionregistrationv1.Update && h.def.Type == Validating {
		old := *review
		old.Object, old.OldObject = review.OldObject, nil
		oldResult, err := h.eval.Evaluate(ctx, &old)
		if err != nil {
			return nil, internalError(h.def, err)
		}
		findings = ratchet(findings, oldResult.Findings)
	}
	policies.Sort(findings)
	resp := respond(h.def.Name, review, findings)
	if result.Mutated && resp.Allowed {
		mutated, err := json.Marshal(review.Object)
		if err != nil {
			return findings, internalError(h.def, err)
		}
		patched := admission.PatchResponseFromRaw(req.Object.Raw, mutated)
		if !patched.Allowed {
			return findings, patched
		}
		resp.Patches, resp.PatchType = canonicalPatch(patched.Patches), patched.PatchType
	}
	return findings, resp
}

// canonicalPatch orders a generated patch so the same request always gets
// the same patch bytes (the generator walks Go maps). Operations compare
// path segment by segment, array indices by number. The only operations
// whose order matters are those the generator writes at the tail of one
// array: adds in ascending index order, removes in descending order (every
// other operation on that array's elements has a lower index and is not
// shifted by them). Sorting a remove's final index in reverse keeps both.
func canonicalPatch(ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	keys := make(map[string][]patchSegment, len(ops))
	for _, op := range ops {
		keys[op.Operation+op.Path] = patchKey(op)
	}
	sort.SliceStable(ops, func(i, j int) bool {
		a, b := keys[ops[i].Operation+ops[i].Path], keys[ops[j].Operation+ops[j].Path]
		for k := 0; k < len(a) && k < len(b); k++ {
			if c := a[k].compare(b[k]); c != 0 {
				return c < 0
			}
		}
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return ops[i].Operation < ops[j].Operation
	})
	return ops
}

// patchSegment is one segment of a patch path, as canonicalPatch orders it.
type patchSegment struct {
	index   int // for an array index; reversed for the last one of a remove
	isIndex bool
	text    string
}

func patchKey(op jsonpatch.JsonPatchOperation) []patchSegment {
	parts := strings.Split(op.Path, "/")[1:]
	out := make([]patchSegment, len(parts))
	for i, p := range parts {
		out[i].text = p
		if n, err := strconv.Atoi(p); err == nil && n >= 0 && strconv.Itoa(n) == p {
			out[i].index, out[i].isIndex = n, true
			if op.Operation == "remove" && i == len(parts)-1 {
				out[i].index = -n - 1
			}
		}
	}
	return out
}

func (s patchSegment) compare(o patchSegment) int {
	switch {
	case s.isIndex && o.isIndex:
		return s.index - o.index
	case s.isIndex != o.isIndex:
		if s.isIndex {
			return -1
		}
		return 1
	}
	return strings.Compare(s.text, o.text)
}

// internalError denies: an enforcing webhook that cannot decide never allows.
func internalError(def Definition, err error) admission.Response {
	return admission.Errored(http.StatusInternalServerError, fmt.Errorf("webhook %s could not evaluate the request: %w", def.Name, err))
}

// Decisions as they appear in logs and the decision metric.
const (
	DecisionAllowed = "allowed"
	DecisionDenied  = "denied"
	DecisionErrored = "errored"
)

func decisionOf(resp admission.Response) string {
	switch {
	case resp.Allowed:
		return DecisionAllowed
	case resp.Result != nil && resp.Result.Code == http.StatusUnprocessableEntity:
		return DecisionDenied
	default:
		return DecisionErrored
	}
}
