package perf

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What reaches gatehouse is read from two sides: the API server counts its
// calls to each webhook entry and the requests an entry's rules matched but
// its matchConditions kept away, by operation; gatehouse counts the
// decisions of each member webhook of its combined entries (a call no member
// takes decides nothing).
const (
	webhookCallsMetric     = "apiserver_admission_webhook_request_total"
	webhookExclusionMetric = "apiserver_admission_match_condition_exclusions_total"
	decisionsMetric        = "gatehouse_webhook_decisions_total"
	// entrySuffix ends the name of every gatehouse webhook entry.
	entrySuffix = ".gatehouse.dev"
)

// AdmissionCounts are the counters that say what reached gatehouse.
type AdmissionCounts struct {
	// Calls and Excluded are by entry (the webhook's name without
	// .gatehouse.dev) and operation.
	Calls    map[string]map[string]int `json:"calls"`
	Excluded map[string]map[string]int `json:"excludedByMatchConditions"`
	// Decisions are by member webhook.
	Decisions map[string]int `json:"decisions"`
}

// ParseAdmissionCounts reads the counts from the API server's /metrics and
// gatehouse's /metrics (Prometheus text).
func ParseAdmissionCounts(apiServer, gatehouse []byte) (AdmissionCounts, error) {
	out := AdmissionCounts{Calls: map[string]map[string]int{}, Excluded: map[string]map[string]int{}, Decisions: map[string]int{}}
	families, err := parseMetrics(apiServer)
	if err != nil {
		return out, fmt.Errorf("the API server's metrics: %w", err)
	}
	for _, c := range []struct {
		metric string
		into   map[string]map[string]int
	}{{webhookCallsMetric, out.Calls}, {webhookExclusionMetric, out.Excluded}} {
		for _, m := range families[c.metric].GetMetric() {
			labels := labelsOf(m)
			entry, ok := strings.CutSuffix(labels["name"], entrySuffix)
			// The exclusions count admission policies too, as kind
			// validating_admission_policy.
			if !ok || (labels["kind"] != "" && labels["kind"] != "webhook") {
				continue
			}
			if c.into[entry] == nil {
				c.into[entry] = map[string]int{}
			}
			c.into[entry][labels["operation"]] += counterValue(m)
		}
	}
	if families, err = parseMetrics(gatehouse); err != nil {
		return out, fmt.Errorf("gatehouse's metrics: %w", err)
	}
	for _, m := range families[decisionsMetric].GetMetric() {
		// A decision with several finding codes counts once per code; the
		// mixed workload's objects are plain allows (code ""), so the sum
		// is the number of decisions.
		out.Decisions[labelsOf(m)["webhook"]] += counterValue(m)
	}
	return out, nil
}

func parseMetrics(raw []byte) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(raw))
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func counterValue(m *dto.Metric) int {
	if c := m.GetCounter(); c != nil {
		return int(math.Round(c.GetValue()))
	}
	return int(math.Round(m.GetUntyped().GetValue()))
}

// Sub returns what the counters moved by from before to a.
func (a AdmissionCounts) Sub(before AdmissionCounts) AdmissionCounts {
	var out AdmissionCounts
	out.add(a, 1)
	out.add(before, -1)
	return out
}

// Add adds other's counts.
func (a *AdmissionCounts) Add(other AdmissionCounts) { a.add(other, 1) }

// add adds sign times other's counts; counts that end at zero are dropped,
// so a difference lists only what moved.
func (a *AdmissionCounts) add(other AdmissionCounts, sign int) {
	if a.Calls == nil {
		a.Calls, a.Excluded, a.Decisions = map[string]map[string]int{}, map[string]map[string]int{}, map[string]int{}
	}
	for _, c := range []struct{ into, from map[string]map[string]int }{{a.Calls, other.Calls}, {a.Excluded, other.Excluded}} {
		for entry, ops := range c.from {
			if c.into[entry] == nil {
				c.into[entry] = map[string]int{}
			}
			for op, n := range ops {
				if c.into[entry][op] += sign * n; c.into[entry][op] == 0 {
					delete(c.into[entry], op)
				}
			}
			if len(c.into[entry]) == 0 {
				delete(c.into, entry)
			}
		}
	}
	for member, n := range other.Decisions {
		if a.Decisions[member] += sign * n; a.Decisions[member] == 0 {
			delete(a.Decisions, member)
		}
	}
}

// Entries returns the entries that were called or excluded, sorted.
func (a AdmissionCounts) Entries() []string {
	seen := map[string]bool{}
	for entry := range a.Calls {
		seen[entry] = true
	}
	for entry := range a.Excluded {
		seen[entry] = true
	}
	return sortedKeys(seen)
}

func sum(ops map[string]int) int {
	n := 0
	for _, c := range ops {
		n += c
	}
	return n
}

// AdmissionScraper reads the counts from a running API server and gatehouse.
type AdmissionScraper struct {
	apiServer rest.Interface
	gatehouse string
	http      *http.Client
}

// NewAdmissionScraper reads the API server through cfg and gatehouse's
// metrics at gatehouseMetrics, an http URL on loopback.
func NewAdmissionScraper(cfg *rest.Config, gatehouseMetrics string) (*AdmissionScraper, error) {
	if err := CheckLoopback(gatehouseMetrics); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &AdmissionScraper{apiServer: cs.Discovery().RESTClient(), gatehouse: gatehouseMetrics, http: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Scrape reads both sides now.
func (s *AdmissionScraper) Scrape(ctx context.Context) (AdmissionCounts, error) {
	apiServer, err := s.apiServer.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return AdmissionCounts{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.gatehouse, nil)
	if err != nil {
		return AdmissionCounts{}, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return AdmissionCounts{}, fmt.Errorf("reading gatehouse's metrics: %w", err)
	}
	defer resp.Body.Close()
	gatehouse, err := io.ReadAll(resp.Body)
	if err != nil {
		return AdmissionCounts{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return AdmissionCounts{}, fmt.Errorf("reading gatehouse's metrics: %s", resp.Status)
	}
	return ParseAdmissionCounts(apiServer, gatehouse)
}

// KindReach is what a few requests of one kind of the mixed workload, sent
// alone, moved the counters by.
type KindReach struct {
	Kind      string          `json:"kind"`
	Operation string          `json:"operation"`
	Requests  int             `json:"requests"`
	Errors    map[string]int  `json:"errors,omitempty"`
	Counts    AdmissionCounts `json:"counts"`
}

// ReachByKind sends n requests of each of m's kinds in turn, one at a time,
// and reads the counters between kinds: which entries each kind reaches, and
// which members decide it. Run it with gatehouse registered.
func ReachByKind(ctx context.Context, m *Mixed, n int, scrape func(context.Context) (AdmissionCounts, error)) ([]KindReach, error) {
	before, err := scrape(ctx)
	if err != nil {
		return nil, err
	}
	var out []KindReach
	for k, kind := range m.Kinds {
		plan := make([]int, n)
		for i := range plan {
			plan[i] = k
		}
		res, err := m.Run(ctx, plan, fmt.Sprintf("reach-%d", k), LoadOptions{Concurrency: 1, Duration: time.Minute})
		if err != nil {
			return nil, err
		}
		after, err := scrape(ctx)
		if err != nil {
			return nil, err
		}
		counts := after.Sub(before)
		// What the control plane wrote meanwhile with another operation
		// (a status or lease update of its own) is not this kind's.
		for _, byOp := range []map[string]map[string]int{counts.Calls, counts.Excluded} {
			for entry, ops := range byOp {
				for op := range ops {
					if op != kind.Operation {
						delete(ops, op)
					}
				}
				if len(ops) == 0 {
					delete(byOp, entry)
				}
			}
		}
		out = append(out, KindReach{Kind: kind.Name, Operation: kind.Operation, Requests: res.Sent[kind.Name], Errors: res.Errors, Counts: counts})
		before = after
	}
	return out, ctx.Err()
}
