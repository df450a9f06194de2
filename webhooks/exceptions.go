package webhooks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Exceptions (docs/contracts.md §12) are applied after a member decides and
// before its mode (modes.go) shapes the answer:
//
//   - Only a validating member's denying findings are excused, and only
//     those exception.Excusable says may be (content findings: never
//     StateUnavailable, a limit or an object that does not decode, which are
//     about the review or the view). A mutating member that denies could not
//     make its change, and admitting without it is no excuse; the exception
//     webhook's own findings are never excused either, or an exception
//     could excuse its own refusal.
//   - A denial stands unless every denying finding is excused: the member
//     then decides DecisionExcused and admits, with one warning per excused
//     finding naming the exception and its expiry (never silently). Short of
//     that, the member still denies on the findings left, and the excused
//     ones are warnings beside the denial, so the requester sees what is
//     left to fix.
//   - An exception past its expiry excuses nothing: the finding denies, and
//     a warning says which exception expired.
//   - In Warn and Audit nothing is denied anyway; the excuse is still
//     recorded (the decision, the metric, the audit annotation, reports),
//     and the "would deny" warnings leave the excused findings out.
//
// The exceptions are matched once per review, the first time a member has
// a finding to excuse, at the time of that match.

// DecisionExcused is the decision of a member whose every denying finding
// an exception excused: it admits.
const DecisionExcused = "excused"

// AuditAnnotationExcused lists "CODE at field by <exception>" per excused
// finding (the API server prefixes it with the webhook's name).
const AuditAnnotationExcused = "excused"

// Excusal is one finding and the exception that excused it (or, in
// Decision.Expired, that would have, had it not expired).
type Excusal struct {
	Finding policies.Finding
	// Exception is the exception's key: "<namespace>/<name>" for an
	// Exception, "<name>" for a ClusterException.
	Exception string
	Expires   time.Time
}

// excuses is one review's matched exceptions, read at most once.
type excuses struct {
	read    bool
	matches exception.Matches
}

// excuse applies the exceptions to d, member m's decision on the shared
// review.
func (x *excuses) excuse(c *chain, m *member, d Decision, shared *sharedReview) Decision {
	if d.Outcome != DecisionDenied || !route.Excusable(m.Def) ||
		c.opts.Exceptions == nil || shared.review == nil || !anyExcusableDenial(d.Findings) {
		return d
	}
	if !x.read {
		x.read = true
		x.matches = c.opts.Exceptions.Exceptions().Match(subjectOf(shared.review), c.opts.Clock())
	}
	if x.matches.Empty() {
		return d
	}
	var kept []policies.Finding
	denies := false
	for _, f := range d.Findings {
		if f.Severity != policies.Deny {
			kept = append(kept, f)
			continue
		}
		if name, ok := x.matches.Excuse(d.Webhook, f); ok {
			expires, _ := x.matches.Expires(name)
			d.Excused = append(d.Excused, Excusal{Finding: f, Exception: name, Expires: expires})
			continue
		}
		if name, ok := x.matches.Expired(d.Webhook, f); ok {
			expires, _ := x.matches.Expires(name)
			d.Expired = append(d.Expired, Excusal{Finding: f, Exception: name, Expires: expires})
		}
		kept = append(kept, f)
		denies = true
	}
	if len(d.Excused) == 0 && len(d.Expired) == 0 {
		return d
	}
	resp := respond(d.Webhook, shared.review, kept)
	var notes, excused []string
	for _, e := range d.Excused {
		notes = append(notes, fmt.Sprintf("gatehouse %s: %s at %s excused by exception %s until %s",
			d.Webhook, e.Finding.Code, e.Finding.Field, e.Exception, e.Expires.UTC().Format(time.RFC3339)))
		excused = append(excused, fmt.Sprintf("%s at %s by %s", e.Finding.Code, e.Finding.Field, e.Exception))
	}
	for _, e := range d.Expired {
		notes = append(notes, fmt.Sprintf("gatehouse %s: %s at %s: exception %s expired at %s and excuses nothing",
			d.Webhook, e.Finding.Code, e.Finding.Field, e.Exception, e.Expires.UTC().Format(time.RFC3339)))
	}
	resp.Warnings = append(notes, resp.Warnings...)
	// The codes stay those the member found: the excused ones too.
	resp.AuditAnnotations = map[string]string{AuditAnnotationCodes: strings.Join(findingCodes(d.Findings), ",")}
	if len(excused) > 0 {
		resp.AuditAnnotations[AuditAnnotationExcused] = capped(strings.Join(excused, "; "))
	}
	d.Response = resp
	if !denies {
		d.Outcome = DecisionExcused
	}
	return d
}

// excusedFinding reports whether d's finding f was excused.
func (d *Decision) excusedFinding(f policies.Finding) bool {
	for _, e := range d.Excused {
		if e.Finding.Code == f.Code && e.Finding.Field == f.Field && e.Finding.Evidence == f.Evidence {
			return true
		}
	}
	return false
}

// anyExcusableDenial reports whether a finding of findings denies and may
// be excused: otherwise the exceptions need not be read.
func anyExcusableDenial(findings []policies.Finding) bool {
	for _, f := range findings {
		if f.Severity == policies.Deny && exception.Excusable(f) {
			return true
		}
	}
	return false
}

// subjectOf is the reviewed object as an exception's match reads it: the
// object to be stored (the stored one on DELETE). A Namespace is
// cluster-scoped, though the API server sends its UPDATEs with the
// namespace set to its own name: it is in no namespace here, so that an
// Exception, which excuses only objects in its namespace, never reaches
// the Namespace that holds it.
func subjectOf(r *adapters.Review) exception.Subject {
	obj := r.Object
	if obj == nil {
		obj = r.OldObject
	}
	s := exception.Subject{Namespace: r.Namespace, Kind: schema.GroupKind{Group: r.Kind.Group, Kind: r.Kind.Kind}, Name: r.Name}
	if s.Kind == (schema.GroupKind{Kind: "Namespace"}) {
		s.Namespace = ""
	}
	meta, _ := obj["metadata"].(map[string]any)
	if s.Name == "" {
		s.Name, _ = meta["name"].(string)
	}
	if labels, ok := meta["labels"].(map[string]any); ok {
		s.Labels = make(map[string]string, len(labels))
		for k, v := range labels {
			if str, ok := v.(string); ok {
				s.Labels[k] = str
			}
		}
	}
	return s
}

// excusedBy lists the distinct exceptions of excusals, in order.
func excusedBy(excusals []Excusal) []string {
	var out []string
	for _, e := range excusals {
		if !slices.Contains(out, e.Exception) {
			out = append(out, e.Exception)
		}
	}
	return out
}
