package perf

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// mixedResult is a run whose requests of kind all took the given latencies.
func mixedResult(kind string, ms ...int) *MixedResult {
	r := &MixedResult{All: &Latencies{}, ByKind: map[string]*Latencies{kind: {}}, Sent: map[string]int{kind: len(ms)}, Errors: map[string]int{}, Elapsed: time.Second}
	for _, m := range ms {
		r.All.Add(time.Duration(m) * time.Millisecond)
		r.ByKind[kind].Add(time.Duration(m) * time.Millisecond)
	}
	return r
}

func target(t *testing.T, r *Report, name string) Target {
	t.Helper()
	for _, tg := range r.Targets {
		if tg.Name == name {
			return tg
		}
	}
	t.Fatalf("no target %q", name)
	return Target{}
}

// The mixed ratios are gatehouse and floor over none, pooled and per round;
// the targets read the median round, met or MISSED, never missing once the
// setups ran.
func TestEvaluateMixedRatiosAndTargets(t *testing.T) {
	r := &Report{Mixed: NewMixedReport(MixedKinds)}
	// Two rounds (nearest-rank percentiles of four latencies: p50 the
	// second, p99 the fourth). p50 gatehouse/none: 11/10 then 30/20, median
	// 1.3; p99: 110/100 then 120/100, median 1.15. The floor equals none.
	for _, round := range []map[Admission][]int{
		{NoWebhooks: {10, 10, 10, 100}, Gatehouse: {10, 11, 11, 110}, Floor: {10, 10, 10, 100}},
		{NoWebhooks: {20, 20, 20, 100}, Gatehouse: {30, 30, 30, 120}, Floor: {20, 20, 20, 100}},
	} {
		for a, ms := range round {
			r.Mixed.Setup(a).AddRound(mixedResult("Event", ms...))
		}
	}
	r.Evaluate()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	p50 := r.Ratios["mixed p50 gatehouse/none"]
	if !near(p50.Rounds.Min, 1.1) || !near(p50.Rounds.Max, 1.5) || !near(p50.Rounds.Median, 1.3) {
		t.Errorf("mixed p50 gatehouse/none rounds %+v", p50.Rounds)
	}
	// Pooled over both rounds: the fourth of eight, 20 and 30.
	if !near(p50.Pooled, 1.5) {
		t.Errorf("pooled %v", p50.Pooled)
	}
	if f := r.Ratios["mixed p99 floor/none"]; !near(f.Pooled, 1) || !near(f.Rounds.Median, 1) {
		t.Errorf("floor/none p99 %+v", f)
	}
	if tg := target(t, r, "mixed p50 vs none"); tg.Missing || tg.Met || !near(tg.Value, 1.3) || tg.Limit != 1.03 || tg.Bounded == "" {
		t.Errorf("p50 target %+v", tg)
	}
	if tg := target(t, r, "mixed p99 vs none"); tg.Missing || tg.Met || !near(tg.Value, 1.15) || tg.Limit != 1.10 || tg.Bounded != "as mixed p50" {
		t.Errorf("p99 target %+v", tg)
	}
	// No counters were read in these rounds: the exclusions are not measured.
	if tg := target(t, r, "matchCondition exclusions in the mixed workload"); !tg.Missing || tg.Met || tg.Bounded != "" {
		t.Errorf("exclusions target %+v", tg)
	}
	if s := r.Mixed.Setups[Gatehouse]; s.All.Count != 8 || s.Sent["Event"] != 8 || s.ByKind["Event"].Count != 8 || s.Rate.Median != 4 {
		t.Errorf("gatehouse setup %+v", s)
	}

	// Without the mixed runs the targets are reported as not measured.
	r = &Report{}
	r.Evaluate()
	if tg := target(t, r, "mixed p99 vs none"); !tg.Missing || tg.verdict() != "not measured" {
		t.Errorf("unmeasured: %+v", tg)
	}
}

func TestMixedMarkdownAndJSON(t *testing.T) {
	r := &Report{Mixed: NewMixedReport(MixedKinds), Settings: Settings{Rounds: 1, MixedRequests: 4, MixedRate: 200, LatencyConcurrency: 16}}
	for _, a := range mixedSetups {
		r.Mixed.Setup(a).AddRound(mixedResult("Event", 1, 2, 3, 4))
	}
	r.Mixed.Reach.Sent = map[string]int{"Event": 3, LeaseRenewal: 1}
	r.Mixed.Reach.During = AdmissionCounts{
		Calls:     map[string]map[string]int{"mutating-ignore": {"CREATE": 3}},
		Excluded:  map[string]map[string]int{"validating-fail": {"UPDATE": 1}},
		Decisions: map[string]int{"harness-labels": 3},
	}
	r.Mixed.Reach.PerKind = []KindReach{
		{Kind: "Event", Operation: "CREATE", Requests: 3, Counts: AdmissionCounts{Calls: map[string]map[string]int{"mutating-ignore": {"CREATE": 3}}, Decisions: map[string]int{"harness-labels": 3}}},
		{Kind: LeaseRenewal, Operation: "UPDATE", Requests: 3, Counts: AdmissionCounts{Excluded: map[string]map[string]int{"validating-fail": {"UPDATE": 2}}}},
	}
	r.Evaluate()
	md := r.Markdown()
	for _, want := range []string{
		"## Mixed workload\n",
		"| gatehouse | 4 | 2.00 | 4.00 | 4.00 | 4.00 | 4.00 | 4 | 0 |",
		"30% Event, 20% Lease renewal,",
		"4% Pod with a secret volume*",
		"| Event | 2.00 | 2.00 | 2.00 |",
		"| mixed p50 vs none | 1.00x | ≤ 1.03x | met |  |",
		"| mixed p99 vs none | 1.00x | ≤ 1.10x | met |  |",
		"## What reaches gatehouse\n",
		"sent 4 requests",
		"| mutating-ignore | 3 | CREATE 3 | 0.75 | 0 |",
		"| validating-fail | 0 | 0 | 0 | UPDATE 1 |",
		"decided (`gatehouse_webhook_decisions_total`): harness-labels 3.",
		"| kind | operation | sent in the gatehouse runs | mutating-ignore | validating-fail | members that decided |",
		"| Event | CREATE | 3 | 1 | 0 | harness-labels 1 |",
		"| Lease renewal | UPDATE | 1 | 0 | 0 (0.67) | none |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "| vap |") {
		t.Error("the mixed tables have no vap row")
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Mixed struct {
			Setups map[string]struct {
				All Summary `json:"all"`
			} `json:"setups"`
			Reach struct {
				During  AdmissionCounts `json:"during"`
				PerKind []KindReach     `json:"perKind"`
			} `json:"reach"`
		} `json:"mixed"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Mixed.Setups["gatehouse"].All.Count != 4 || back.Mixed.Reach.During.Calls["mutating-ignore"]["CREATE"] != 3 || len(back.Mixed.Reach.PerKind) != 2 {
		t.Errorf("JSON: %s", raw)
	}
}

func TestPerRequest(t *testing.T) {
	for _, tc := range []struct {
		n, requests int
		want        string
	}{{3, 3, "1"}, {0, 3, "0"}, {2, 3, "0.67"}, {5, 2, "2.5"}, {1, 0, "–"}} {
		if got := perRequest(tc.n, tc.requests); got != tc.want {
			t.Errorf("perRequest(%d, %d) = %s, want %s", tc.n, tc.requests, got, tc.want)
		}
	}
}

// The two evaluations with targets of their own are read from the micro-benchmarks by
// package and name: met, MISSED, or not measured when the line is absent.
func TestEvaluateBenchTargets(t *testing.T) {
	r := &Report{Bench: []BenchLine{
		{Package: "github.com/gatehouse-dev/gatehouse/policies/overrides", Name: "BenchmarkValidate", NsPerOp: 41200},
		{Package: "github.com/gatehouse-dev/gatehouse/webhooks", Name: "BenchmarkAdapter/pod-security-defaults", NsPerOp: 460000},
	}}
	r.Evaluate()
	if tg := target(t, r, "overrides.Validate, 5-component document"); tg.Missing || !tg.Met || tg.Value != 41.2 || tg.Limit != 50 {
		t.Errorf("overrides target %+v", tg)
	}
	if tg := target(t, r, "PSC mutating adapter, 3-container pod"); tg.Missing || tg.Met || tg.Value != 460 || tg.Limit != 80 {
		t.Errorf("adapter target %+v", tg)
	}
	r.Bench = r.Bench[:1]
	r.Evaluate()
	if tg := target(t, r, "PSC mutating adapter, 3-container pod"); !tg.Missing || tg.verdict() != "not measured" {
		t.Errorf("adapter target without its benchmark %+v", tg)
	}
}

// TestMissAtTheBoundShowsTheDecidingDigit: a ratio that misses its bound by
// less than the shown precision is printed with one more digit, so the
// table never reads "1.10x ≤ 1.10x MISSED".
func TestMissAtTheBoundShowsTheDecidingDigit(t *testing.T) {
	for _, c := range []struct {
		target Target
		want   string
	}{
		{Target{Value: 1.1032, Limit: 1.10, Unit: "x"}, "1.103x"},
		{Target{Value: 1.0968, Limit: 1.10, Unit: "x", Met: true}, "1.10x"},
		{Target{Value: 1.42, Limit: 1.10, Unit: "x"}, "1.42x"},
		{Target{Value: 0.7961, Limit: 0.80, Unit: "x", AtLeast: true}, "0.796x"},
	} {
		if got := c.target.value(); got != c.want {
			t.Errorf("value %v, bound %v, met %v: shown as %s, want %s", c.target.Value, c.target.Limit, c.target.Met, got, c.want)
		}
	}
}
