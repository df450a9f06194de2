// Package v1alpha2 holds the parts of the Kubernetes Policy Working Group's
// PolicyReport API (wgpolicyk8s.io/v1alpha2) that gatehouse's background
// audit writes: PolicyReport, ClusterPolicyReport and their results, with the
// field names and JSON tags of the published types (github.com/kyverno/kyverno
// api/policyreport/v1alpha2, Apache License 2.0, copyright The Kubernetes
// Authors), which Kyverno, Kubewarden and Policy Reporter read. The module
// that publishes them (sigs.k8s.io/wg-policy-prototypes) is not available
// here and Kyverno's is far too heavy a dependency for a few structs.
//
// The reports are written by server-side apply from their JSON, never read
// back into these types, so they carry no deepcopy functions. The CRDs are
// in deploy/policyreport-crds.
package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group and Version of the API.
const (
	Group      = "wgpolicyk8s.io"
	Version    = "v1alpha2"
	APIVersion = Group + "/" + Version
)

// The kinds and their resources.
const (
	KindPolicyReport        = "PolicyReport"
	KindClusterPolicyReport = "ClusterPolicyReport"
	ResourcePolicyReports   = "policyreports"
	// ResourceClusterPolicyReports is the resource of ClusterPolicyReport.
	ResourceClusterPolicyReports = "clusterpolicyreports"
)

// PolicyResult is the outcome of one rule on one resource.
type PolicyResult string

// The results a report may hold.
const (
	StatusPass  PolicyResult = "pass"
	StatusFail  PolicyResult = "fail"
	StatusWarn  PolicyResult = "warn"
	StatusError PolicyResult = "error"
	StatusSkip  PolicyResult = "skip"
)

// PolicySeverity ranks a result.
type PolicySeverity string

// The severities a result may carry.
const (
	SeverityCritical PolicySeverity = "critical"
	SeverityHigh     PolicySeverity = "high"
	SeverityMedium   PolicySeverity = "medium"
	SeverityLow      PolicySeverity = "low"
	SeverityInfo     PolicySeverity = "info"
)

// PolicyReportSummary counts the results by outcome.
type PolicyReportSummary struct {
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Warn  int `json:"warn"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
}

// PolicyReportResult is one rule's result on the resources it names.
type PolicyReportResult struct {
	Source     string                   `json:"source"`
	Policy     string                   `json:"policy"`
	Rule       string                   `json:"rule,omitempty"`
	Resources  []corev1.ObjectReference `json:"resources,omitempty"`
	Message    string                   `json:"message,omitempty"`
	Result     PolicyResult             `json:"result,omitempty"`
	Scored     bool                     `json:"scored,omitempty"`
	Properties map[string]string        `json:"properties,omitempty"`
	Timestamp  metav1.Timestamp         `json:"timestamp,omitempty"`
	Category   string                   `json:"category,omitempty"`
	Severity   PolicySeverity           `json:"severity,omitempty"`
}

// PolicyReport holds the results of the namespaced resources of one
// namespace (here: of one object, named by Scope).
type PolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Scope is the object the report is about.
	Scope   *corev1.ObjectReference `json:"scope,omitempty"`
	Summary PolicyReportSummary     `json:"summary,omitempty"`
	Results []PolicyReportResult    `json:"results,omitempty"`
}

// ClusterPolicyReport is PolicyReport for cluster-scoped objects.
type ClusterPolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Scope             *corev1.ObjectReference `json:"scope,omitempty"`
	Summary           PolicyReportSummary     `json:"summary,omitempty"`
	Results           []PolicyReportResult    `json:"results,omitempty"`
}

// Summarize counts results by outcome.
func Summarize(results []PolicyReportResult) PolicyReportSummary {
	var s PolicyReportSummary
	for _, r := range results {
		switch r.Result {
		case StatusPass:
			s.Pass++
		case StatusFail:
			s.Fail++
		case StatusWarn:
			s.Warn++
		case StatusError:
			s.Error++
		case StatusSkip:
			s.Skip++
		}
	}
	return s
}
