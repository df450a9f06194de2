// Command gatehouse-load measures gatehouse side by side with its floor, as
// `make bench` runs it:
//
//  1. loopback: the corpus of AdmissionReviews built from the golden
//     fixtures (every webhook of the registry) is replayed over HTTPS with
//     keep-alive against `gatehouse serve` and against the floor (a bare
//     controller-runtime webhook server), each its own process, in
//     alternating rounds: a fixed-rate run for latency, a closed-loop run for
//     throughput; CPU and memory are read from /proc of each server;
//  2. end to end (unless --e2e=false): objects are created and deleted
//     through the local control plane (e2e/localcluster) with no webhooks,
//     with gatehouse's webhooks, with the ValidatingAdmissionPolicies of
//     e2e/perf/vap, and with gatehouse's in-process layout (the combined
//     entries narrowed away from what CEL proves SCOPE, SA and PSC allow), in
//     alternating rounds;
//  3. mixed (unless --mixed=false): a cluster's everyday writes (Events,
//     Lease renewals, EndpointSlices, ConfigMaps, Secrets, ReplicaSets and
//     Pods, one request in ten from the contract fixtures) through the local
//     control plane with no webhooks, the floor and gatehouse, in
//     alternating rounds at a fixed rate; then the API server's and
//     gatehouse's counters say what reached gatehouse;
//  4. scale (with --scale): the server's and `gatehouse check --state`'s
//     memory with many DependencyGroups, OperatorHarnesses and namespaces.
//
// It prints a table, writes JSON (--json) and Markdown (--doc). Every run is
// bounded in requests and time, and load goes to loopback only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

type flags struct {
	repo, gatehouse, server, floor, workDir string
	jsonOut, docOut, benchFile, cmdline     string
	rounds                                  int
	duration, timeLimit                     time.Duration
	rate                                    float64
	latencyConc, conc, maxRequests          int
	e2e                                     bool
	e2eObjects, e2eConc                     int
	mixed                                   bool
	mixedRequests                           int
	mixedRate                               float64
	scale                                   bool
	scaleNS, scaleDG, scaleHarness          int
}

func main() {
	var f flags
	flag.StringVar(&f.repo, "repo", "../..", "gatehouse repository root")
	flag.StringVar(&f.gatehouse, "gatehouse", "bin/gatehouse", "the gatehouse binary that runs check")
	flag.StringVar(&f.server, "server", "", "the gatehouse binary that serves (default: --gatehouse), to compare two builds")
	flag.StringVar(&f.floor, "floor", "bin/floor", "the floor binary (e2e/perf/cmd/floor)")
	flag.StringVar(&f.workDir, "work-dir", "", "directory for logs, certificates and state (default: a new temporary directory)")
	flag.StringVar(&f.jsonOut, "json", "", "write the results as JSON here")
	flag.StringVar(&f.docOut, "doc", "", "write the results as Markdown here (docs/performance.md)")
	flag.StringVar(&f.benchFile, "bench", "", "`go test -bench -benchmem` output to include (micro-benchmarks)")
	flag.StringVar(&f.cmdline, "command", "make bench", "the command to name in the Markdown")
	flag.IntVar(&f.rounds, "rounds", 3, "alternating rounds (loopback and end to end)")
	flag.DurationVar(&f.duration, "duration", 4*time.Second, "length of each loopback load run")
	flag.DurationVar(&f.timeLimit, "time-limit", 9*time.Minute, "stop everything after this long")
	flag.Float64Var(&f.rate, "rate", 150, "requests per second of the fixed-rate (latency) runs")
	flag.IntVar(&f.latencyConc, "latency-concurrency", 16, "most requests in flight in the fixed-rate runs")
	flag.IntVar(&f.conc, "concurrency", 8, "requests in flight in the closed-loop (throughput) runs")
	flag.IntVar(&f.maxRequests, "max-requests", 200000, "most requests of one load run")
	flag.BoolVar(&f.e2e, "e2e", true, "start the local control plane (KUBEBUILDER_ASSETS) and run the end-to-end comparison")
	flag.IntVar(&f.e2eObjects, "e2e-objects", 200, "objects created and deleted per admission setup and round")
	flag.IntVar(&f.e2eConc, "e2e-concurrency", 8, "concurrent clients of the end-to-end runs")
	flag.BoolVar(&f.mixed, "mixed", true, "run the mixed workload through the local control plane (needs --e2e)")
	flag.IntVar(&f.mixedRequests, "mixed-requests", 2000, "requests of the mixed workload per admission setup and round")
	flag.Float64Var(&f.mixedRate, "mixed-rate", 100, "requests per second of the mixed runs (at most --latency-concurrency in flight)")
	flag.BoolVar(&f.scale, "scale", true, "measure memory with --scale-* objects in the cluster (needs --e2e)")
	flag.IntVar(&f.scaleNS, "scale-namespaces", 10000, "namespaces of the scale run")
	flag.IntVar(&f.scaleDG, "scale-dependencygroups", 10000, "DependencyGroups of the scale run")
	flag.IntVar(&f.scaleHarness, "scale-harnesses", 1000, "OperatorHarnesses of the scale run")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse-load:", err)
		os.Exit(1)
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(f flags) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeLimit)
	defer cancel()
	started := time.Now()
	repo, err := filepath.Abs(f.repo)
	if err != nil {
		return err
	}
	if f.server == "" {
		f.server = f.gatehouse
	}
	for _, bin := range []*string{&f.gatehouse, &f.server, &f.floor} {
		if *bin, err = filepath.Abs(*bin); err != nil {
			return err
		}
	}
	if f.workDir == "" {
		if f.workDir, err = os.MkdirTemp("", "gatehouse-load-"); err != nil {
			return err
		}
		// Logs and cluster data stay for a look when the run failed.
		defer func() {
			if err == nil {
				_ = os.RemoveAll(f.workDir)
			} else {
				fmt.Fprintf(os.Stderr, "logs are in %s\n", f.workDir)
			}
		}()
	} else if err := os.MkdirAll(f.workDir, 0o755); err != nil {
		return err
	}
	rep := &perf.Report{Date: started.UTC().Format(time.RFC3339), Command: f.cmdline, Machine: perf.DescribeMachine()}
	rep.Settings = perf.Settings{Rounds: f.rounds, Duration: f.duration.String(), Rate: f.rate, LatencyConcurrency: f.latencyConc,
		Concurrency: f.conc, E2EObjects: f.e2eObjects, E2EConcurrency: f.e2eConc}
	if f.e2e && f.mixed {
		rep.Settings.MixedRequests, rep.Settings.MixedRate = f.mixedRequests, f.mixedRate
	}

	fixtures, err := perf.ReadFixtures(repo)
	if err != nil {
		return err
	}
	registry := route.Registry()
	if !f.e2e {
		// serve --dev reads no cluster, so it serves no cluster-state webhook.
		registry = slices.DeleteFunc(slices.Clone(registry), func(d route.Definition) bool { return !app.ServedWithoutCluster(d.Name) })
	}
	corpus, err := perf.Build(fixtures, registry, route.OptionsFromConfig(configv1alpha1.Default()))
	if err != nil {
		return err
	}
	rep.Corpus = perf.DescribeCorpus(corpus, len(fixtures))
	progress("corpus: %d reviews from %d fixtures, %d webhooks uncovered", len(corpus.Reviews), len(fixtures), len(corpus.Uncovered))

	// The serving certificate and the cluster state gatehouse reads.
	var cluster *localcluster.Cluster
	certDir := filepath.Join(f.workDir, "dev")
	ghArgs := []string{"serve", "--dev", "--dev-dir", certDir}
	if f.e2e {
		progress("starting the local control plane")
		cluster, err = localcluster.Start(ctx, localcluster.Options{Repo: repo, WorkDir: filepath.Join(f.workDir, "cluster"), Progress: progress})
		if err != nil {
			return err
		}
		defer func() {
			progress("stopping the local control plane")
			_ = cluster.Stop()
		}()
		certDir = cluster.CertDir
		ghArgs = []string{"serve", "--cert-dir", certDir, "--kubeconfig", cluster.Kubeconfig}
		if err := prepareCluster(ctx, cluster.Client, repo); err != nil {
			return err
		}
	}

	ghPort, probePort, floorPort, metricsPort, err := ports()
	if err != nil {
		return err
	}
	probe := "127.0.0.1:" + strconv.Itoa(probePort)
	// The metrics listener costs a review nothing (the counters count
	// whether anyone reads them); the mixed run reads the decisions there.
	ghMetrics := "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"
	ghArgs = append(ghArgs, "--host", "127.0.0.1", "--port", strconv.Itoa(ghPort), "--probe-address", probe,
		"--metrics-address", "127.0.0.1:"+strconv.Itoa(metricsPort), "--shutdown-delay", "0s")
	progress("starting %s %s", f.server, strings.Join(ghArgs, " "))
	gh, err := perf.StartProcess("gatehouse", f.server, ghArgs, ghPort, filepath.Join(f.workDir, "gatehouse.log"),
		perf.HTTPReady("http://"+probe+"/readyz"), time.Minute)
	if err != nil {
		return err
	}
	defer gh.Stop()
	client, err := perf.NewClient(filepath.Join(certDir, "ca.crt"), max(f.conc, f.latencyConc))
	if err != nil {
		return err
	}
	floorArgs := []string{"--cert-dir", certDir, "--port", strconv.Itoa(floorPort)}
	floorBase := "https://127.0.0.1:" + strconv.Itoa(floorPort)
	floor, err := perf.StartProcess("floor", f.floor, floorArgs, floorPort, filepath.Join(f.workDir, "floor.log"),
		perf.ReviewReady(client, floorBase, corpus.Reviews[0]), time.Minute)
	if err != nil {
		return err
	}
	defer floor.Stop()

	time.Sleep(2 * time.Second)
	if s, err := gh.Sample(); err == nil {
		rep.Memory.ServerIdleMiB = perf.MiB(s.RSS)
	}
	if s, err := floor.Sample(); err == nil {
		rep.Memory.FloorIdleMiB = perf.MiB(s.RSS)
	}
	if rep.Memory.CheckIdleMiB, err = checkRSS(ctx, f.gatehouse, repo, ""); err != nil {
		return err
	}

	if err := loopback(ctx, f, client, corpus, []*perf.Process{gh, floor}, rep); err != nil {
		return err
	}
	if cluster != nil && ctx.Err() == nil {
		sw, err := admissionSwitch(ctx, repo, cluster, gh, floor)
		if err != nil {
			return err
		}
		if err := endToEnd(ctx, f, repo, cluster, sw, rep); err != nil {
			return err
		}
		if f.mixed && ctx.Err() == nil {
			if err := mixed(ctx, f, cluster, sw, fixtures, ghMetrics, rep); err != nil {
				return err
			}
		}
		if f.scale && ctx.Err() == nil {
			if err := scale(ctx, f, repo, cluster, gh, rep); err != nil {
				return err
			}
		}
	}
	if f.benchFile != "" {
		fh, err := os.Open(f.benchFile)
		if err != nil {
			return err
		}
		rep.Bench, err = perf.ParseBench(fh)
		fh.Close()
		if err != nil {
			return err
		}
	}
	rep.Elapsed = time.Since(started).Round(time.Second).String()
	rep.Machine.LoadEnd = perf.LoadAverage()
	rep.Evaluate()
	if ctx.Err() != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the run hit its time limit (%s); later phases are missing", f.timeLimit))
	}
	fmt.Print(rep.Text())
	if f.jsonOut != "" {
		raw, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.jsonOut, append(raw, '\n'), 0o644); err != nil {
			return err
		}
	}
	if f.docOut != "" {
		if err := os.WriteFile(f.docOut, []byte(rep.Markdown()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func ports() (a, b, c, d int, err error) {
	var ps [4]int
	for i := range ps {
		if ps[i], err = perf.FreePort(); err != nil {
			return 0, 0, 0, 0, err
		}
	}
	return ps[0], ps[1], ps[2], ps[3], nil
}

// prepareCluster stands up what the end-to-end objects need: the operator
// namespace and live workloads component-overrides resolves against.
func prepareCluster(ctx context.Context, c client.Client, repo string) error {
	if err := perf.EnsureNamespace(ctx, c, "unbounded-system", nil); err != nil {
		return err
	}
	objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "00-operator-workloads.yaml"))
	if err != nil {
		return err
	}
	if failed := perf.CreateMany(ctx, c, objs, 1); failed > 0 {
		return fmt.Errorf("%d operator workloads could not be created", failed)
	}
	return nil
}

// loopback alternates gatehouse and the floor for f.rounds rounds.
func loopback(ctx context.Context, f flags, client *http.Client, corpus *perf.Corpus, servers []*perf.Process, rep *perf.Report) error {
	for _, s := range servers {
		progress("warming up %s", s.Name)
		if _, err := perf.RunLoad(ctx, client, s.Base, corpus.Reviews, perf.LoadOptions{Concurrency: f.conc, Requests: f.maxRequests, Duration: 2 * time.Second}); err != nil {
			return err
		}
	}
	rep.Loopback = map[string]*perf.ServerReport{}
	for _, s := range servers {
		rep.Loopback[s.Name] = perf.NewServerReport()
	}
	var byType [2][]perf.Review
	for _, r := range corpus.Reviews {
		if r.Type == route.Mutating {
			byType[1] = append(byType[1], r)
		} else {
			byType[0] = append(byType[0], r)
		}
	}
	bases := make([]string, len(servers))
	for i, s := range servers {
		bases[i] = s.Base
	}
	for r := range f.rounds {
		if ctx.Err() != nil {
			return nil
		}
		before := make([]perf.ProcSample, len(servers))
		for i, s := range servers {
			var err error
			if before[i], err = s.Sample(); err != nil {
				return err
			}
		}
		// Latency: fixed-rate runs alternating request by request between
		// the servers, each at f.rate; one over the validating reviews, one
		// over the mutating ones (a handful of the corpus, which would
		// otherwise leave their p99 to a few samples).
		var lats []*perf.LoadResult
		for _, part := range byType {
			if len(part) == 0 {
				continue
			}
			res, err := perf.RunInterleaved(ctx, client, bases, part, perf.LoadOptions{
				Concurrency: f.latencyConc, Rate: f.rate * float64(len(servers)), Requests: f.maxRequests, Duration: f.duration / 2})
			if err != nil {
				return err
			}
			if lats == nil {
				lats = res
				continue
			}
			for i := range lats {
				lats[i].Merge(res[i])
			}
		}
		var err error
		// Throughput: closed loop, one server after the other, the order
		// alternating by round.
		tps := make([]*perf.LoadResult, len(servers))
		for k := range servers {
			i := k
			if r%2 == 1 {
				i = len(servers) - 1 - k
			}
			if tps[i], err = perf.RunLoad(ctx, client, servers[i].Base, corpus.Reviews, perf.LoadOptions{Concurrency: f.conc, Requests: f.maxRequests, Duration: f.duration}); err != nil {
				return err
			}
		}
		for i, s := range servers {
			after, err := s.Sample()
			if err != nil {
				return err
			}
			rep.Loopback[s.Name].AddRound(lats[i], tps[i], before[i], after)
			sum := lats[i].All.Summarize()
			progress("round %d %-9s p50 %.2fms p99 %.2fms at %.0f/s; closed loop %.0f req/s; errors %d",
				r+1, s.Name, sum.P50, sum.P99, f.rate, tps[i].Throughput(), lats[i].ErrorCount()+tps[i].ErrorCount())
		}
	}
	return nil
}

// e2eNamespace holds the end-to-end runs' objects and the switch's probe;
// it opts in to the pod security webhooks.
const e2eNamespace = "perf-e2e"

// adminClient is the local control plane's admin without client-side rate
// limits.
func adminClient(cluster *localcluster.Cluster) (*rest.Config, client.Client, error) {
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = 1e6, 1e6
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	return cfg, c, err
}

// admissionSwitch reads gatehouse's webhook configurations, points them at
// gatehouse and at the floor, and returns the switch between the setups.
func admissionSwitch(ctx context.Context, repo string, cluster *localcluster.Cluster, gh, floor *perf.Process) (*perf.Switch, error) {
	const ns = e2eNamespace
	_, c, err := adminClient(cluster)
	if err != nil {
		return nil, err
	}
	if err := perf.EnsureNamespace(ctx, c, ns, map[string]string{"gatehouse.dev/security-defaults": "enabled"}); err != nil {
		return nil, err
	}
	hooks, err := perf.LiveWebhookConfigs(ctx, c, localcluster.WebhookConfigName, gh.Base)
	if err != nil {
		return nil, err
	}
	floorHooks, err := perf.LiveWebhookConfigs(ctx, c, localcluster.WebhookConfigName, floor.Base)
	if err != nil {
		return nil, err
	}
	policies, err := localcluster.ReadManifests(filepath.Join(repo, "e2e", "perf", "vap", "scope-sa.yaml"))
	if err != nil {
		return nil, err
	}
	probeObjs, err := localcluster.ReadManifests(filepath.Join(repo, "policies", "scope", "testdata", "fail", "pod-scope-empty-entry.yaml"))
	if err != nil || len(probeObjs) != 1 {
		return nil, fmt.Errorf("reading the probe fixture: %v", err)
	}
	probeObj := probeObjs[0]
	probeObj.SetNamespace(ns)
	annotations := probeObj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[perf.FloorProbeAnnotation] = "deny"
	probeObj.SetAnnotations(annotations)
	inProcess, err := perf.InProcessLayout(gh.Base, localcluster.Namespace, route.OptionsFromConfig(configv1alpha1.Default()), hooks)
	if err != nil {
		return nil, err
	}
	return &perf.Switch{Client: c, Webhooks: hooks, FloorWebhooks: floorHooks, Policies: policies, InProcess: inProcess, Probe: probeObj}, nil
}

func endToEnd(ctx context.Context, f flags, repo string, cluster *localcluster.Cluster, sw *perf.Switch, rep *perf.Report) error {
	const ns = e2eNamespace
	_, c, err := adminClient(cluster)
	if err != nil {
		return err
	}
	overrides, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "overrides-valid.yaml"))
	if err != nil || len(overrides) != 1 {
		return fmt.Errorf("reading the overrides example: %v", err)
	}
	life := &perf.Lifecycle{
		Client:         c,
		Namespace:      ns,
		Objects:        func(i int) *unstructured.Unstructured { return perf.LifecycleObject(ns, i) },
		Singleton:      overrides[0],
		SingletonCount: max(1, f.e2eObjects/8),
	}
	modes := []perf.Admission{perf.NoWebhooks, perf.Gatehouse, perf.Floor, perf.VAP, perf.InProcess}
	rep.E2E = map[perf.Admission]*perf.E2EReport{}
	for _, m := range modes {
		rep.E2E[m] = perf.NewE2EReport()
	}
	// A first, unmeasured pass warms the API server's caches and connections.
	for _, m := range modes {
		if err := sw.Set(ctx, m); err != nil {
			return err
		}
		life.Run(ctx, f.e2eObjects/4, f.e2eConc)
	}
	for r := range f.rounds {
		for k := range modes {
			m := modes[(k+r)%len(modes)]
			if ctx.Err() != nil {
				return nil
			}
			if err := sw.Set(ctx, m); err != nil {
				return err
			}
			res := life.Run(ctx, f.e2eObjects, f.e2eConc)
			rep.E2E[m].AddRound(res)
			s := res.Create.Summarize()
			progress("e2e round %d %-9s create p50 %.2fms p99 %.2fms (%d objects, %d errors) in %s",
				r+1, m, s.P50, s.P99, s.Count, len(res.Errors), res.Elapsed.Round(time.Millisecond))
		}
	}
	return sw.Set(ctx, perf.NoWebhooks)
}

// mixed runs the mixed workload in alternating rounds over no webhooks, the
// floor and gatehouse (not vap: its policies stand in for two contracts only,
// and the question here is what the rest of a cluster's traffic pays), then
// sends each kind alone with gatehouse registered to see what it reaches.
func mixed(ctx context.Context, f flags, cluster *localcluster.Cluster, sw *perf.Switch, fixtures []perf.Fixture, ghMetrics string, rep *perf.Report) error {
	started := time.Now()
	cfg, _, err := adminClient(cluster)
	if err != nil {
		return err
	}
	m, err := perf.NewMixed(cfg, localcluster.Scheme(), "perf-mixed", fixtures)
	if err != nil {
		return err
	}
	if err := m.Prepare(ctx, f.latencyConc); err != nil {
		return err
	}
	scraper, err := perf.NewAdmissionScraper(cfg, ghMetrics)
	if err != nil {
		return err
	}
	plan := perf.MixedPlan(m.Kinds, f.mixedRequests)
	// The rate sets the pace; the duration only stops a run whose API
	// server fell far behind it.
	o := perf.LoadOptions{Concurrency: f.latencyConc, Rate: f.mixedRate,
		Duration: 2*time.Duration(float64(len(plan))/f.mixedRate*float64(time.Second)) + 10*time.Second}
	modes := []perf.Admission{perf.NoWebhooks, perf.Floor, perf.Gatehouse}
	rep.Mixed = perf.NewMixedReport(m.Kinds)
	// A first, unmeasured tenth warms the new namespace's caches.
	for _, a := range modes {
		if ctx.Err() != nil {
			return nil
		}
		if err := sw.Set(ctx, a); err != nil {
			return err
		}
		if _, err := m.Run(ctx, plan[:max(1, len(plan)/10)], "warm-"+string(a), o); err != nil {
			return err
		}
	}
	for r := range f.rounds {
		for k := range modes {
			a := modes[(k+r)%len(modes)]
			if ctx.Err() != nil {
				return nil
			}
			if err := sw.Set(ctx, a); err != nil {
				return err
			}
			var before perf.AdmissionCounts
			if a == perf.Gatehouse {
				if before, err = scraper.Scrape(ctx); err != nil {
					return err
				}
			}
			res, err := m.Run(ctx, plan, fmt.Sprintf("%s-r%d", a, r+1), o)
			if err != nil {
				return err
			}
			if a == perf.Gatehouse {
				after, err := scraper.Scrape(ctx)
				if err != nil {
					return err
				}
				rep.Mixed.Reach.During.Add(after.Sub(before))
				for kind, n := range res.Sent {
					rep.Mixed.Reach.Sent[kind] += n
				}
			}
			rep.Mixed.Setup(a).AddRound(res)
			s := res.All.Summarize()
			progress("mixed round %d %-9s p50 %.2fms p99 %.2fms (%d requests, %d errors) in %s",
				r+1, a, s.P50, s.P99, s.Count, len(res.Errors), res.Elapsed.Round(time.Millisecond))
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sw.Set(ctx, perf.Gatehouse); err != nil {
		return err
	}
	perKind, err := perf.ReachByKind(ctx, m, reachRequests, scraper.Scrape)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	rep.Mixed.Reach.PerKind = perKind
	progress("mixed workload done in %s", time.Since(started).Round(time.Second))
	return sw.Set(ctx, perf.NoWebhooks)
}

// reachRequests are the requests of each kind sent alone to see what it
// reaches.
const reachRequests = 5

func scale(ctx context.Context, f flags, repo string, cluster *localcluster.Cluster, gh *perf.Process, rep *perf.Report) error {
	_, c, err := adminClient(cluster)
	if err != nil {
		return err
	}
	objs := perf.ScaleObjects(f.scaleNS, f.scaleDG, f.scaleHarness)
	progress("scale: creating %d namespaces, %d DependencyGroups, %d OperatorHarnesses", f.scaleNS, f.scaleDG, f.scaleHarness)
	start := time.Now()
	failed := perf.CreateMany(ctx, c, objs, 32)
	rep.Memory.ScaleObjects = fmt.Sprintf("%d namespaces, %d DependencyGroups, %d OperatorHarnesses", f.scaleNS, f.scaleDG, f.scaleHarness)
	rep.Memory.ScaleCreateSeconds = time.Since(start).Seconds()
	if failed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("scale: %d objects could not be created", failed))
	}
	progress("scale: created in %.0fs (%d failed); waiting for gatehouse's caches", time.Since(start).Seconds(), failed)
	// gatehouse has cached them all once its RSS stops growing.
	var last int64
	for i := 0; i < 60 && ctx.Err() == nil; i++ {
		time.Sleep(time.Second)
		s, err := gh.Sample()
		if err != nil {
			return err
		}
		if last > 0 && s.RSS-last < last/100 && i >= 5 {
			break
		}
		last = s.RSS
	}
	s, err := gh.Sample()
	if err != nil {
		return err
	}
	rep.Memory.ServerScaleMiB, rep.Memory.ServerScalePeakMiB = perf.MiB(s.RSS), perf.MiB(s.PeakRSS)
	state := filepath.Join(f.workDir, "scale-state.yaml")
	if err := writeYAML(state, objs); err != nil {
		return err
	}
	rep.Memory.CheckScaleMiB, err = checkRSS(ctx, f.gatehouse, repo, state)
	return err
}

func writeYAML(path string, objs []*unstructured.Unstructured) error {
	var b strings.Builder
	for _, obj := range objs {
		raw, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(raw)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// checkRSS runs `gatehouse check` on the examples (on the DependencyGroup
// examples against state, when state is set) and returns its peak RSS in
// MiB.
func checkRSS(ctx context.Context, bin, repo, state string) (float64, error) {
	args := []string{"check", "-o", "json"}
	if state != "" {
		args = append(args, "-f", filepath.Join(repo, "deploy", "examples", "dependencygroups.yaml"), "--state", state)
	} else {
		args = append(args, "-f", filepath.Join(repo, "deploy", "examples"))
	}
	return perf.PeakRSSOf(ctx, bin, args, []int{0, 1})
}
