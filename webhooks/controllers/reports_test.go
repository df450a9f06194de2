package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
)

// testReport is the report of a Pod with a failing and a passing webhook.
func testReport(obj audit.Object) report {
	results := []policyreportv1alpha2.PolicyReportResult{
		{Source: audit.Source, Policy: "secret-scope", Rule: "ScopeEntryEmpty", Result: policyreportv1alpha2.StatusFail, Message: "entry 2 is empty",
			Resources:  []corev1.ObjectReference{{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, UID: obj.UID}},
			Properties: map[string]string{audit.PropertyMode: audit.ModeEnforce, audit.PropertyField: "spec.volumes[0]"}},
		{Source: audit.Source, Policy: "service-account", Result: policyreportv1alpha2.StatusPass, Properties: map[string]string{audit.PropertyMode: audit.ModeEnforce}},
	}
	return newReport(obj, audit.Bound(results, audit.MaxReportBytes))
}

// asStored is u as the API server returns it (JSON numbers, no Go types).
func asStored(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(raw, &out.Object); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportsAreComparedByContent: in each report API, a report as the API
// server stores it has the content hash of the report gatehouse would
// write, whenever it was stamped; a stored report whose results, summary,
// scope or owner someone changed has another, so the next pass writes it
// again (an annotation saying what gatehouse wrote is not believed).
func TestReportsAreComparedByContent(t *testing.T) {
	for _, api := range knownReportAPIs {
		t.Run(string(api.name), func(t *testing.T) {
			r := testReport(audit.Object{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", UID: "u-1"})
			stored := func(t *testing.T, at time.Time) *unstructured.Unstructured {
				t.Helper()
				_, u, err := r.object(api, at)
				if err != nil {
					t.Fatal(err)
				}
				out := asStored(t, u)
				// What an older gatehouse wrote, and a tenant may keep.
				out.SetAnnotations(map[string]string{"gatehouse.dev/results-hash": "kept"})
				return out
			}
			if got := api.storedContentHash(stored(t, time.Unix(100, 0))); got != r.hash {
				t.Fatalf("stored report hash %s, want %s: every pass would rewrite every report", got, r.hash)
			}
			if got := api.storedContentHash(stored(t, time.Unix(900, 0))); got != r.hash {
				t.Error("the hash depends on when the results were stamped")
			}
			edits := map[string]func(u *unstructured.Unstructured){
				"a result's message": func(u *unstructured.Unstructured) {
					rs, _, _ := unstructured.NestedSlice(u.Object, "results")
					rs[0].(map[string]any)["message"] = "nothing to see"
					_ = unstructured.SetNestedSlice(u.Object, rs, "results")
				},
				"a result's property": func(u *unstructured.Unstructured) {
					rs, _, _ := unstructured.NestedSlice(u.Object, "results")
					rs[0].(map[string]any)["properties"].(map[string]any)[audit.PropertyField] = "spec.volumes[9]"
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
			}
			if api.name == configv1alpha1.ReportAPIOpenReports {
				edits["the report's source"] = func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, "kyverno", "source")
				}
				edits["a configuration"] = func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, int64(1), "configuration", "limits", "maxResults")
				}
			}
			for name, edit := range edits {
				u := stored(t, time.Unix(100, 0))
				edit(u)
				if api.storedContentHash(u) == r.hash {
					t.Errorf("a report whose %s was changed compares equal to gatehouse's", name)
				}
			}
		})
	}
}

// TestOpenReportsSerialization: the OpenReports report of an object is a
// Report in its namespace (a ClusterReport for a cluster-scoped object),
// with the PolicyReport's name, label, owner, scope, summary and results,
// field for field under the same JSON names, and the report's own source;
// no configuration. Apart from apiVersion, kind and source, the two APIs'
// objects are equal.
func TestOpenReportsSerialization(t *testing.T) {
	at := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		obj                 audit.Object
		kind, policyKind    string
		resource, wgpolicyR string
	}{
		{audit.Object{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", UID: "u-1"}, "Report", "PolicyReport", "reports", "policyreports"},
		{audit.Object{APIVersion: "dependencies.helmetica.io/v1alpha1", Kind: "DependencyGroup", Name: "dg", UID: "u-2"}, "ClusterReport", "ClusterPolicyReport", "clusterreports", "clusterpolicyreports"},
	} {
		r := testReport(tc.obj)
		gvr, open, err := r.object(openReportsAPI, at)
		if err != nil {
			t.Fatal(err)
		}
		if gvr.String() != "openreports.io/v1alpha1, Resource="+tc.resource {
			t.Errorf("%s: written to %s, want openreports.io/v1alpha1 %s", tc.obj.Kind, gvr, tc.resource)
		}
		pgvr, policy, err := r.object(policyReportAPI, at)
		if err != nil {
			t.Fatal(err)
		}
		if pgvr.Resource != tc.wgpolicyR || policy.GetKind() != tc.policyKind {
			t.Errorf("%s: the PolicyReport API writes a %s to %s", tc.obj.Kind, policy.GetKind(), pgvr)
		}
		if open.GetAPIVersion() != "openreports.io/v1alpha1" || open.GetKind() != tc.kind || open.GetName() != string(tc.obj.UID) ||
			open.GetNamespace() != tc.obj.Namespace || open.GetLabels()[ReportManagedByLabel] != ReportManagedBy {
			t.Errorf("%s: %s %s/%s %v, want a %s named by the object's UID in its namespace, labelled as gatehouse's",
				tc.obj.Kind, open.GetKind(), open.GetNamespace(), open.GetName(), open.GetLabels(), tc.kind)
		}
		if src, _, _ := unstructured.NestedString(open.Object, "source"); src != audit.Source {
			t.Errorf("%s: source %q, want %q", tc.obj.Kind, src, audit.Source)
		}
		if _, has := open.Object["configuration"]; has {
			t.Errorf("%s: a configuration is written: %v", tc.obj.Kind, open.Object["configuration"])
		}
		results, _, _ := unstructured.NestedSlice(open.Object, "results")
		want := map[string]any{"source": "gatehouse", "policy": "secret-scope", "rule": "ScopeEntryEmpty", "result": "fail",
			"message": "entry 2 is empty", "timestamp": map[string]any{"seconds": int64(1700000000), "nanos": int64(0)},
			"properties": map[string]any{"mode": "Enforce", "field": "spec.volumes[0]"},
			"resources":  []any{map[string]any{"apiVersion": tc.obj.APIVersion, "kind": tc.obj.Kind, "name": tc.obj.Name, "uid": string(tc.obj.UID)}}}
		if tc.obj.Namespace != "" {
			want["resources"].([]any)[0].(map[string]any)["namespace"] = tc.obj.Namespace
		}
		if got := asStored(t, open).Object["results"].([]any)[0]; len(results) != 2 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d results; the first\n  %v\nwant\n  %v", tc.obj.Kind, len(results), got, want)
		}
		// The same object in both APIs, but for what names the API.
		o, p := asStored(t, open).Object, asStored(t, policy).Object
		for _, m := range []map[string]any{o, p} {
			delete(m, "apiVersion")
			delete(m, "kind")
		}
		delete(o, "source")
		if !reflect.DeepEqual(p, o) {
			t.Errorf("%s: the Report differs from the PolicyReport:\n  %v\n  %v", tc.obj.Kind, o, p)
		}
	}
}

// TestReportAPIsOf: the configured APIs in their order, the PolicyReport
// API when none is named, and an error for an API gatehouse does not write.
func TestReportAPIsOf(t *testing.T) {
	names := func(apis []reportAPI) []configv1alpha1.ReportAPI {
		var out []configv1alpha1.ReportAPI
		for _, a := range apis {
			out = append(out, a.name)
		}
		return out
	}
	for _, tc := range []struct{ in, want []configv1alpha1.ReportAPI }{
		{nil, []configv1alpha1.ReportAPI{configv1alpha1.ReportAPIPolicyReport}},
		{[]configv1alpha1.ReportAPI{configv1alpha1.ReportAPIOpenReports}, []configv1alpha1.ReportAPI{configv1alpha1.ReportAPIOpenReports}},
		{configv1alpha1.ReportAPIs(), configv1alpha1.ReportAPIs()},
		{[]configv1alpha1.ReportAPI{configv1alpha1.ReportAPIOpenReports, configv1alpha1.ReportAPIPolicyReport},
			[]configv1alpha1.ReportAPI{configv1alpha1.ReportAPIOpenReports, configv1alpha1.ReportAPIPolicyReport}},
	} {
		got, err := reportAPIsOf(tc.in)
		if err != nil || !slices.Equal(names(got), tc.want) {
			t.Errorf("reportAPIsOf(%v) = %v, %v; want %v", tc.in, names(got), err, tc.want)
		}
	}
	if _, err := reportAPIsOf([]configv1alpha1.ReportAPI{"reports.x-k8s.io/v1beta2"}); err == nil {
		t.Error("reportAPIsOf accepts an API gatehouse does not write")
	}
	if len(knownReportAPIs) != len(configv1alpha1.ReportAPIs()) {
		t.Errorf("%d serializers for the %d APIs of the configuration", len(knownReportAPIs), len(configv1alpha1.ReportAPIs()))
	}
}

// TestExistingReportsPerAPI: the reports are listed in each configured API
// by gatehouse's label, each keyed by its API; an API whose CRDs the
// cluster lacks (404 on its first page) is not served, and the others are.
func TestExistingReportsPerAPI(t *testing.T) {
	obj := audit.Object{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "web", UID: "u-1"}
	r := testReport(obj)
	_, stored, err := r.object(openReportsAPI, time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	item, err := json.Marshal(stored.Object)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if got := req.URL.Query().Get("labelSelector"); got != ReportManagedByLabel+"="+ReportManagedBy {
			t.Errorf("%s listed with labelSelector %q", req.URL.Path, got)
		}
		paths = append(paths, req.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch req.URL.Path {
		case "/apis/openreports.io/v1alpha1/reports":
			fmt.Fprintf(w, `{"kind":"ReportList","apiVersion":"openreports.io/v1alpha1","metadata":{},"items":[%s]}`, item)
		case "/apis/openreports.io/v1alpha1/clusterreports":
			fmt.Fprint(w, `{"kind":"ClusterReportList","apiVersion":"openreports.io/v1alpha1","metadata":{},"items":[]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	}))
	defer server.Close()
	pager, err := audit.NewPager(&rest.Config{Host: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	a := &Audit{Pager: pager}
	apis, err := reportAPIsOf(configv1alpha1.ReportAPIs())
	if err != nil {
		t.Fatal(err)
	}
	existing, served, err := a.existingReports(context.Background(), apis)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0].name != configv1alpha1.ReportAPIOpenReports {
		t.Errorf("served %v, want openreports.io alone (no PolicyReport CRDs); listed %v", served, paths)
	}
	key := reportKey{configv1alpha1.ReportAPIOpenReports, "team-a", "u-1"}
	if got := existing[key]; len(existing) != 1 || got.hash != r.hash || got.kind != "Pod" || got.group != "" || got.resource != openReportsAPI.namespaced {
		t.Errorf("existing %+v, want the Report of team-a/web with gatehouse's hash", existing)
	}
	if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, "/apis/wgpolicyk8s.io/") }) {
		t.Errorf("the PolicyReport API was never asked: %v", paths)
	}
}
