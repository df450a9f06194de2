package controllers

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// TestReportsAreComparedByContent: a report as the API server stores it
// has the content hash of the report gatehouse would write, whenever it was
// stamped; a stored report whose results, summary, scope or owner someone
// changed has another, so the next pass writes it again (an annotation
// saying what gatehouse wrote is not believed).
func TestReportsAreComparedByContent(t *testing.T) {
	obj := audit.Object{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", UID: "u-1"}
	results := []policyreportv1alpha2.PolicyReportResult{
		{Source: audit.Source, Policy: "secret-scope", Rule: "ScopeEntryEmpty", Result: policyreportv1alpha2.StatusFail, Message: "entry 2 is empty",
			Properties: map[string]string{audit.PropertyMode: audit.ModeEnforce, audit.PropertyField: "spec.volumes[0]"}},
		{Source: audit.Source, Policy: "service-account", Result: policyreportv1alpha2.StatusPass, Properties: map[string]string{audit.PropertyMode: audit.ModeEnforce}},
	}
	r := newReport(obj, audit.Bound(results, audit.MaxReportBytes))
	stored := func(t *testing.T, at time.Time) *unstructured.Unstructured {
		t.Helper()
		_, u, err := r.object(at)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out := &unstructured.Unstructured{}
		if err := utiljson.Unmarshal(raw, &out.Object); err != nil {
			t.Fatal(err)
		}
		// What an older gatehouse wrote, and a tenant may keep.
		out.SetAnnotations(map[string]string{"gatehouse.dev/results-hash": "kept"})
		return out
	}
	if got := storedContentHash(stored(t, time.Unix(100, 0))); got != r.hash {
		t.Fatalf("stored report hash %s, want %s: every pass would rewrite every report", got, r.hash)
	}
	if got := storedContentHash(stored(t, time.Unix(900, 0))); got != r.hash {
		t.Error("the hash depends on when the results were stamped")
	}
	for name, edit := range map[string]func(u *unstructured.Unstructured){
		"a result's message": func(u *unstructured.Unstructured) {
			rs, _, _ := unstructured.NestedSlice(u.Object, "results")
			rs[0].(map[string]any)["message"] = "nothing to see"
			_ = unstructured.SetNestedSlice(u.Object, rs, "results")
		},
		"a result removed": func(u *unstructured.Unstructured) {
			rs, _, _ := unstructured.NestedSlice(u.Object, "results")
			_ = unstructured.SetNestedSlice(u.Object, rs[1:], "results")
		},
		"the summary": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(0), "summary", "fail")
		},
		"the scope": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "other", "scope", "name")
		},
		"the owner": func(u *unstructured.Unstructured) { u.SetOwnerReferences(nil) },
		"not a report": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "many", "summary", "fail")
		},
	} {
		u := stored(t, time.Unix(100, 0))
		edit(u)
		if storedContentHash(u) == r.hash {
			t.Errorf("a report whose %s was changed compares equal to gatehouse's", name)
		}
	}
}
