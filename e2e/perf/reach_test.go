package perf

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// As kube-apiserver 1.36 and gatehouse expose them.
const (
	apiServerSample = `# HELP apiserver_admission_webhook_request_total [ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.
# TYPE apiserver_admission_webhook_request_total counter
apiserver_admission_webhook_request_total{code="200",name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="false",type="admit"} 1500
apiserver_admission_webhook_request_total{code="400",name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="true",type="admit"} 2
apiserver_admission_webhook_request_total{code="200",name="validating-fail.gatehouse.dev",operation="CREATE",rejected="false",type="validating"} 300
apiserver_admission_webhook_request_total{code="200",name="validating-fail.gatehouse.dev",operation="UPDATE",rejected="false",type="validating"} 4
apiserver_admission_webhook_request_total{code="200",name="cert-manager-webhook.cert-manager.io",operation="CREATE",rejected="false",type="validating"} 9
# HELP apiserver_admission_match_condition_exclusions_total [ALPHA] Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).
# TYPE apiserver_admission_match_condition_exclusions_total counter
apiserver_admission_match_condition_exclusions_total{kind="webhook",name="validating-fail.gatehouse.dev",operation="UPDATE",type="validating"} 400
apiserver_admission_match_condition_exclusions_total{kind="validating_admission_policy",name="scope.gatehouse.dev",operation="CREATE",type="validating"} 7
# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="false",type="admit",le="0.005"} 1400
apiserver_admission_webhook_admission_duration_seconds_bucket{name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="false",type="admit",le="+Inf"} 1500
apiserver_admission_webhook_admission_duration_seconds_sum{name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="false",type="admit"} 2.5
apiserver_admission_webhook_admission_duration_seconds_count{name="mutating-ignore.gatehouse.dev",operation="CREATE",rejected="false",type="admit"} 1500
`
	gatehouseSample = `# HELP gatehouse_webhook_decisions_total Admission decisions by webhook, decision (allowed, denied, errored) and finding code.
# TYPE gatehouse_webhook_decisions_total counter
gatehouse_webhook_decisions_total{code="",decision="allowed",webhook="harness-labels"} 1490
gatehouse_webhook_decisions_total{code="",decision="allowed",webhook="secret-scope"} 60
gatehouse_webhook_decisions_total{code="SCOPE-EMPTY",decision="denied",webhook="secret-scope"} 1
`
)

func TestParseAdmissionCounts(t *testing.T) {
	got, err := ParseAdmissionCounts([]byte(apiServerSample), []byte(gatehouseSample))
	if err != nil {
		t.Fatal(err)
	}
	want := AdmissionCounts{
		Calls: map[string]map[string]int{
			"mutating-ignore": {"CREATE": 1502},
			"validating-fail": {"CREATE": 300, "UPDATE": 4},
		},
		Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": 400}},
		Decisions: map[string]int{"harness-labels": 1490, "secret-scope": 61},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.Entries()[0] != "mutating-ignore" || len(got.Entries()) != 2 {
		t.Errorf("entries %v", got.Entries())
	}
	if _, err := ParseAdmissionCounts([]byte("not { metrics"), nil); err == nil {
		t.Error("unreadable metrics must be an error")
	}
	// No gatehouse entry registered yet: empty counts, no error.
	empty, err := ParseAdmissionCounts(nil, nil)
	if err != nil || len(empty.Calls)+len(empty.Excluded)+len(empty.Decisions) != 0 {
		t.Errorf("empty: %+v, %v", empty, err)
	}
}

// A difference lists only what moved, and adding it back gives the later
// reading.
func TestAdmissionCountsSubAdd(t *testing.T) {
	before := AdmissionCounts{
		Calls:     map[string]map[string]int{"mutating-ignore": {"CREATE": 10}, "validating-fail": {"CREATE": 3}},
		Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": 5}},
		Decisions: map[string]int{"harness-labels": 10, "secret-scope": 2},
	}
	after := AdmissionCounts{
		Calls:     map[string]map[string]int{"mutating-ignore": {"CREATE": 25}, "validating-fail": {"CREATE": 3, "UPDATE": 1}},
		Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": 9}},
		Decisions: map[string]int{"harness-labels": 25, "secret-scope": 2},
	}
	d := after.Sub(before)
	want := AdmissionCounts{
		Calls:     map[string]map[string]int{"mutating-ignore": {"CREATE": 15}, "validating-fail": {"UPDATE": 1}},
		Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": 4}},
		Decisions: map[string]int{"harness-labels": 15},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("difference %+v\nwant       %+v", d, want)
	}
	var total AdmissionCounts
	total.Add(before)
	total.Add(d)
	if !reflect.DeepEqual(total, after) {
		t.Errorf("before + difference = %+v, want %+v", total, after)
	}
}

// ReachByKind credits each kind with what the counters moved by while only
// its requests were sent, in its own operation.
func TestReachByKindCreditsEachKind(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	m := &Mixed{Client: c, LeaseClient: c, Namespace: "perf-mixed"}
	for _, k := range MixedKinds {
		if k.Name == "Event" || k.Name == LeaseRenewal {
			m.Kinds = append(m.Kinds, k)
		}
	}
	ctx := context.Background()
	if err := m.Prepare(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// A stand-in for the API server: every Event created is one call to
	// mutating-ignore, every Lease renewal one exclusion by validating-fail,
	// and something else writes too.
	scrapes := 0
	scrape := func(ctx context.Context) (AdmissionCounts, error) {
		var events corev1.EventList
		var leases coordinationv1.LeaseList
		if err := c.List(ctx, &events); err != nil {
			return AdmissionCounts{}, err
		}
		if err := c.List(ctx, &leases); err != nil {
			return AdmissionCounts{}, err
		}
		renewals := 0
		for _, l := range leases.Items {
			rv, _ := strconv.Atoi(l.ResourceVersion)
			renewals += rv - 1 // 1 when created
		}
		// Background: a DELETE called and one excluded per reading.
		scrapes++
		return AdmissionCounts{
			Calls:     map[string]map[string]int{"mutating-ignore": {"CREATE": len(events.Items)}, "validating-fail": {"DELETE": scrapes}},
			Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": renewals, "DELETE": scrapes}},
			Decisions: map[string]int{"harness-labels": len(events.Items)},
		}, nil
	}
	got, err := ReachByKind(ctx, m, 3, scrape)
	if err != nil {
		t.Fatal(err)
	}
	want := []KindReach{
		{Kind: "Event", Operation: "CREATE", Requests: 3, Errors: map[string]int{}, Counts: AdmissionCounts{
			Calls: map[string]map[string]int{"mutating-ignore": {"CREATE": 3}}, Excluded: map[string]map[string]int{}, Decisions: map[string]int{"harness-labels": 3}}},
		{Kind: LeaseRenewal, Operation: "UPDATE", Requests: 3, Errors: map[string]int{}, Counts: AdmissionCounts{
			Calls: map[string]map[string]int{}, Excluded: map[string]map[string]int{"validating-fail": {"UPDATE": 3}}, Decisions: map[string]int{}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
