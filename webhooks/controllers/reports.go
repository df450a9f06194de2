package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// AuditFieldManager owns the reports the background audit writes.
const AuditFieldManager = "gatehouse-audit"

// The label of every report gatehouse writes, which the audit lists its
// reports by.
const (
	ReportManagedByLabel = "app.kubernetes.io/managed-by"
	ReportManagedBy      = "gatehouse"
)

var (
	policyReports        = schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourcePolicyReports}
	clusterPolicyReports = schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourceClusterPolicyReports}
)

// report is the report of one object, as the audit writes it.
type report struct {
	obj     audit.Object
	content reportContent
	// hash is content's: equal to the hash of the stored report's content
	// when nobody changed it.
	hash    string
	omitted int
}

// reportContent is what gatehouse writes into a report and compares with
// what is stored: a report whose content differs is written again,
// whoever changed it and whatever annotation it kept.
type reportContent struct {
	Scope   *corev1.ObjectReference                   `json:"scope"`
	Owners  []metav1.OwnerReference                   `json:"owners"`
	Summary policyreportv1alpha2.PolicyReportSummary  `json:"summary"`
	Results []policyreportv1alpha2.PolicyReportResult `json:"results"`
}

// newReport is the report of obj with the results b.
func newReport(obj audit.Object, b audit.Bounded) report {
	c := reportContent{
		Scope: &corev1.ObjectReference{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID},
		// The report goes with its object where a garbage collector runs.
		Owners:  []metav1.OwnerReference{{APIVersion: obj.APIVersion, Kind: obj.Kind, Name: obj.Name, UID: obj.UID}},
		Summary: b.Summary,
		Results: b.Results,
	}
	return report{obj: obj, content: c, hash: c.hash(), omitted: b.Omitted}
}

// hash fingerprints the content, less the results' timestamps (when the
// results last changed, not what they say).
func (c reportContent) hash() string {
	c.Results = append([]policyreportv1alpha2.PolicyReportResult(nil), c.Results...)
	for i := range c.Results {
		c.Results[i].Timestamp = metav1.Timestamp{}
	}
	h := fnv.New64a()
	_ = json.NewEncoder(h).Encode(c)
	return strconv.FormatUint(h.Sum64(), 36)
}

// storedContentHash is the hash of a stored report's content, read from the
// report itself ("" when it does not decode as a report: it is then
// written again).
func storedContentHash(item *unstructured.Unstructured) string {
	var stored policyreportv1alpha2.PolicyReport // a ClusterPolicyReport has the same fields
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &stored); err != nil {
		return ""
	}
	return reportContent{Scope: stored.Scope, Owners: stored.OwnerReferences, Summary: stored.Summary, Results: stored.Results}.hash()
}

// apply writes r by server-side apply.
func (a *Audit) apply(ctx context.Context, r report) error {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	gvr, u, err := r.object(now())
	if err != nil {
		return err
	}
	_, err = a.Dynamic.Resource(gvr).Namespace(r.obj.Namespace).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: AuditFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("writing the report of %s %s/%s: %w", r.obj.Kind, r.obj.Namespace, r.obj.Name, err)
	}
	return nil
}

// object is the report as written at now: a PolicyReport in the object's
// namespace, or a ClusterPolicyReport for a cluster-scoped object, named by
// the object's UID, its results stamped now.
func (r report) object(now time.Time) (schema.GroupVersionResource, *unstructured.Unstructured, error) {
	stamp := metav1.Timestamp{Seconds: now.Unix()}
	results := append([]policyreportv1alpha2.PolicyReportResult(nil), r.content.Results...)
	for i := range results {
		results[i].Timestamp = stamp
	}
	meta := metav1.ObjectMeta{
		Name:            string(r.obj.UID),
		Namespace:       r.obj.Namespace,
		Labels:          map[string]string{ReportManagedByLabel: ReportManagedBy},
		OwnerReferences: r.content.Owners,
	}
	var obj any
	gvr := policyReports
	if r.obj.Namespace == "" {
		gvr = clusterPolicyReports
		obj = policyreportv1alpha2.ClusterPolicyReport{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindClusterPolicyReport},
			ObjectMeta: meta, Scope: r.content.Scope, Summary: r.content.Summary, Results: results,
		}
	} else {
		obj = policyreportv1alpha2.PolicyReport{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindPolicyReport},
			ObjectMeta: meta, Scope: r.content.Scope, Summary: r.content.Summary, Results: results,
		}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return gvr, nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return gvr, nil, err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return gvr, u, nil
}
