package controllers

import (
	"testing"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// TestExceptionReportsCarryTheirState: each exception's report ends with
// what the pass says the exception did; one the statuses do not name (an
// index that could not read it) gets its findings alone.
func TestExceptionReportsCarryTheirState(t *testing.T) {
	unused := audit.Result{Object: audit.Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "ClusterException", Name: "unused", UID: "u1"}}
	own := audit.Result{Object: audit.Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "Exception", Namespace: "team-a", Name: "own", UID: "u2"}}
	unknown := audit.Result{Object: audit.Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "ClusterException", Name: "unknown", UID: "u3"}}
	statuses := []exception.Status{{Name: "unused", State: exception.StateUnused}, {Name: "team-a/own", State: exception.StateExpired}}
	written := map[string][]policyreportv1alpha2.PolicyReportResult{}
	err := writeExceptionReports([]audit.Result{unused, own, unknown}, statuses, func(r audit.Result, results []policyreportv1alpha2.PolicyReportResult) error {
		written[string(r.Object.UID)] = results
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for uid, state := range map[string]string{"u1": "Unused", "u2": "Expired"} {
		results := written[uid]
		if len(results) != 1 || results[0].Rule != audit.RuleExceptionState || results[0].Properties[audit.PropertyExceptionState] != state {
			t.Errorf("%s: %+v, want one ExceptionState %s", uid, results, state)
		}
	}
	if results, ok := written["u3"]; !ok || len(results) != 0 {
		t.Errorf("u3: written %v (%+v), want its findings alone (none)", ok, results)
	}
}
