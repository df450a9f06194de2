package controllers

import (
	"context"
	"errors"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Audit is the background audit (docs/audit.md): on the leader of the audit
// role only, every Interval, it reviews every stored object of every
// intercepted resource through the review chain (audit.Scanner) and writes
// the results, in each report API of APIs, as one report per namespaced
// object (PolicyReport, Report) and one per cluster-scoped object
// (ClusterPolicyReport, ClusterReport), named by the object's UID and owned
// by it, as Kyverno writes them (so Policy Reporter and kubectl show one
// report per resource, and the garbage collector removes a report with its
// object). Every API gets the same content (reportapis.go serializes it).
// Only objects with something to report get one: a clean object costs no
// write. A report is bounded in size
// (audit.MaxReportBytes), written by server-side apply under
// AuditFieldManager, and only when its content differs from what is stored
// (whoever changed it), so a pass over an unchanged cluster writes nothing;
// a report whose object is gone or clean is deleted at the end of a
// complete pass (a cluster without a garbage collector keeps none either).
// A report that cannot be written (refused, or its namespace Terminating)
// is counted and logged, and the pass goes on. The findings also become
// the gatehouse_audit_findings gauge.
type Audit struct {
	Scanner *audit.Scanner
	// Pager lists the existing reports, as the scanner lists objects.
	Pager *audit.Pager
	// Dynamic writes and deletes the reports.
	Dynamic dynamic.Interface
	// APIs are the report APIs written (audit.reports.apis; nil: the
	// configuration's default). An API whose CRDs the cluster does not
	// serve is left out of the pass (PassStats.Unserved).
	APIs     []configv1alpha1.ReportAPI
	Interval time.Duration
	// Synced reports whether the caches the webhooks read have synced; a
	// pass waits for it, since a verdict against a partial view is wrong
	// (nil: nothing to wait for).
	Synced func() bool
	// Now is the clock of the results' timestamps (time.Now when nil).
	Now func() time.Time
	// Exceptions are the exceptions the webhooks read; a pass says what
	// each did (PassStats.Exceptions). Nil: none are read.
	Exceptions route.ExceptionReader
}

// NeedLeaderElection: one replica audits, under the manager's Lease.
func (a *Audit) NeedLeaderElection() bool { return true }

// Start runs a pass at once, then every Interval, until ctx ends. A failed
// pass is logged, counted and retried at the next interval.
func (a *Audit) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("audit")
	ctx = logf.IntoContext(ctx, log)
	audit.Started(a.Interval)
	for {
		start := time.Now()
		stats, err := a.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "audit pass failed")
		} else if err == nil {
			for _, t := range stats.Forbidden {
				log.Info("not allowed to list a resource: its objects are not audited", "resource", t.GVR.GroupResource().String())
			}
			for _, api := range stats.Unserved {
				log.Info("the cluster does not serve a configured report API (its CRDs are not installed): no report of it is written", "api", string(api))
			}
			for _, e := range stats.Exceptions {
				if e.State != exception.StateUsed {
					// An exception that excuses nothing is one to delete;
					// one that expired, one whose findings came back.
					log.Info("exception excused nothing in the pass", "exception", e.Name, "state", string(e.State), "expires", e.Expires)
				}
			}
			log.Info("audit pass done", "objects", stats.Objects, "reports", stats.Reports, "written", stats.Written,
				"deleted", stats.Deleted, "truncated", stats.Truncated, "skipped", stats.Skipped, "failed", stats.Failed,
				"seconds", time.Since(start).Seconds())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(a.Interval):
		}
	}
}

// PassStats says what one pass did.
type PassStats struct {
	Objects int // objects reviewed
	Reports int // objects with a report after the pass (in each API served)
	Written int // reports created or changed, counted in each API
	Deleted int // reports removed (object gone, or nothing left to report), in each API
	// Truncated are the objects whose reports, written or kept, list only
	// part of their results (audit.MaxReportBytes).
	Truncated int
	// Skipped are the writes left out because the report's namespace is
	// Terminating or gone; Failed the writes and deletions the API server
	// refused for another reason. Neither stops the pass.
	Skipped, Failed int
	// Forbidden are the resources gatehouse may not list: not audited.
	Forbidden []audit.Target
	// Unserved are the configured report APIs the cluster has no CRDs
	// for: nothing is written in them.
	Unserved []configv1alpha1.ReportAPI
	// Exceptions say what each exception did in the pass: how many
	// findings it excused, or that it expired or excused nothing.
	Exceptions []exception.Status
}

// reportKey names a report: its API, namespace ("" for a cluster-scoped
// report) and name.
type reportKey struct {
	api             configv1alpha1.ReportAPI
	namespace, name string
}

// existingReport is what a pass keeps of a report it found: the hash of its
// content, the group and kind of its object, and its resource.
type existingReport struct {
	hash, group, kind string
	resource          schema.GroupVersionResource
}

// Pass runs one audit pass.
func (a *Audit) Pass(ctx context.Context) (PassStats, error) {
	var stats PassStats
	for a.Synced != nil && !a.Synced() {
		select {
		case <-ctx.Done():
			return stats, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	start := time.Now()
	failed := func(err error) (PassStats, error) {
		if ctx.Err() == nil { // a pass cut short by shutdown did not fail
			audit.PassFailed()
		}
		return stats, err
	}
	apis, err := reportAPIsOf(a.APIs)
	if err != nil {
		return failed(err)
	}
	existing, served, err := a.existingReports(ctx, apis)
	if err != nil {
		return failed(err)
	}
	for _, api := range apis {
		if !slices.ContainsFunc(served, func(s reportAPI) bool { return s.name == api.name }) {
			stats.Unserved = append(stats.Unserved, api.name)
		}
	}
	targets, err := a.Scanner.Targets()
	if err != nil {
		return failed(err)
	}
	tally := audit.Tally{}
	seen := map[reportKey]bool{}
	excusedBy := map[string]int{}
	// write writes the report of r with results, where it differs.
	write := func(r audit.Result, results []policyreportv1alpha2.PolicyReportResult) error {
		// An object without a UID (none the API server lists) could not
		// name its report.
		if !audit.Actionable(results) || len(served) == 0 || r.Object.UID == "" {
			return nil
		}
		stats.Reports++
		report := newReport(r.Object, audit.Bound(results, audit.MaxReportBytes))
		if report.omitted > 0 {
			stats.Truncated++
		}
		for _, api := range served {
			key := reportKey{api.name, r.Object.Namespace, string(r.Object.UID)}
			seen[key] = true
			if existing[key].hash == report.hash {
				continue
			}
			err := a.apply(ctx, api, report)
			if err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			a.count(ctx, &stats, r.Object, err, "writing the "+string(api.name)+" report of")
			if err == nil {
				stats.Written++
			}
		}
		return nil
	}
	// The exceptions' own reports wait for the end of the pass, which
	// tells what each of them did.
	var exceptionResults []audit.Result
	scanned, err := a.Scanner.Scan(ctx, targets, func(r audit.Result) error {
		tally.Add(r)
		r.CountExcused(excusedBy)
		if _, ok := audit.ExceptionKey(r.Object); ok && a.Exceptions != nil {
			exceptionResults = append(exceptionResults, r)
			return nil
		}
		return write(r, audit.ReportResults(r))
	})
	if err != nil {
		return failed(err)
	}
	stats.Objects, stats.Forbidden = scanned.Objects, scanned.Forbidden
	if a.Exceptions != nil {
		stats.Exceptions = a.Exceptions.Exceptions().Statuses(a.now(), excusedBy)
		audit.PublishExceptions(stats.Exceptions)
		if err := writeExceptionReports(exceptionResults, stats.Exceptions, write); err != nil {
			return failed(err)
		}
	}
	forbidden := map[schema.GroupKind]bool{}
	for _, t := range scanned.Forbidden {
		forbidden[schema.GroupKind{Group: t.GVR.Group, Kind: t.Kind}] = true
	}
	for key, report := range existing {
		// A report of an object the pass could not list stays as it is.
		if seen[key] || forbidden[schema.GroupKind{Group: report.group, Kind: report.kind}] {
			continue
		}
		err := a.Dynamic.Resource(report.resource).Namespace(key.namespace).Delete(ctx, key.name, metav1.DeleteOptions{})
		switch {
		case err != nil && ctx.Err() != nil:
			return failed(ctx.Err())
		case apierrors.IsNotFound(err):
			stats.Deleted++ // gone already (the garbage collector was first)
		default:
			a.count(ctx, &stats, audit.Object{Kind: report.kind, Namespace: key.namespace, Name: key.name}, err, "deleting the "+string(key.api)+" report of")
			if err == nil {
				stats.Deleted++
			}
		}
	}
	tally.Publish(stats.Objects, time.Since(start).Seconds())
	return stats, nil
}

// writeExceptionReports writes the report of each exception of results
// with what the pass says it did (statuses), through write.
func writeExceptionReports(results []audit.Result, statuses []exception.Status,
	write func(audit.Result, []policyreportv1alpha2.PolicyReportResult) error) error {
	states := make(map[string]exception.Status, len(statuses))
	for _, s := range statuses {
		states[s.Name] = s
	}
	for _, r := range results {
		report := audit.ReportResults(r)
		key, _ := audit.ExceptionKey(r.Object)
		if s, ok := states[key]; ok {
			report = append(report, audit.ExceptionStateResult(r.Object, s))
		}
		if err := write(r, report); err != nil {
			return err
		}
	}
	return nil
}

// count records the outcome of one report write or deletion: a refusal is
// logged with the object's names and the API server's reason (never a
// message, which could quote a value) and counted, and the pass goes on.
func (a *Audit) count(ctx context.Context, stats *PassStats, obj audit.Object, err error, what string) {
	outcome := writeOutcome(err)
	audit.ReportWrite(outcome)
	if err == nil {
		return
	}
	log := logf.FromContext(ctx)
	keys := []any{"kind", obj.Kind, "namespace", obj.Namespace, "name", obj.Name,
		"reason", string(apierrors.ReasonForError(err)), "code", apiStatusCode(err)}
	if outcome == audit.WriteSkipped {
		stats.Skipped++
		log.V(1).Info(what+" an object: its namespace is Terminating or gone; skipped", keys...)
		return
	}
	stats.Failed++
	log.Info(what+" an object was refused; the pass goes on (gatehouse_audit_report_writes_total{result=\"failed\"})", keys...)
}

// writeOutcome classifies the result of a report write: a namespace that is
// going away (Terminating, or gone) refuses every create in it, which is no
// fault of the audit's.
func writeOutcome(err error) string {
	switch {
	case err == nil:
		return audit.WriteDone
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) || apierrors.IsNotFound(err):
		return audit.WriteSkipped
	default:
		return audit.WriteFailed
	}
}

func apiStatusCode(err error) int32 {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Code
	}
	return 0
}

// existingReports lists gatehouse's reports in each of apis (by label, as
// the objects are listed: byte-bounded pages, one report decoded at a time)
// with the hash of their content. served are the APIs of apis whose CRDs
// the cluster has; with none, the pass keeps its findings in the metrics
// only.
func (a *Audit) existingReports(ctx context.Context, apis []reportAPI) (existing map[reportKey]existingReport, served []reportAPI, err error) {
	existing = map[reportKey]existingReport{}
	for _, api := range apis {
		found, ok, err := a.existingReportsOf(ctx, api)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		served = append(served, api)
		for k, r := range found {
			existing[k] = r
		}
	}
	return existing, served, nil
}

// existingReportsOf is existingReports for one API; served is false when
// the cluster does not serve both of its resources.
func (a *Audit) existingReportsOf(ctx context.Context, api reportAPI) (map[reportKey]existingReport, bool, error) {
	out := map[reportKey]existingReport{}
	for _, gvr := range []schema.GroupVersionResource{api.namespaced, api.cluster} {
		err := a.Pager.Each(ctx, audit.List{GVR: gvr, LabelSelector: ReportManagedByLabel + "=" + ReportManagedBy}, func(item *unstructured.Unstructured) error {
			apiVersion, _, _ := unstructured.NestedString(item.Object, "scope", "apiVersion")
			kind, _, _ := unstructured.NestedString(item.Object, "scope", "kind")
			out[reportKey{api.name, item.GetNamespace(), item.GetName()}] = existingReport{hash: api.storedContentHash(item),
				group: schema.FromAPIVersionAndKind(apiVersion, kind).Group, kind: kind, resource: gvr}
			return nil
		})
		var listErr *audit.ListError
		if errors.As(err, &listErr) && listErr.FirstPage && apierrors.IsNotFound(listErr.Err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}
