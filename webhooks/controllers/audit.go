package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// AuditFieldManager owns the reports the background audit writes.
const AuditFieldManager = "gatehouse-audit"

// The labels and annotation of every report gatehouse writes.
const (
	ReportManagedByLabel = "app.kubernetes.io/managed-by"
	ReportManagedBy      = "gatehouse"
	// ReportResultsHash holds audit.Hash of the report's results: a report
	// whose hash is unchanged is not written again.
	ReportResultsHash = "gatehouse.dev/results-hash"
)

var (
	policyReports        = schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourcePolicyReports}
	clusterPolicyReports = schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourceClusterPolicyReports}
)

// Audit is the background audit (docs/audit.md): on the leader of the audit
// role only (serve --role=audit, never a serving replica), every
// Interval, it reviews every stored object of every intercepted resource
// through the review chain (audit.Scanner) and writes the results as one
// PolicyReport per namespaced object and one ClusterPolicyReport per
// cluster-scoped object, named by the object's UID and owned by it, as
// Kyverno writes them today (so Policy Reporter and kubectl show one report
// per resource, and the garbage collector removes a report with its object).
// Only objects with something to report get one: a clean object costs no
// write. Each report is written by server-side apply under
// AuditFieldManager, and only when its results changed, so a pass over an
// unchanged cluster writes nothing; a report whose object is gone or clean
// is deleted at the end of a complete pass (a cluster without a garbage
// collector keeps none either). The findings also become the
// gatehouse_audit_findings gauge.
type Audit struct {
	Scanner  *audit.Scanner
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
// pass is logged and retried at the next interval.
func (a *Audit) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("audit")
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
				"deleted", stats.Deleted, "seconds", time.Since(start).Seconds())
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
	// Forbidden are the resources gatehouse may not list: not audited.
	Forbidden []audit.Target
}

// reportKey names a report: namespace ("" for a ClusterPolicyReport) and name.
type reportKey struct{ namespace, name string }

// existingReport is what a pass keeps of a report it found: its results
// hash and the group and kind of its object.
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
	existing, reportsServed, err := a.existingReports(ctx)
	if err != nil {
		audit.PassFailed()
		return stats, err
	}
	targets, err := a.Scanner.Targets()
	if err != nil {
		audit.PassFailed()
		return stats, err
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
		hash := audit.Hash(results)
		if existing[key].hash == hash {
			return nil
		}
		stats.Written++
		return a.apply(ctx, r.Object, results, hash)
	})
	if err != nil {
		audit.PassFailed()
		return stats, err
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
		if err != nil && !apierrors.IsNotFound(err) {
			audit.PassFailed()
			return stats, fmt.Errorf("deleting report %s/%s: %w", key.namespace, key.name, err)
		}
		stats.Deleted++
	}
	tally.Publish(stats.Objects, time.Since(start).Seconds())
	return stats, nil
}

// existingReports lists gatehouse's reports (by label, page by page) with
// their results hash. served is false when the cluster has no PolicyReport
// CRDs: the pass then keeps its findings in the metrics only.
func (a *Audit) existingReports(ctx context.Context) (map[reportKey]existingReport, bool, error) {
	out := map[reportKey]existingReport{}
	for _, gvr := range []schema.GroupVersionResource{policyReports, clusterPolicyReports} {
		cont := ""
		for {
			list, err := a.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{
				LabelSelector: ReportManagedByLabel + "=" + ReportManagedBy, Limit: 500, Continue: cont})
			if apierrors.IsNotFound(err) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, fmt.Errorf("listing %s: %w", gvr.Resource, err)
			}
			for _, item := range list.Items {
				apiVersion, _, _ := unstructured.NestedString(item.Object, "scope", "apiVersion")
				kind, _, _ := unstructured.NestedString(item.Object, "scope", "kind")
				out[reportKey{item.GetNamespace(), item.GetName()}] = existingReport{hash: item.GetAnnotations()[ReportResultsHash],
					group: schema.FromAPIVersionAndKind(apiVersion, kind).Group, kind: kind}
			}
			if cont = list.GetContinue(); cont == "" {
				break
			}
		}
	}
	return out, true, nil
}

// apply writes the report of obj by server-side apply.
func (a *Audit) apply(ctx context.Context, obj audit.Object, results []policyreportv1alpha2.PolicyReportResult, hash string) error {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	stamp := metav1.Timestamp{Seconds: now().Unix()}
	for i := range results {
		results[i].Timestamp = stamp
	}
	meta := metav1.ObjectMeta{
		Name:        string(obj.UID),
		Namespace:   obj.Namespace,
		Labels:      map[string]string{ReportManagedByLabel: ReportManagedBy},
		Annotations: map[string]string{ReportResultsHash: hash},
		// The report goes with its object where a garbage collector runs.
		OwnerReferences: []metav1.OwnerReference{{APIVersion: obj.APIVersion, Kind: obj.Kind, Name: obj.Name, UID: obj.UID}},
	}
	scope := &corev1.ObjectReference{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID}
	var report any
	gvr := policyReports
	if obj.Namespace == "" {
		gvr = clusterPolicyReports
		report = policyreportv1alpha2.ClusterPolicyReport{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindClusterPolicyReport},
			ObjectMeta: meta, Scope: scope, Summary: policyreportv1alpha2.Summarize(results), Results: results,
		}
	} else {
		report = policyreportv1alpha2.PolicyReport{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindPolicyReport},
			ObjectMeta: meta, Scope: scope, Summary: policyreportv1alpha2.Summarize(results), Results: results,
		}
	}
	data, err := json.Marshal(report)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	_, err = a.Dynamic.Resource(gvr).Namespace(obj.Namespace).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: AuditFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("writing the report of %s %s/%s: %w", obj.Kind, obj.Namespace, obj.Name, err)
	}
	return nil
}
