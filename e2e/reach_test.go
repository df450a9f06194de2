package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
)

// TestOnlyContractRequestsReachGatehouse: the selection is part of each
// contract (docs/contracts.md §10). Each kind of the mixed workload (Events,
// Lease renewals by a service account, EndpointSlices, ConfigMaps, Secrets,
// ReplicaSets and their Pods in a namespace that opts in to nothing, and the
// objects a contract applies to) is sent alone, and the API server's own
// counter of webhook calls (apiserver_admission_webhook_request_total) says
// which gatehouse entries it reached: none for the kinds no contract
// applies to, at least one for each contract kind (so the count can tell).
func TestOnlyContractRequestsReachGatehouse(t *testing.T) {
	e := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fixtures, err := perf.ReadFixtures(repo)
	if err != nil {
		t.Fatal(err)
	}
	m, err := perf.NewMixed(e.config, localcluster.Scheme(), "e2e-reach", fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Prepare(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	scrape := func(ctx context.Context) (perf.AdmissionCounts, error) {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return perf.AdmissionCounts{}, err
		}
		return perf.ParseAdmissionCounts(raw, nil)
	}
	reach, err := perf.ReachByKind(ctx, m, 3, scrape)
	if err != nil {
		t.Fatal(err)
	}
	contract := map[string]bool{}
	for _, k := range m.Kinds {
		contract[k.Name] = k.Contract
	}
	if len(reach) != len(m.Kinds) {
		t.Fatalf("%d kinds measured, want %d", len(reach), len(m.Kinds))
	}
	for _, r := range reach {
		if len(r.Errors) > 0 || r.Requests != 3 {
			t.Errorf("%s: %d requests sent, errors %v", r.Kind, r.Requests, r.Errors)
			continue
		}
		t.Logf("%s %s: calls %v, kept away by matchConditions %v", r.Operation, r.Kind, r.Counts.Calls, r.Counts.Excluded)
		switch {
		case contract[r.Kind] && len(r.Counts.Calls) == 0:
			t.Errorf("%s, which a contract applies to, reached no gatehouse entry: the count cannot tell", r.Kind)
		case !contract[r.Kind] && len(r.Counts.Calls) > 0:
			t.Errorf("%s %s, which no contract applies to, reached gatehouse: %v", r.Operation, r.Kind, r.Counts.Calls)
		}
	}
}
