package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
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

// report is the report of one object, as the audit writes it in every
// report API: one content, serialized by each API (reportapis.go).
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
// whoever changed it and whatever annotation it kept. It is held in the
// PolicyReport API's terms; the OpenReports serializer maps it field by
// field, so the hash of a stored report is the same in either API.
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

// storedContentHash is the hash of a stored report of api's content, read
// from the report itself ("" when it does not decode as a report gatehouse
// writes: it is then written again).
func (api reportAPI) storedContentHash(item *unstructured.Unstructured) string {
	c, ok := api.decode(item)
	if !ok {
		return ""
	}
	return c.hash()
}

// now is the audit's clock.
func (a *Audit) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// apply writes r as a report of api by server-side apply.
func (a *Audit) apply(ctx context.Context, api reportAPI, r report) error {
	gvr, u, err := r.object(api, a.now())
	if err != nil {
		return err
	}
	_, err = a.Dynamic.Resource(gvr).Namespace(r.obj.Namespace).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: AuditFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("writing the %s report of %s %s/%s: %w", api.name, r.obj.Kind, r.obj.Namespace, r.obj.Name, err)
	}
	return nil
}

// object is the report as api writes it at now: in the object's namespace,
// or of the API's cluster-scoped kind for a cluster-scoped object, named by
// the object's UID, labelled as gatehouse's, its results stamped now.
func (r report) object(api reportAPI, now time.Time) (schema.GroupVersionResource, *unstructured.Unstructured, error) {
	stamp := metav1.Timestamp{Seconds: now.Unix()}
	c := r.content
	c.Results = append([]policyreportv1alpha2.PolicyReportResult(nil), c.Results...)
	for i := range c.Results {
		c.Results[i].Timestamp = stamp
	}
	meta := metav1.ObjectMeta{
		Name:            string(r.obj.UID),
		Namespace:       r.obj.Namespace,
		Labels:          map[string]string{ReportManagedByLabel: ReportManagedBy},
		OwnerReferences: c.Owners,
	}
	gvr := api.resource(r.obj.Namespace)
	data, err := json.Marshal(api.encode(meta, c))
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

// reportAPIsOf are the report APIs named, in the configuration's order;
// none named is the configuration's default. A name gatehouse does not
// write is an error (the configuration refuses it already).
func reportAPIsOf(names []configv1alpha1.ReportAPI) ([]reportAPI, error) {
	if len(names) == 0 {
		names = configv1alpha1.Default().Audit.Reports.APIs
	}
	out := make([]reportAPI, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(knownReportAPIs, func(api reportAPI) bool { return api.name == n })
		if i < 0 {
			return nil, fmt.Errorf("report API %q: gatehouse writes %v", n, configv1alpha1.ReportAPIs())
		}
		out = append(out, knownReportAPIs[i])
	}
	return out, nil
}
