package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Group is one combined endpoint (docs/contracts.md §10): every enabled webhook of
// one type and failure policy, run in registry order in one call. Each call
// the API server makes costs a TLS round trip and a full encode and decode
// of the object, and mutating entries run one after another; a Pod create
// that six entries intercept pays that once per group instead.
type Group struct {
	Name          string
	Path          string
	Type          Type
	FailurePolicy admissionregistrationv1.FailurePolicyType
}

// Groups are the combined endpoints, as few as the failure policies require.
var Groups = []Group{
	{Name: "mutating-ignore", Path: "/mutate/combined-ignore", Type: Mutating, FailurePolicy: admissionregistrationv1.Ignore},
	{Name: "mutating-fail", Path: "/mutate/combined-fail", Type: Mutating, FailurePolicy: admissionregistrationv1.Fail},
	{Name: "validating-fail", Path: "/validate/combined-fail", Type: Validating, FailurePolicy: admissionregistrationv1.Fail},
}

// harnessed says where a member runs relative to the harnessed-namespace
// label.
type harnessed int

const (
	anyNamespace harnessed = iota
	labelledOnly
	unlabelledOnly
)

// member is a webhook's place in a group.
type member struct {
	def   Definition
	where harnessed
}

// members returns the registry's webhooks that group g runs. A webhook that
// fails closed only in harnessed namespaces belongs to the failing-closed
// group there and to the failing-open group elsewhere, as its two entries in
// the separate layout do.
func (g Group) members() []member {
	var out []member
	for _, def := range Registry {
		if def.Type != g.Type {
			continue
		}
		switch {
		case def.FailClosedOnlyInHarnessed && g.FailurePolicy == admissionregistrationv1.Fail:
			out = append(out, member{def, labelledOnly})
		case def.FailClosedOnlyInHarnessed && g.FailurePolicy == admissionregistrationv1.Ignore:
			out = append(out, member{def, unlabelledOnly})
		case def.FailurePolicy == g.FailurePolicy:
			out = append(out, member{def, anyNamespace})
		}
	}
	return out
}

// selects reports whether the group runs m on a request: what the member's
// own entry would be sent, given the namespace's labels.
func (m member) selects(req *admission.Request, namespaceLabels map[string]string, opts Options) bool {
	return m.selectsRequest(req, opts) && (!m.needsNamespace() || m.selectsNamespace(namespaceLabels, opts))
}

// selectsRequest is the part of selects that needs no namespace labels.
func (m member) selectsRequest(req *admission.Request, opts Options) bool {
	op := admissionregistrationv1.OperationType(req.Operation)
	in := m.def.Intercept
	return in.Matches(op, schema.GroupVersionResource(req.Resource), req.SubResource, opts) &&
		in.UserMatches(op, req.UserInfo.Username) && in.ObjectMatches(req.Namespace, req.Name, opts) &&
		in.ChangeMatches(op, req.Object.Raw, req.OldObject.Raw)
}

// selectsNamespace is the part of selects that reads the namespace's labels.
func (m member) selectsNamespace(namespaceLabels map[string]string, opts Options) bool {
	if !m.def.Intercept.NamespaceMatches(namespaceLabels, opts) {
		return false
	}
	_, labelled := namespaceLabels[opts.HarnessedNamespaceLabel]
	switch m.where {
	case labelledOnly:
		return labelled
	case unlabelledOnly:
		return !labelled
	}
	return true
}

// needsNamespace reports whether selecting m reads the namespace's labels.
func (m member) needsNamespace() bool {
	return m.def.Intercept.OptIn || m.where != anyNamespace
}

// Combined is one group, ready to serve.
type Combined struct {
	Group
	// Admission is controller-runtime's HTTP adapter around the group.
	Admission *admission.Webhook
}

// BuildCombined returns the combined endpoints over the enabled webhooks in
// hooks (from Build, so each member keeps its own evaluator, log line,
// metric and audit annotation).
func BuildCombined(hooks []*Webhook, opts Options) []*Combined {
	byName := map[string]*Webhook{}
	for _, w := range hooks {
		byName[w.Name] = w
	}
	var out []*Combined
	for _, g := range Groups {
		h := &combinedHandler{group: g, opts: opts}
		for _, m := range g.members() {
			if w, ok := byName[m.def.Name]; ok {
				h.members = append(h.members, m)
				h.hooks = append(h.hooks, w)
			}
		}
		out = append(out, &Combined{Group: g, Admission: &admission.Webhook{Handler: h, WithContextFunc: withReviewDeadline, LogConstructor: requestLogger}})
	}
	return out
}

type combinedHandler struct {
	group   Group
	opts    Options
	members []member
	hooks   []*Webhook
}

// Handle runs every member that the request would have been sent to in the
// separate layout, in registry order. A mutating member sees the object as
// the members before it left it. The first member that denies or fails
// answers for the group, as the API server would stop at its rejection;
// otherwise the answer carries every member's warnings, audit annotations
// (as "<member>.codes") and one patch from the original object to the final.
func (h *combinedHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	original := req.Object.Raw
	current := original
	var warnings []string
	annotations := map[string]string{}
	// The namespace's labels are read once, and only when a member that the
	// request otherwise concerns depends on them.
	var labels map[string]string
	var nsErr error
	nsRead := false
	for i, m := range h.members {
		if !m.selectsRequest(&req, h.opts) {
			continue
		}
		if m.needsNamespace() {
			if !nsRead {
				labels, nsErr = h.namespaceLabelsInTime(ctx, req)
				nsRead = true
			}
			if nsErr != nil {
				err := fmt.Errorf("combined webhook %s cannot tell whether %s applies: %w", h.group.Name, m.def.Name, nsErr)
				if h.group.FailurePolicy == admissionregistrationv1.Ignore {
					// What the API server does for a failing Ignore entry.
					warnings = append(warnings, fmt.Sprintf("gatehouse %s: skipped: %v", m.def.Name, err))
					continue
				}
				return admission.Errored(http.StatusInternalServerError, err)
			}
			if !m.selectsNamespace(labels, h.opts) {
				continue
			}
		}
		memberReq := req
		memberReq.Object.Raw = current
		resp := h.hooks[i].handler.Handle(ctx, memberReq)
		warnings = append(warnings, resp.Warnings...)
		for k, v := range resp.AuditAnnotations {
			annotations[m.def.Name+"."+k] = v
		}
		if !resp.Allowed {
			resp.Warnings, resp.AuditAnnotations = warnings, annotations
			return resp
		}
		if len(resp.Patches) == 0 {
			continue
		}
		next, err := ApplyPatch(current, resp.Patches)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError,
				fmt.Errorf("combined webhook %s: applying the patch of %s: %w", h.group.Name, m.def.Name, err))
		}
		current = next
	}
	resp := admission.Allowed("")
	if !slices.Equal(current, original) {
		resp = admission.PatchResponseFromRaw(original, current)
		resp.Patches = canonicalPatch(resp.Patches)
	}
	resp.Warnings = warnings
	if len(annotations) > 0 {
		resp.AuditAnnotations = annotations
	}
	return resp
}

// namespaceLabelsInTime is namespaceLabels within the review's deadline: a
// namespace read that hangs is an error, not a late answer.
func (h *combinedHandler) namespaceLabelsInTime(ctx context.Context, req admission.Request) (map[string]string, error) {
	type result struct {
		labels map[string]string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		labels, err := h.namespaceLabels(req)
		done <- result{labels, err}
	}()
	d := deadlineOf(ctx)
	timer := time.NewTimer(time.Until(d.deadline))
	defer timer.Stop()
	select {
	case r := <-done:
		return r.labels, r.err
	case <-timer.C:
		return nil, fmt.Errorf("%s: the namespace's labels were not read within the review's budget of the API server's %s timeout",
			ReasonReviewTimeout, d.timeout)
	}
}

// namespaceLabels reads the labels of the request's namespace; none for a
// cluster-scoped object.
func (h *combinedHandler) namespaceLabels(req admission.Request) (map[string]string, error) {
	if req.Namespace == "" {
		return nil, nil
	}
	if h.opts.Namespaces == nil {
		return nil, errNoClusterState
	}
	labels, err := h.opts.Namespaces.NamespaceLabels(req.Namespace)
	if err != nil {
		return nil, err
	}
	// The API server's namespaceSelector sees this label on every
	// namespace. The view's map is its own: add it to a copy.
	if _, ok := labels[corev1.LabelMetadataName]; !ok {
		withName := make(map[string]string, len(labels)+1)
		maps.Copy(withName, labels)
		withName[corev1.LabelMetadataName] = req.Namespace
		labels = withName
	}
	return labels, nil
}

// ApplyPatch applies a webhook's JSON patch to the object it was computed
// on, as the API server does (`gatehouse check` applies them the same way).
func ApplyPatch(raw []byte, ops []gomodulesjsonpatch.JsonPatchOperation) ([]byte, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return nil, err
	}
	return patch.Apply(raw)
}
