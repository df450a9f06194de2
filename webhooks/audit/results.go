package audit

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// The enforcement modes a decision is made under (docs/operations.md).
const (
	ModeEnforce = "Enforce"
	ModeWarn    = "Warn"
	ModeAudit   = "Audit"
)

// Source is the source of every result gatehouse writes.
const Source = "gatehouse"

// The properties of a result.
const (
	PropertyField = "field"
	PropertyMode  = "mode"
)

// ReportResults turns the decisions on one object into report results, in
// decision order: per finding one result (policy = webhook, rule = code,
// message as the webhook wrote it, the field path a property); a denying
// finding is "fail" when its webhook enforces and "warn" in Warn or Audit
// mode, where nothing was denied; a warning is "warn"; a webhook that could
// not decide is "error"; a webhook that took the object and found nothing is
// one "pass". Messages carry names, keys and paths only, never values
// (docs/contracts.md), so the report does not either.
func ReportResults(r Result) []policyreportv1alpha2.PolicyReportResult {
	ref := []corev1.ObjectReference{{APIVersion: r.Object.APIVersion, Kind: r.Object.Kind,
		Namespace: r.Object.Namespace, Name: r.Object.Name, UID: r.Object.UID}}
	var out []policyreportv1alpha2.PolicyReportResult
	for _, d := range r.Decisions {
		if d.Outcome == webhooks.DecisionExempt {
			continue // never judged (docs/rollout.md)
		}
		mode := d.ModeName()
		base := policyreportv1alpha2.PolicyReportResult{Source: Source, Policy: d.Webhook, Resources: ref,
			Properties: map[string]string{PropertyMode: mode}}
		if d.Outcome == webhooks.DecisionErrored {
			res := base
			res.Result = policyreportv1alpha2.StatusError
			res.Rule = "ReviewError"
			res.Message = "the webhook could not decide on this object"
			out = append(out, res)
			continue
		}
		if len(d.Findings) == 0 {
			res := base
			res.Result = policyreportv1alpha2.StatusPass
			out = append(out, res)
			continue
		}
		for _, f := range d.Findings {
			res := base
			res.Properties = map[string]string{PropertyMode: mode, PropertyField: f.Field}
			res.Rule = string(f.Code)
			res.Message = f.Message
			res.Result = policyreportv1alpha2.StatusWarn
			if f.Severity == policies.Deny && mode == ModeEnforce {
				res.Result = policyreportv1alpha2.StatusFail
			}
			out = append(out, res)
		}
	}
	return out
}

// Actionable reports whether results hold anything but passes: only such
// objects get a report (a clean object costs no write).
func Actionable(results []policyreportv1alpha2.PolicyReportResult) bool {
	for _, r := range results {
		if r.Result != policyreportv1alpha2.StatusPass {
			return true
		}
	}
	return false
}

// Hash fingerprints results (without timestamps): a report whose hash is
// unchanged is not written again.
func Hash(results []policyreportv1alpha2.PolicyReportResult) string {
	h := fnv.New64a()
	enc := json.NewEncoder(h)
	for _, r := range results {
		r.Timestamp = metav1.Timestamp{}
		_ = enc.Encode(r)
	}
	return strconv.FormatUint(h.Sum64(), 36)
}
