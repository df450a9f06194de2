package controllers

import (
	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// reportAPI is one report API the audit writes: its two resources and the
// serializer between reportContent and its objects. Everything else (which
// objects get a report, its name, owner, label, bound and when it is
// written or deleted) is the audit's, the same for every API.
type reportAPI struct {
	name configv1alpha1.ReportAPI
	// namespaced holds the reports of namespaced objects, cluster those
	// of cluster-scoped objects.
	namespaced, cluster schema.GroupVersionResource
	// encode is the report of content under meta (namespaced when meta
	// has a namespace), as its JSON is applied.
	encode func(meta metav1.ObjectMeta, c reportContent) any
	// decode is the content of a stored report; false when it is not one
	// gatehouse writes.
	decode func(item *unstructured.Unstructured) (reportContent, bool)
}

// resource holds the report of an object in namespace ("" when
// cluster-scoped).
func (api reportAPI) resource(namespace string) schema.GroupVersionResource {
	if namespace == "" {
		return api.cluster
	}
	return api.namespaced
}

// knownReportAPIs are the report APIs gatehouse writes, one for each of
// configv1alpha1.ReportAPIs.
var knownReportAPIs = []reportAPI{policyReportAPI, openReportsAPI}

// policyReportAPI writes wgpolicyk8s.io/v1alpha2 PolicyReports and
// ClusterPolicyReports, whose fields reportContent holds as they are.
var policyReportAPI = reportAPI{
	name:       configv1alpha1.ReportAPIPolicyReport,
	namespaced: schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourcePolicyReports},
	cluster:    schema.GroupVersionResource{Group: policyreportv1alpha2.Group, Version: policyreportv1alpha2.Version, Resource: policyreportv1alpha2.ResourceClusterPolicyReports},
	encode: func(meta metav1.ObjectMeta, c reportContent) any {
		if meta.Namespace == "" {
			return policyreportv1alpha2.ClusterPolicyReport{
				TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindClusterPolicyReport},
				ObjectMeta: meta, Scope: c.Scope, Summary: c.Summary, Results: c.Results,
			}
		}
		return policyreportv1alpha2.PolicyReport{
			TypeMeta:   metav1.TypeMeta{APIVersion: policyreportv1alpha2.APIVersion, Kind: policyreportv1alpha2.KindPolicyReport},
			ObjectMeta: meta, Scope: c.Scope, Summary: c.Summary, Results: c.Results,
		}
	},
	decode: func(item *unstructured.Unstructured) (reportContent, bool) {
		var stored policyreportv1alpha2.PolicyReport // a ClusterPolicyReport has the same fields
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &stored); err != nil {
			return reportContent{}, false
		}
		return reportContent{Scope: stored.Scope, Owners: stored.OwnerReferences, Summary: stored.Summary, Results: stored.Results}, true
	},
}

// The OpenReports kinds and resources (the module publishes the group and
// version only).
const (
	openReportsKindReport        = "Report"
	openReportsKindClusterReport = "ClusterReport"
)

// openReportsAPI writes openreports.io/v1alpha1 Reports and ClusterReports
// with the published types: the same scope, owner, summary and results, each
// result field for field (message is the wire name of Description, resources
// of Subjects, as in the PolicyReport API), and the report's own source,
// gatehouse. Configuration (limits.maxResults, statusFilter) is left out:
// gatehouse bounds a report in bytes, not results, says so in its
// ReportTruncated result, and filters no status.
var openReportsAPI = reportAPI{
	name:       configv1alpha1.ReportAPIOpenReports,
	namespaced: schema.GroupVersionResource{Group: openreportsv1alpha1.GroupVersion.Group, Version: openreportsv1alpha1.GroupVersion.Version, Resource: "reports"},
	cluster:    schema.GroupVersionResource{Group: openreportsv1alpha1.GroupVersion.Group, Version: openreportsv1alpha1.GroupVersion.Version, Resource: "clusterreports"},
	encode: func(meta metav1.ObjectMeta, c reportContent) any {
		results := make([]openreportsv1alpha1.ReportResult, len(c.Results))
		for i, r := range c.Results {
			results[i] = openReportResult(r)
		}
		summary := openreportsv1alpha1.ReportSummary(c.Summary)
		if meta.Namespace == "" {
			return openreportsv1alpha1.ClusterReport{
				TypeMeta:   metav1.TypeMeta{APIVersion: openreportsv1alpha1.GroupVersion.String(), Kind: openReportsKindClusterReport},
				ObjectMeta: meta, Source: audit.Source, Scope: c.Scope, Summary: summary, Results: results,
			}
		}
		return openreportsv1alpha1.Report{
			TypeMeta:   metav1.TypeMeta{APIVersion: openreportsv1alpha1.GroupVersion.String(), Kind: openReportsKindReport},
			ObjectMeta: meta, Source: audit.Source, Scope: c.Scope, Summary: summary, Results: results,
		}
	},
	decode: func(item *unstructured.Unstructured) (reportContent, bool) {
		var stored openreportsv1alpha1.Report // a ClusterReport has the same fields
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &stored); err != nil {
			return reportContent{}, false
		}
		// What gatehouse never writes cannot compare equal to what it would.
		if stored.Source != audit.Source || stored.ScopeSelector != nil || stored.Configuration != nil {
			return reportContent{}, false
		}
		c := reportContent{Scope: stored.Scope, Owners: stored.OwnerReferences,
			Summary: policyreportv1alpha2.PolicyReportSummary(stored.Summary)}
		for _, r := range stored.Results {
			if r.ResourceSelector != nil {
				return reportContent{}, false
			}
			c.Results = append(c.Results, policyReportResult(r))
		}
		return c, true
	},
}

// openReportResult is r as an OpenReports result.
func openReportResult(r policyreportv1alpha2.PolicyReportResult) openreportsv1alpha1.ReportResult {
	return openreportsv1alpha1.ReportResult{
		Source: r.Source, Policy: r.Policy, Rule: r.Rule, Category: r.Category,
		Severity: openreportsv1alpha1.ResultSeverity(r.Severity), Timestamp: r.Timestamp,
		Result: openreportsv1alpha1.Result(r.Result), Scored: r.Scored, Subjects: r.Resources,
		Description: r.Message, Properties: r.Properties,
	}
}

// policyReportResult is openReportResult's inverse.
func policyReportResult(r openreportsv1alpha1.ReportResult) policyreportv1alpha2.PolicyReportResult {
	return policyreportv1alpha2.PolicyReportResult{
		Source: r.Source, Policy: r.Policy, Rule: r.Rule, Category: r.Category,
		Severity: policyreportv1alpha2.PolicySeverity(r.Severity), Timestamp: r.Timestamp,
		Result: policyreportv1alpha2.PolicyResult(r.Result), Scored: r.Scored, Resources: r.Subjects,
		Message: r.Description, Properties: r.Properties,
	}
}
