package webhooks

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
)

// AuditAnnotationCodes is the audit annotation key carrying the finding codes
// of a decision; the API server prefixes it with the webhook's name.
const AuditAnnotationCodes = "codes"

// respond turns findings into the admission response: a 422 Invalid status
// with one cause per denying finding, an admission warning per warning, and
// the codes as an audit annotation.
//
// For an Invalid status kubectl prints only "The <Kind> <name> is invalid"
// and "* <field>: <cause message>" lines, not the API server's "admission
// webhook ... denied the request" prefix, so each cause message names the
// webhook itself. Warnings lead with the webhook and the code, because the
// API server may truncate long warnings.
func respond(webhook string, review *adapters.Review, findings []policies.Finding) admission.Response {
	var causes []metav1.StatusCause
	var warnings []string
	for _, f := range findings {
		if f.Severity == policies.Deny {
			causes = append(causes, metav1.StatusCause{
				Type:    metav1.CauseType(f.Code),
				Field:   f.Field,
				Message: fmt.Sprintf("%s: %s (gatehouse %s)", f.Code, f.Message, webhook),
			})
			continue
		}
		warnings = append(warnings, fmt.Sprintf("gatehouse %s: %s at %s: %s", webhook, f.Code, f.Field, f.Message))
	}
	var resp admission.Response
	if len(causes) == 0 {
		resp = admission.Allowed("")
	} else {
		resp = admission.Response{}
		resp.Allowed = false
		resp.Result = invalidStatus(review, causes)
	}
	resp.Warnings = warnings
	if codes := findingCodes(findings); len(codes) > 0 {
		resp.AuditAnnotations = map[string]string{AuditAnnotationCodes: strings.Join(codes, ",")}
	}
	return resp
}

// invalidStatus is what apierrors.NewInvalid builds, with the finding code in
// each cause: kubectl prints the message, which names every path.
func invalidStatus(review *adapters.Review, causes []metav1.StatusCause) *metav1.Status {
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = c.Field + ": " + c.Message
	}
	list := parts[0]
	if len(parts) > 1 {
		list = "[" + strings.Join(parts, ", ") + "]"
	}
	name := review.Name
	if name == "" {
		name, _ = nameOf(review.Object)
	}
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Message: fmt.Sprintf("%s %q is invalid: %s", review.Kind.Kind, name, list),
		Details: &metav1.StatusDetails{
			Name:   name,
			Group:  review.Kind.Group,
			Kind:   review.Kind.Kind,
			Causes: causes,
		},
	}
}

func nameOf(obj map[string]any) (string, bool) {
	meta, _ := obj["metadata"].(map[string]any)
	name, ok := meta["name"].(string)
	return name, ok
}

// findingCodes returns the distinct codes of findings, sorted.
func findingCodes(findings []policies.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range findings {
		if !seen[string(f.Code)] {
			seen[string(f.Code)] = true
			out = append(out, string(f.Code))
		}
	}
	sort.Strings(out)
	return out
}

// ratchet downgrades to warnings the denials of an UPDATE whose offending
// value is unchanged from the stored object: same code, same field, same
// value. Only content findings ratchet: a finding about the review or the
// view (StateUnavailable, a limit, a parse failure) carries no evidence and
// denies an UPDATE as it denies a CREATE, however the old object fared.
func ratchet(findings, oldFindings []policies.Finding) []policies.Finding {
	type key struct {
		code     policies.Code
		field    string
		evidence uint64
	}
	old := map[key]bool{}
	for _, f := range oldFindings {
		if f.Severity == policies.Deny {
			old[key{f.Code, f.Field, f.Evidence}] = true
		}
	}
	out := make([]policies.Finding, len(findings))
	for i, f := range findings {
		if f.Severity == policies.Deny && f.Ratchets() && old[key{f.Code, f.Field, f.Evidence}] {
			f.Severity = policies.Warn
			f.Message = "unchanged since it was stored, so allowed until the field changes: " + f.Message
		}
		out[i] = f
	}
	return out
}
