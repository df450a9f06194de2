package perf

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestMixedKindsAreOneInTenContract(t *testing.T) {
	var total, contract int
	names := map[string]bool{}
	for _, k := range MixedKinds {
		total += k.Weight
		if k.Contract {
			contract += k.Weight
			if k.Fixture == "" {
				t.Errorf("%s: a contract kind creates a fixture of the corpus", k.Name)
			}
		}
		if names[k.Name] {
			t.Errorf("%s twice", k.Name)
		}
		names[k.Name] = true
		if (k.build == nil) == (k.Fixture == "") && k.Name != LeaseRenewal {
			t.Errorf("%s: needs exactly one of a builder and a fixture", k.Name)
		}
	}
	if total != 100 || contract != 10 {
		t.Errorf("weights sum to %d, contract kinds to %d; want 100 and 10", total, contract)
	}
}

// Every hundred consecutive requests of the plan hold each kind exactly its
// weight times, and the contract requests are spread out, not bunched.
func TestMixedPlanSpreadsEachKind(t *testing.T) {
	plan := MixedPlan(MixedKinds, 2000)
	if len(plan) != 2000 {
		t.Fatalf("%d requests", len(plan))
	}
	for start := 0; start+100 <= len(plan); start += 7 {
		counts := make([]int, len(MixedKinds))
		for _, k := range plan[start : start+100] {
			counts[k]++
		}
		for k, n := range counts {
			if n != MixedKinds[k].Weight {
				t.Fatalf("requests %d-%d: %d of %s, want %d", start, start+99, n, MixedKinds[k].Name, MixedKinds[k].Weight)
			}
		}
	}
	gap, longest := 0, 0
	for _, k := range plan {
		if MixedKinds[k].Contract {
			gap = 0
			continue
		}
		gap++
		longest = max(longest, gap)
	}
	if longest > 20 {
		t.Errorf("%d requests in a row touch no contract", longest)
	}
	if got := MixedPlan(nil, 5); got != nil {
		t.Errorf("no kinds: %v", got)
	}
	if got := fmtInts(MixedPlan([]MixedKind{{Name: "a", Weight: 1}, {Name: "b", Weight: 3}}, 4)); got != "1011" {
		t.Errorf("weights 1 and 3: %s, want 1011", got)
	}
}

func fmtInts(v []int) string {
	var b strings.Builder
	for _, i := range v {
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

func readMixedFixtures(t *testing.T) map[string]map[string]any {
	t.Helper()
	fixtures, err := ReadFixtures(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range MixedKinds {
		for _, fx := range fixtures {
			if fx.File == k.Fixture && fx.Outcome != "pass" {
				t.Errorf("%s: %s is a %s fixture; the mixed workload must be admitted", k.Name, fx.File, fx.Outcome)
			}
		}
	}
	picked, err := contractFixtures(MixedKinds, fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := contractFixtures(MixedKinds, fixtures[:0]); err == nil {
		t.Error("a missing fixture must be an error")
	}
	return picked
}

// Every object the workload creates converts to its typed API object with
// no unknown field, in the run's namespace, under the name it was given;
// the corpus's fixtures are copied, never changed.
func TestMixedObjectsAreWellFormed(t *testing.T) {
	fixtures := readMixedFixtures(t)
	m := &Mixed{Namespace: "perf-mixed", Kinds: MixedKinds, fixtures: fixtures}
	scheme := clientgoscheme.Scheme
	for _, k := range MixedKinds {
		if k.Name == LeaseRenewal {
			continue
		}
		obj := m.object(k, "run-7", 7)
		if obj.GetNamespace() != "perf-mixed" || obj.GetName() != "run-7" {
			t.Errorf("%s: %s/%s", k.Name, obj.GetNamespace(), obj.GetName())
		}
		if k.Fixture != "" {
			if name := stringAt(meta0(fixtures[k.Fixture]), "name"); name == "run-7" {
				t.Errorf("%s: the fixture itself was renamed", k.Name)
			}
			if !scheme.Recognizes(obj.GroupVersionKind()) {
				continue // a product CRD, not in client-go's scheme
			}
		}
		typed, err := scheme.New(obj.GroupVersionKind())
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
}

// A run sends the plan, each kind counted; each worker renews its own Lease
// (so renewals never conflict) as the lease holder.
func TestMixedRunSendsThePlan(t *testing.T) {
	fixtures := readMixedFixtures(t)
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	m := &Mixed{Client: c, LeaseClient: c, Namespace: "perf-mixed", fixtures: fixtures}
	// The fake client knows no product CRD.
	for _, k := range MixedKinds {
		if k.Name != "HdfsCluster" {
			m.Kinds = append(m.Kinds, k)
		}
	}
	ctx := context.Background()
	if err := m.Prepare(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(ctx, MixedPlan(m.Kinds, 10), "x", LoadOptions{Concurrency: 5, Rate: 1000, Duration: time.Minute}); err == nil {
		t.Error("more workers than Leases must be refused")
	}
	plan := MixedPlan(m.Kinds, 196)
	for round, o := range []LoadOptions{
		{Concurrency: 4, Rate: 2000, Duration: time.Minute},
		{Concurrency: 4, Duration: time.Minute},
	} {
		res, err := m.Run(ctx, plan, "r"+string(rune('0'+round)), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) != 0 || res.All.Count() != len(plan) {
			t.Fatalf("round %d: %d answered, errors %v", round, res.All.Count(), res.Errors)
		}
		for _, k := range m.Kinds {
			if res.Sent[k.Name] != 2*k.Weight || res.ByKind[k.Name].Count() != 2*k.Weight {
				t.Errorf("round %d: %s sent %d, want %d", round, k.Name, res.Sent[k.Name], 2*k.Weight)
			}
		}
	}
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace("perf-mixed")); err != nil {
		t.Fatal(err)
	}
	// Each renewal is one update: the resourceVersions (1 when created)
	// sum to the renewals of both rounds.
	updates := 0
	for _, l := range leases.Items {
		rv, err := strconv.Atoi(l.ResourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		updates += rv - 1
	}
	var want int
	for _, k := range plan {
		if m.Kinds[k].Name == LeaseRenewal {
			want += 2
		}
	}
	if len(leases.Items) != 4 || updates != want {
		t.Errorf("%d Leases updated %d times, want 4 and %d", len(leases.Items), updates, want)
	}
}
