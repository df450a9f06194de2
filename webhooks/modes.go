package webhooks

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// Modes (docs/rollout.md): a webhook in Enforce answers as its contract
// says; one in Warn or Audit decides exactly as in Enforce (the same
// findings, the same Decision.Outcome, the same metric), and then answers
// with an allow:
//   - Warn: each denying finding, or the reason it could not decide,
//     becomes an admission warning (kubectl prints it);
//   - Audit: nothing the requester sees; the codes, the fields and, for a
//     mutating webhook, the patch it withheld go to audit annotations.
//
// A webhook that does not enforce is rendered with failurePolicy Ignore: a
// gatehouse that does not answer must not block what it would admit anyway.

// ModeName is the mode d was decided in, as reports and check print it: a
// decision made outside a chain (none of the chain's own) reads as Enforce.
func (d Decision) ModeName() string {
	if d.Mode == "" {
		return string(configv1alpha1.ModeEnforce)
	}
	return string(d.Mode)
}

// The audit annotations of a webhook that does not enforce (the API server
// prefixes each with the webhook's configuration entry name).
const (
	// AuditAnnotationMode is the mode the findings were recorded in.
	AuditAnnotationMode = "mode"
	// AuditAnnotationFindings lists "CODE at field" per denying finding.
	AuditAnnotationFindings = "findings"
	// AuditAnnotationWithheld lists the operations of the patch a mutating
	// webhook in Audit did not apply.
	AuditAnnotationWithheld = "withheld-patch"
	// AuditAnnotationError is why the webhook could not decide.
	AuditAnnotationError = "error"
)

// maxAnnotation bounds one audit annotation value: the audit log keeps
// every one, for every request.
const maxAnnotation = 1024

// inMode turns d, decided as in Enforce, into the answer of a webhook in
// mode: unchanged in Enforce, an allow otherwise. The outcome, findings and
// withheld patch stay as decided, for the log line, the metric and check.
func inMode(d Decision, mode configv1alpha1.Mode) Decision {
	d.Mode = mode
	if mode == configv1alpha1.ModeEnforce || d.Webhook == "" {
		return d
	}
	enforced := d.Response
	resp := admission.Allowed("")
	var reasons []string // "CODE at field", or the error
	for _, f := range d.Findings {
		if r := fmt.Sprintf("%s at %s", f.Code, f.Field); f.Severity == policies.Deny && !d.excusedFinding(f) && !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	errText := ""
	if !enforced.Allowed && len(reasons) == 0 && enforced.Result != nil {
		errText = enforced.Result.Message
	}
	switch mode {
	case configv1alpha1.ModeWarn:
		resp.Warnings = append([]string(nil), enforced.Warnings...)
		for _, f := range d.Findings {
			if f.Severity == policies.Deny && !d.excusedFinding(f) {
				resp.Warnings = append(resp.Warnings, fmt.Sprintf("gatehouse %s (Warn, would deny): %s at %s: %s", d.Webhook, f.Code, f.Field, f.Message))
			}
		}
		if errText != "" {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("gatehouse %s (Warn, would deny): %s", d.Webhook, errText))
		}
	case configv1alpha1.ModeAudit:
		// Silent: not even the findings that only warn reach the requester.
	}
	annotations := map[string]string{AuditAnnotationMode: string(mode)}
	for k, v := range enforced.AuditAnnotations {
		annotations[k] = v
	}
	if len(reasons) > 0 {
		annotations[AuditAnnotationFindings] = capped(strings.Join(reasons, "; "))
	}
	if errText != "" {
		annotations[AuditAnnotationError] = capped(errText)
	}
	if len(d.Withheld) > 0 {
		annotations[AuditAnnotationWithheld] = capped(strings.Join(d.Withheld, ", "))
	}
	resp.AuditAnnotations = annotations
	if !enforced.Allowed {
		d.WouldDeny = enforced.Result
	}
	d.Response = resp
	return d
}

// capped shortens s to maxAnnotation bytes, saying so.
func capped(s string) string {
	if len(s) <= maxAnnotation {
		return s
	}
	const more = " ... (truncated)"
	cut := maxAnnotation - len(more)
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
