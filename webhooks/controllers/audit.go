package controllers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// Audit is the background audit (docs/audit.md): on the leader of the audit
// role only, every Interval, it reviews every stored object of every
// intercepted resource through the review chain (audit.Scanner) and writes
// the results as one PolicyReport per namespaced object and one
// ClusterPolicyReport per cluster-scoped object, named by the object's UID
// and owned by it, as Kyverno writes them today (so Policy Reporter and
// kubectl show one report per resource, and the garbage collector removes a
// report with its object). Only objects with something to report get one:
// a clean object costs no write. A report is bounded in size
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
	Dynamic  dynamic.Interface
	Interval time.Duration
	// Synced reports whether the caches the webhooks read have synced; a
	// pass waits for it, since a verdict against a partial view is wrong
	// (nil: nothing to wait for).
	Synced func() bool
	// Now is the clock of the results' timestamps (time.Now when nil).
	Now func() time.Time
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
	Reports int // objects with a report after the pass
	Written int // reports created or changed
	Deleted int // reports removed (object gone, or nothing left to report)
	// Truncated are the reports written or kept that list only part of
	// their results (audit.MaxReportBytes).
	Truncated int
	// Skipped are the writes left out because the report's namespace is
	// Terminating or gone; Failed the writes and deletions the API server
	// refused for another reason. Neither stops the pass.
	Skipped, Failed int
	// Forbidden are the resources gatehouse may not list: not audited.
	Forbidden []audit.Target
}

// reportKey names a report: namespace ("" for a ClusterPolicyReport) and name.
type reportKey struct{ namespace, name string }

// existingReport is what a pass keeps of a report it found: the hash of its
// content and the group and kind of its object.
type existingReport struct{ hash, group, kind string }

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
	existing, reportsServed, err := a.existingReports(ctx)
	if err != nil {
		return failed(err)
	}
	targets, err := a.Scanner.Targets()
	if err != nil {
		return failed(err)
	}
	tally := audit.Tally{}
	seen := map[reportKey]bool{}
	scanned, err := a.Scanner.Scan(ctx, targets, func(r audit.Result) error {
		tally.Add(r)
		results := audit.ReportResults(r)
		// An object without a UID (none the API server lists) could not
		// name its report.
		if !audit.Actionable(results) || !reportsServed || r.Object.UID == "" {
			return nil
		}
		key := reportKey{r.Object.Namespace, string(r.Object.UID)}
		seen[key] = true
		report := newReport(r.Object, audit.Bound(results, audit.MaxReportBytes))
		if report.omitted > 0 {
			stats.Truncated++
		}
		if existing[key].hash == report.hash {
			return nil
		}
		err := a.apply(ctx, report)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		a.count(ctx, &stats, r.Object, err, "writing")
		if err == nil {
			stats.Written++
		}
		return nil
	})
	if err != nil {
		return failed(err)
	}
	stats.Objects, stats.Forbidden = scanned.Objects, scanned.Forbidden
	stats.Reports = len(seen)
	forbidden := map[schema.GroupKind]bool{}
	for _, t := range scanned.Forbidden {
		forbidden[schema.GroupKind{Group: t.GVR.Group, Kind: t.Kind}] = true
	}
	for key, report := range existing {
		// A report of an object the pass could not list stays as it is.
		if seen[key] || forbidden[schema.GroupKind{Group: report.group, Kind: report.kind}] {
			continue
		}
		gvr := policyReports
		if key.namespace == "" {
			gvr = clusterPolicyReports
		}
		err := a.Dynamic.Resource(gvr).Namespace(key.namespace).Delete(ctx, key.name, metav1.DeleteOptions{})
		switch {
		case err != nil && ctx.Err() != nil:
			return failed(ctx.Err())
		case apierrors.IsNotFound(err):
			stats.Deleted++ // gone already (the garbage collector was first)
		default:
			a.count(ctx, &stats, audit.Object{Kind: report.kind, Namespace: key.namespace, Name: key.name}, err, "deleting the report of")
			if err == nil {
				stats.Deleted++
			}
		}
	}
	tally.Publish(stats.Objects, time.Since(start).Seconds())
	return stats, nil
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

// existingReports lists gatehouse's reports (by label, as the objects are
// listed: byte-bounded pages, one report decoded at a time) with the hash of
// their content. served is false when the cluster has no PolicyReport CRDs:
// the pass then keeps its findings in the metrics only.
func (a *Audit) existingReports(ctx context.Context) (map[reportKey]existingReport, bool, error) {
	out := map[reportKey]existingReport{}
	for _, gvr := range []schema.GroupVersionResource{policyReports, clusterPolicyReports} {
		err := a.Pager.Each(ctx, audit.List{GVR: gvr, LabelSelector: ReportManagedByLabel + "=" + ReportManagedBy}, func(item *unstructured.Unstructured) error {
			apiVersion, _, _ := unstructured.NestedString(item.Object, "scope", "apiVersion")
			kind, _, _ := unstructured.NestedString(item.Object, "scope", "kind")
			out[reportKey{item.GetNamespace(), item.GetName()}] = existingReport{hash: storedContentHash(item),
				group: schema.FromAPIVersionAndKind(apiVersion, kind).Group, kind: kind}
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
