package audit

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
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
	// PropertyOmitted is the number of results a bounded report leaves
	// out, on its RuleReportTruncated result.
	PropertyOmitted = "omitted"
	// PropertyExcusedBy names the exception that excuses a finding
	// (Result.Excused), on the finding's result, which is then a skip.
	PropertyExcusedBy = "excusedBy"
	// PropertyExceptionExpired names the exception that would excuse a
	// finding had it not expired (Result.Expired); the finding keeps its
	// fail or warn.
	PropertyExceptionExpired = "exceptionExpired"
	// PropertyExceptionState and PropertyExcusedCount are an exception's
	// state in the pass and the findings it excused, on its own report's
	// RuleExceptionState result.
	PropertyExceptionState = "state"
	PropertyExcusedCount   = "excused"
)

// RuleExceptionState is the rule of the result an exception's own report
// carries about what the exception did in the pass (ExceptionStateResult).
const RuleExceptionState = "ExceptionState"

// MaxReportBytes bounds the results of one report, JSON-encoded. The API
// server refuses a request body over 3 MiB and etcd stores objects of up to
// 1.5 MiB by default; an object with thousands of findings (12,000 scope
// entries that warn make a 6 MB report) must still get a report, and must
// not make the pass fail for every other object.
const MaxReportBytes = 256 << 10

// RuleReportTruncated is the rule of the one result (policy Source, result
// skip) a report over MaxReportBytes ends with: how many results it leaves
// out.
const RuleReportTruncated = "ReportTruncated"

// timestampBytes is what a result's timestamp adds once it is stamped.
const timestampBytes = len(`,"timestamp":{"seconds":10000000000,"nanos":0}`)

// severityRank orders results by what a reader must see first.
var severityRank = map[policyreportv1alpha2.PolicyResult]int{
	policyreportv1alpha2.StatusFail: 0, policyreportv1alpha2.StatusError: 1, policyreportv1alpha2.StatusWarn: 2,
	policyreportv1alpha2.StatusSkip: 3, policyreportv1alpha2.StatusPass: 4,
}

// Bounded is what one report holds.
type Bounded struct {
	// Results are the results listed: all of them when they fit into the
	// bound; otherwise the most severe that fit (fail, error, warn, pass,
	// each in decision order), then one RuleReportTruncated result.
	Results []policyreportv1alpha2.PolicyReportResult
	// Summary counts every result, listed or not (and the
	// RuleReportTruncated result as a skip).
	Summary policyreportv1alpha2.PolicyReportSummary
	// Omitted is the number of results not listed.
	Omitted int
}

// Bound fits the results of one object into maxBytes of encoded results
// (MaxReportBytes in reports). Deterministic: the same results give the
// same report.
func Bound(results []policyreportv1alpha2.PolicyReportResult, maxBytes int) Bounded {
	out := Bounded{Results: results, Summary: policyreportv1alpha2.Summarize(results)}
	if encodedSize(results) <= maxBytes {
		return out
	}
	ordered := slices.Clone(results)
	slices.SortStableFunc(ordered, func(a, b policyreportv1alpha2.PolicyReportResult) int {
		return severityRank[a.Result] - severityRank[b.Result]
	})
	// Room for the truncation result itself.
	budget := maxBytes - 1024
	kept := 0
	for _, r := range ordered {
		n := encodedSize([]policyreportv1alpha2.PolicyReportResult{r})
		if n > budget {
			break
		}
		budget -= n
		kept++
	}
	out.Omitted = len(ordered) - kept
	truncated := policyreportv1alpha2.PolicyReportResult{
		Source: Source, Policy: Source, Rule: RuleReportTruncated, Result: policyreportv1alpha2.StatusSkip,
		Message: fmt.Sprintf("%d more %s of this object are not listed: a report holds at most %d KiB of results, the most severe first; `gatehouse audit` lists them all",
			out.Omitted, policies.Plural(out.Omitted, "result"), maxBytes>>10),
		Properties: map[string]string{PropertyOmitted: strconv.Itoa(out.Omitted)},
	}
	if len(results) > 0 {
		truncated.Resources = results[0].Resources
	}
	out.Results = append(ordered[:kept:kept], truncated)
	out.Summary.Skip++
	return out
}

// encodedSize is the size of results in a report, once stamped.
func encodedSize(results []policyreportv1alpha2.PolicyReportResult) int {
	n := 2
	for _, r := range results {
		raw, _ := json.Marshal(r)
		n += len(raw) + timestampBytes + 1
	}
	return n
}

// ReportResults turns the decisions on one object into report results, in
// decision order: per finding one result (policy = webhook, rule = code,
// message as the webhook wrote it, the field path a property); a denying
// finding is "fail" when its webhook enforces and "warn" in Warn or Audit
// mode, where nothing was denied; a warning is "warn"; a finding an
// exception excuses (r.Excused) is "skip", as Kyverno reports a rule a
// PolicyException excuses, with its rule, message and field kept and the
// exception named in PropertyExcusedBy; a webhook that could not decide is
// "error"; a webhook that took the object and found nothing is one "pass".
// Messages carry names, keys and paths only, never values
// (docs/contracts.md), so the report does not either.
//
// An exception past its expiry excuses nothing, so its findings are
// "fail" or "warn" again, and the result names the expired exception in
// PropertyExceptionExpired (r.Expired), to say why a skip turned back
// (docs/audit.md, "Excused findings").
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
			key := FindingKey{Webhook: d.Webhook, Code: f.Code, Field: f.Field}
			if by := r.Excused[key]; by != "" {
				res.Result = policyreportv1alpha2.StatusSkip
				res.Properties[PropertyExcusedBy] = by
			} else if by := r.Expired[key]; by != "" {
				res.Properties[PropertyExceptionExpired] = by
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

// exceptionStateMessages say what each state means for the exception's
// owner; fixed texts, so that a report is rewritten only when a state
// changes.
var exceptionStateMessages = map[exception.State]string{
	exception.StateUsed: "excused findings in the last audit pass",
	exception.StateUnused: "in force, but excused nothing in the last audit pass: it matches no stored object, or none " +
		"with a finding it names; delete it, or correct its match",
	exception.StateExpired:  "past its expiry, it excuses nothing: the findings it excused deny again; delete it, or renew it if still needed",
	exception.StateDisabled: "an Exception while the configuration's exceptions.namespaced is off excuses nothing; ask for a ClusterException",
	exception.StateInvalid: "it breaks the rules the exception webhook holds exceptions to (a reason, a match that narrows " +
		"and can be evaluated, an expiry within exceptions.maxDuration), so it excuses nothing; correct it or delete it",
}

// ExceptionStateResult is the result on an exception's own report that
// says what the exception did in the pass (docs/audit.md, "Excused
// findings"): a pass when it excused findings, a warn when it excused
// nothing (unused, expired, disabled or invalid), so that an exception
// which matches nothing is reported, not only counted.
func ExceptionStateResult(obj Object, s exception.Status) policyreportv1alpha2.PolicyReportResult {
	result := policyreportv1alpha2.StatusWarn
	if s.State == exception.StateUsed {
		result = policyreportv1alpha2.StatusPass
	}
	return policyreportv1alpha2.PolicyReportResult{
		Source: Source, Policy: route.ExceptionWebhook, Rule: RuleExceptionState, Result: result,
		Message: exceptionStateMessages[s.State],
		Resources: []corev1.ObjectReference{{APIVersion: obj.APIVersion, Kind: obj.Kind,
			Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID}},
		Properties: map[string]string{PropertyExceptionState: string(s.State), PropertyExcusedCount: strconv.Itoa(s.Excused)},
	}
}

// ExceptionKey is the exception obj is, as exception.Status names it, when
// obj is an Exception or a ClusterException.
func ExceptionKey(obj Object) (string, bool) {
	gv, err := schema.ParseGroupVersion(obj.APIVersion)
	if err != nil || gv.Group != exceptionsv1alpha1.GroupName ||
		(obj.Kind != exceptionsv1alpha1.KindException && obj.Kind != exceptionsv1alpha1.KindClusterException) {
		return "", false
	}
	return exception.Entry{Namespace: obj.Namespace, Name: obj.Name}.Key(), true
}
