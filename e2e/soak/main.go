// Command soak is `make soak`: on the local control plane it sends reviews
// through the API server to gatehouse at a fixed rate for a fixed time while
// cert-manager re-issues the serving certificate several times, and checks
// that no review failed, that gatehouse's resident memory grew by less than
// a bound and that its goroutine count stayed flat. gatehouse runs as its
// own process (the binary built from the repository), so its memory and
// goroutines are measured alone. It prints a summary and exits 1 when any
// check fails.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

type config struct {
	repo           string
	duration       time.Duration
	rate           int
	workers        int
	rotations      int
	warmup         time.Duration
	sampleEvery    time.Duration
	maxRSSGrowth   float64
	goroutineSlack int
}

func main() {
	var c config
	flag.StringVar(&c.repo, "repo", "..", "gatehouse repository root")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "how long reviews are sent")
	flag.IntVar(&c.rate, "rate", 20, "reviews per second")
	flag.IntVar(&c.workers, "workers", 8, "reviews in flight at most")
	flag.IntVar(&c.rotations, "rotations", 3, "serving certificate re-issues during the run (at least)")
	flag.DurationVar(&c.warmup, "warmup", 0, "time before the memory and goroutine baseline is taken (default: a tenth of the duration, at most 1m)")
	flag.DurationVar(&c.sampleEvery, "sample-every", 10*time.Second, "how often memory and goroutines are sampled")
	flag.Float64Var(&c.maxRSSGrowth, "max-rss-growth", 0.10, "largest allowed growth of resident memory after the warm-up, as a fraction")
	flag.IntVar(&c.goroutineSlack, "goroutine-slack", 10, "goroutines the final count may exceed the baseline by (reviews in flight come and go)")
	flag.Parse()
	if c.warmup == 0 {
		c.warmup = min(c.duration/10, time.Minute)
	}
	if c.rate <= 0 || c.workers <= 0 || c.rotations < 0 || c.duration <= c.warmup {
		fmt.Fprintln(os.Stderr, "soak: --rate and --workers must be positive and --duration longer than --warmup")
		os.Exit(2)
	}
	ok, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(c config) (bool, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "gatehouse-soak-")
	if err != nil {
		return false, err
	}
	// controller-runtime (cainjector runs in this process) logs to a file.
	logFile, err := os.Create(filepath.Join(work, "soak-components.log"))
	if err != nil {
		return false, err
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	start := time.Now()
	progress := func(format string, args ...any) {
		fmt.Printf("[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	progress("building gatehouse into %s", work)
	binary, err := localcluster.BuildGatehouse(c.repo, work)
	if err != nil {
		return false, err
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		Repo: c.repo, WorkDir: work, Progress: progress, GatehouseBinary: binary,
	})
	if err != nil {
		return false, fmt.Errorf("%w (logs in %s)", err, work)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the local cluster:", err)
		}
	}()
	// The load has a client of its own without client-go's default rate
	// limit (5/s), so the rate is the soak's, not the client's.
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = float32(4*c.rate), 4*c.rate
	reviewer, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		return false, err
	}
	reviews, err := prepare(ctx, reviewer)
	if err != nil {
		return false, err
	}

	runCtx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	progress("sending %d reviews/s for %s (%d kinds, %d in flight at most); %d certificate re-issues",
		c.rate, c.duration, len(reviews), c.workers, c.rotations)
	load := startLoad(runCtx, reviewer, reviews, c.rate, c.workers)
	samples := startSampling(runCtx, cluster.Gatehouse, c.sampleEvery)
	rotations := rotate(runCtx, cluster, c, progress)
	<-runCtx.Done()
	load.wait()
	<-samples.done
	if ctx.Err() != nil {
		return false, errors.New("interrupted")
	}
	var componentErrs []error
	for drained := false; !drained; {
		select {
		case err := <-cluster.Errors:
			componentErrs = append(componentErrs, err)
		default:
			drained = true
		}
	}
	return report(c, load, samples, rotations, componentErrs, cluster.Gatehouse), nil
}

// review is one kind of request the soak sends, with how its answer is
// judged.
type review struct {
	name   string
	object func(i int64) client.Object
	// denial is the webhook expected to deny it ("" when it must pass).
	denial string
}

// prepare creates the namespaces and objects the reviews need and returns
// the mix: an allowed and a denied PVC (secret-scope), a pod in an opted-in
// namespace (pod-security-defaults, then every pod webhook), and an allowed
// and a denied DependencyGroup (dependency-group, from the informer cache).
func prepare(ctx context.Context, c client.Client) ([]review, error) {
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "soak"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "soak-secure", Labels: map[string]string{"gatehouse.dev/security-defaults": "enabled"}}},
	} {
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "default"}}
		if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	owner := &helmeticav1.DependencyGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "soak-owner"},
		Spec:       helmeticav1.DependencyGroupSpec{CRDs: []helmeticav1.CRDRef{{Name: "widgets.soak.example.com"}}},
	}
	if err := c.Create(ctx, owner); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	pvc := func(i int64, scope string) client.Object {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "soak", Name: fmt.Sprintf("soak-%d", i), Annotations: map[string]string{
				"secrets.kubedoop.dev/class": "tls", "secrets.kubedoop.dev/scope": scope,
			}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
			},
		}
	}
	group := func(i int64, crd string) client.Object {
		return &helmeticav1.DependencyGroup{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("soak-%d", i)},
			Spec:       helmeticav1.DependencyGroupSpec{CRDs: []helmeticav1.CRDRef{{Name: crd}}},
		}
	}
	return []review{
		{name: "pvc-allowed", object: func(i int64) client.Object { return pvc(i, "node,pod") }},
		{name: "pvc-denied", object: func(i int64) client.Object { return pvc(i, "pod,,node") }, denial: "secret-scope"},
		{name: "pod-defaulted", object: func(i int64) client.Object {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "soak-secure", Name: fmt.Sprintf("soak-%d", i)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			}
		}},
		{name: "group-allowed", object: func(i int64) client.Object { return group(i, fmt.Sprintf("w%d.soak.example.com", i)) }},
		{name: "group-denied", object: func(i int64) client.Object { return group(i, "widgets.soak.example.com") }, denial: "dependency-group"},
	}, nil
}

// load sends reviews at a fixed rate and counts the outcomes.
type load struct {
	sent, failed, late atomic.Int64
	mu                 sync.Mutex
	perKind            map[string]int64
	failures           map[string]int64 // by kind and reason, no object content
	wg                 sync.WaitGroup
}

func (l *load) wait() { l.wg.Wait() }

func startLoad(ctx context.Context, c client.Client, reviews []review, rate, workers int) *load {
	l := &load{perKind: map[string]int64{}, failures: map[string]int64{}}
	jobs := make(chan int64)
	for range workers {
		l.wg.Go(func() {
			for i := range jobs {
				r := reviews[int(i)%len(reviews)]
				// A review in flight when the run ends still completes.
				reqCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := c.Create(reqCtx, r.object(i), client.DryRunAll)
				cancel()
				l.sent.Add(1)
				l.mu.Lock()
				l.perKind[r.name]++
				if reason := judge(r, err); reason != "" {
					l.failed.Add(1)
					l.failures[r.name+": "+reason]++
				}
				l.mu.Unlock()
			}
		})
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(jobs)
		// Review i is due at start + i/rate: a late timer or a busy moment
		// is caught up, so the rate holds on average.
		start, interval := time.Now(), time.Second/time.Duration(rate)
		for i := int64(0); ; i++ {
			due := start.Add(time.Duration(i) * interval)
			if wait := time.Until(due); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			select {
			case <-ctx.Done():
				return
			case jobs <- i:
			}
			if time.Since(due) > time.Second {
				l.late.Add(1) // every worker was busy for a while
			}
		}
	}()
	return l
}

// judge returns why a review's answer is wrong, or "".
func judge(r review, err error) string {
	if r.denial == "" {
		if err != nil {
			return "refused: " + reason(err)
		}
		return ""
	}
	var status *apierrors.StatusError
	if !errors.As(err, &status) {
		return "not denied: " + reason(err)
	}
	// The answering entry is the webhook's own or its combined group's;
	// the causes name the webhook that denied.
	s := status.Status()
	denied := s.Code == 422 && s.Details != nil && len(s.Details.Causes) > 0 && strings.Contains(s.Message, "denied the request")
	for _, c := range s.Details.Causes {
		denied = denied && strings.HasSuffix(c.Message, "(gatehouse "+r.denial+")")
	}
	if !denied {
		return "wrong answer: " + reason(err)
	}
	return ""
}

// reason reduces an error to its kind (the messages carry names and
// codes, never values, but keep the summary short).
func reason(err error) string {
	if err == nil {
		return "admitted"
	}
	msg := err.Error()
	if len(msg) > 160 {
		msg = msg[:160] + "..."
	}
	return msg
}

// sample is one reading of gatehouse's process.
type sample struct {
	at         time.Duration
	rssBytes   float64
	goroutines float64
}

type sampling struct {
	mu      sync.Mutex
	samples []sample
	errs    []string
	done    chan struct{}
}

func startSampling(ctx context.Context, g *localcluster.Gatehouse, every time.Duration) *sampling {
	s := &sampling{done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			smp, err := read(g)
			s.mu.Lock()
			if err != nil {
				s.errs = append(s.errs, err.Error())
			} else {
				smp.at = time.Since(start)
				s.samples = append(s.samples, smp)
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

// read takes resident memory from /proc/<pid>/status and the goroutine
// count from gatehouse's own go_goroutines metric.
func read(g *localcluster.Gatehouse) (sample, error) {
	var s sample
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(g.Pid), "status"))
	if err != nil {
		return s, err
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return s, fmt.Errorf("VmRSS: %w", err)
			}
			s.rssBytes = kb * 1024
		}
	}
	raw, err := g.Metrics()
	if err != nil {
		return s, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return s, err
	}
	mf, ok := families["go_goroutines"]
	if !ok || len(mf.GetMetric()) == 0 {
		return s, errors.New("gatehouse exports no go_goroutines")
	}
	s.goroutines = mf.GetMetric()[0].GetGauge().GetValue()
	if s.rssBytes == 0 {
		return s, errors.New("no VmRSS in /proc status")
	}
	return s, nil
}

type rotation struct {
	at, took time.Duration
	err      error
}

// rotate has cert-manager re-issue the serving certificate (what `cmctl
// renew` does) at evenly spaced times, and waits each time until gatehouse
// serves the new certificate.
func rotate(ctx context.Context, cluster *localcluster.Cluster, c config, progress func(string, ...any)) <-chan []rotation {
	out := make(chan []rotation, 1)
	start := time.Now()
	go func() {
		var done []rotation
		defer func() { out <- done }()
		for i := 1; i <= c.rotations; i++ {
			at := c.duration * time.Duration(i) / time.Duration(c.rotations+1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(at))):
			}
			t0 := time.Now()
			err := reissue(ctx, cluster)
			r := rotation{at: time.Since(start), took: time.Since(t0), err: err}
			done = append(done, r)
			if err != nil {
				progress("certificate re-issue %d failed: %v", i, err)
			} else {
				progress("certificate re-issue %d: gatehouse served the new certificate after %.1fs", i, r.took.Seconds())
			}
		}
	}()
	return out
}

func reissue(ctx context.Context, cluster *localcluster.Cluster) error {
	before, err := servedCert(cluster.Gatehouse.Port)
	if err != nil {
		return err
	}
	var crt cmapi.Certificate
	if err := cluster.Client.Get(ctx, types.NamespacedName{Namespace: localcluster.Namespace, Name: localcluster.ServingCert}, &crt); err != nil {
		return err
	}
	crt.Status.Conditions = append(crt.Status.Conditions, cmapi.CertificateCondition{
		Type: cmapi.CertificateConditionIssuing, Status: cmmeta.ConditionTrue,
		Reason: "ManuallyTriggered", Message: "soak rotation", ObservedGeneration: crt.Generation,
		LastTransitionTime: &metav1.Time{Time: time.Now()},
	})
	if err := cluster.Client.Status().Update(ctx, &crt); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if now, err := servedCert(cluster.Gatehouse.Port); err == nil && !bytes.Equal(now, before) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return errors.New("gatehouse did not serve a new certificate within 2 minutes")
}

func servedCert(port int) ([]byte, error) {
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

// report prints the summary and returns whether every check passed.
func report(c config, l *load, s *sampling, rotationsCh <-chan []rotation, componentErrs []error, g *localcluster.Gatehouse) bool {
	rotations := <-rotationsCh
	ok := true
	check := func(pass bool, format string, args ...any) {
		mark := "ok  "
		if !pass {
			mark, ok = "FAIL", false
		}
		fmt.Printf("  %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	fmt.Printf("\nsoak summary (%s at %d reviews/s, gatehouse pid %d, log %s)\n", c.duration, c.rate, g.Pid, g.Log)
	kinds := make([]string, 0, len(l.perKind))
	for k := range l.perKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, l.perKind[k]))
	}
	fmt.Printf("  reviews: %d sent (%s), %.1f/s achieved, %d sent over 1s late\n",
		l.sent.Load(), strings.Join(parts, ", "), float64(l.sent.Load())/c.duration.Seconds(), l.late.Load())
	check(l.failed.Load() == 0, "failed reviews: %d", l.failed.Load())
	reasons := make([]string, 0, len(l.failures))
	for r := range l.failures {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return l.failures[reasons[i]] > l.failures[reasons[j]] })
	for i, r := range reasons {
		if i == 10 {
			fmt.Printf("         ... and %d more distinct failures\n", len(reasons)-10)
			break
		}
		fmt.Printf("         %d x %s\n", l.failures[r], r)
	}
	expected := int64(c.duration.Seconds()) * int64(c.rate)
	check(l.sent.Load() >= expected*95/100, "rate held: %d of %d expected reviews sent", l.sent.Load(), expected)

	good := 0
	for i, r := range rotations {
		if r.err == nil {
			good++
			fmt.Printf("         re-issue %d at %s: served after %.1fs\n", i+1, r.at.Round(time.Second), r.took.Seconds())
		} else {
			fmt.Printf("         re-issue %d at %s: %v\n", i+1, r.at.Round(time.Second), r.err)
		}
	}
	check(good >= c.rotations, "certificate re-issues served: %d (want at least %d)", good, c.rotations)

	s.mu.Lock()
	defer s.mu.Unlock()
	var base, final []sample
	for _, smp := range s.samples {
		if smp.at >= c.warmup && len(base) < 3 {
			base = append(base, smp)
		}
	}
	if n := len(s.samples); n >= 3 {
		final = s.samples[n-3:]
	}
	check(len(s.errs) == 0, "sampling errors: %d %v", len(s.errs), s.errs[:min(3, len(s.errs))])
	if len(base) < 3 || len(final) < 3 || final[0].at <= base[len(base)-1].at {
		check(false, "too few samples after the %s warm-up (%d in all): run longer or sample more often", c.warmup, len(s.samples))
	} else {
		rss0, rss1 := mean(base, func(x sample) float64 { return x.rssBytes }), mean(final, func(x sample) float64 { return x.rssBytes })
		g0, g1 := mean(base, func(x sample) float64 { return x.goroutines }), mean(final, func(x sample) float64 { return x.goroutines })
		maxRSS, maxG := 0.0, 0.0
		for _, smp := range s.samples {
			maxRSS, maxG = max(maxRSS, smp.rssBytes), max(maxG, smp.goroutines)
		}
		growth := rss1/rss0 - 1
		check(growth < c.maxRSSGrowth, "resident memory: %.1f MiB after warm-up -> %.1f MiB at the end (%+.1f%%, bound %.0f%%), peak %.1f MiB",
			rss0/(1<<20), rss1/(1<<20), 100*growth, 100*c.maxRSSGrowth, maxRSS/(1<<20))
		check(g1 <= g0+float64(c.goroutineSlack), "goroutines: %.0f after warm-up -> %.0f at the end (slack %d), peak %.0f",
			g0, g1, c.goroutineSlack, maxG)
		fmt.Printf("         %d samples every %s; warm-up %s\n", len(s.samples), c.sampleEvery, c.warmup)
	}
	check(len(componentErrs) == 0, "in-process component errors: %d %v", len(componentErrs), componentErrs)
	if ok {
		fmt.Println("PASS")
	} else {
		fmt.Println("FAIL")
	}
	return ok
}

func mean(xs []sample, f func(sample) float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += f(x)
	}
	return sum / float64(len(xs))
}
