package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

type auditFlags struct {
	kube     kubeFlags
	config   string
	output   string
	qps      float32
	burst    int
	pageSize int64
	exclude  []string
	syncWait time.Duration
	modes    modeFlags
}

func newAudit() *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:   "audit [--kubeconfig FILE] [--context NAME] [-o text|json|junit|sarif]",
		Short: "Review every object a live cluster stores through the webhooks, as check does",
		Long: `audit reads a live cluster (read-only: get and list, paged, rate-limited) and reviews every
stored object of every resource an enabled webhook intercepts, including the product custom
resources the cluster serves, as a CREATE through the same review chain as check, against the
cluster's state (namespaces, harnesses, dependency groups, workloads). It prints what check prints,
for the objects with something to say, and a summary; a progress line goes to stderr when it is
a terminal.

Exit status: 0 when every object would be allowed, 1 when any would be denied, 2 for bad usage,
an unreachable cluster or a resource it may not list.`,
		Example: `  # the cluster of the current kubeconfig context
  gatehouse audit

  # another context, as the modes of the next rollout step would decide
  gatehouse audit --context staging --default-mode Audit --mode secret-scope=Enforce

  # for code scanning
  gatehouse audit --kubeconfig ~/.kube/prod -o sarif > audit.sarif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAudit(cmd, f) },
	}
	fl := cmd.Flags()
	f.kube.register(cmd, "the cluster")
	fl.StringVar(&f.config, "config", "", "server configuration file, as for serve")
	fl.StringVarP(&f.output, "output", "o", "text", "text, json, junit (JUnit XML) or sarif (SARIF 2.1.0)")
	fl.Float32Var(&f.qps, "qps", 20, "API requests per second (client-side token bucket)")
	fl.IntVar(&f.burst, "burst", 40, "API request burst")
	fl.Int64Var(&f.pageSize, "page-size", audit.DefaultPageSize, "most objects per list call (pages are also sized by the bytes of their objects)")
	fl.StringSliceVar(&f.exclude, "exclude-namespace", nil, "namespaces never audited (default: gatehouse's own, "+DefaultNamespace+", and the configuration's exemptions.namespaces, which the webhook configurations exclude)")
	fl.DurationVar(&f.syncWait, "sync-timeout", 2*time.Minute, "how long to wait for the cluster state caches")
	f.modes.register(cmd)
	return cmd
}

// auditFormats writes audit's report in each -o format. Every format of
// check belongs here too, with the same results: check's writers take the
// documents, the objects and the results, and so does an audit writer.
var auditFormats = map[string]func(w io.Writer, docs []Document, objects []ObjectOut, results []CheckResult, summary auditSummary) error{
	"text": func(w io.Writer, docs []Document, _ []ObjectOut, results []CheckResult, s auditSummary) error {
		writeTextBlocks(w, docs, results)
		// Only the objects with something to say are reported: the line
		// counts every object audited.
		reported := summarize(docs, results)
		line := fmt.Sprintf("%d %s audited in %d %s, %d denied", s.objects, policies.Plural(s.objects, "object"),
			s.resources, policies.Plural(s.resources, "resource"), reported.Denied)
		if reported.Warned > 0 {
			line += fmt.Sprintf(", %d admitted only because a webhook is in Warn or Audit or an exception excused it", reported.Warned)
		}
		if len(s.exceptions) > 0 {
			fmt.Fprintln(w)
		}
		for _, e := range s.exceptions {
			fmt.Fprintf(w, "exception %s: %s, %d %s excused, expires %s\n", e.Name, e.State, e.Excused, policies.Plural(e.Excused, "finding"),
				e.Expires.UTC().Format(time.RFC3339))
		}
		_, err := fmt.Fprintf(w, "\n%s, %d with warnings or patches\n", line, reported.Allowed)
		return err
	},
	"json": func(w io.Writer, docs []Document, objects []ObjectOut, results []CheckResult, _ auditSummary) error {
		return writeJSON(w, docs, objects, results)
	},
	FormatJUnit: func(w io.Writer, docs []Document, _ []ObjectOut, results []CheckResult, _ auditSummary) error {
		return writeJUnit(w, docs, results)
	},
	FormatSARIF: func(w io.Writer, docs []Document, _ []ObjectOut, results []CheckResult, _ auditSummary) error {
		return writeSARIF(w, docs, results)
	},
}

type auditSummary struct {
	objects, resources int
	// exceptions are the cluster's exceptions and what each did in this
	// audit (Used, Unused, Expired, Disabled, Invalid).
	exceptions []exception.Status
}

func runAudit(cmd *cobra.Command, f auditFlags) error {
	write, ok := auditFormats[f.output]
	if !ok {
		return usageError("%v", configv1alpha1.OneOf("-o", f.output, outputFormats...))
	}
	if f.qps <= 0 || f.burst < 1 || f.pageSize < 1 {
		return usageError("--qps, --burst and --page-size must be positive")
	}
	cfg, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	if err := f.modes.apply(cmd, &cfg); err != nil {
		return err
	}
	rc, err := f.kube.restConfig()
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst, rc.UserAgent = f.qps, f.burst, "gatehouse-audit"
	pager, err := audit.NewPager(rc)
	if err != nil {
		return usageError("%v", err)
	}
	pager.PageSize = f.pageSize
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return usageError("%v", err)
	}
	// An unreachable cluster fails here, at once, not after the caches'
	// sync timeout.
	if _, err := disc.ServerVersion(); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("cluster unreachable: %w", err)}
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	opts := route.OptionsFromConfig(cfg)
	overrides := ""
	if cfg.Enabled("component-overrides") {
		overrides = cfg.Overrides.Namespace
	}
	state, workloads, err := startClusterState(ctx, rc, slices.ContainsFunc(stateWebhooks, cfg.Enabled), overrides, f.syncWait)
	if err != nil {
		return err
	}
	if state != nil {
		opts.ClusterState, opts.Namespaces = state, state
	}
	if workloads != nil {
		opts.Workloads = workloads
	}
	exceptions, err := startExceptions(ctx, rc, cfg, f.syncWait)
	if err != nil {
		return err
	}
	opts.Exceptions = exceptions
	excusedBy := map[string]int{}
	scanner := audit.NewScanner(pager, disc, webhooks.Build(opts, cfg.Enabled), opts)
	scanner.SkipNamespaces = f.exclude
	if !cmd.Flags().Changed("exclude-namespace") {
		scanner.SkipNamespaces = opts.ExemptNamespaces(DefaultNamespace)
	}
	targets, err := scanner.Targets()
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("cluster unreachable: %w", err)}
	}
	stderr := cmd.ErrOrStderr()
	progress := terminal(stderr)
	if progress {
		scanner.Progress = func(t audit.Target, n int) {
			fmt.Fprintf(stderr, "\r\033[Kaudit: %s: %d %s", t.GVR.GroupResource(), n, policies.Plural(n, "object"))
		}
	}
	var docs []Document
	var objects []ObjectOut
	results := []CheckResult{}
	denied := false
	stats, err := scanner.Scan(ctx, targets, func(r audit.Result) error {
		ref := ObjectRef{APIVersion: r.Object.APIVersion, Kind: r.Object.Kind, Namespace: r.Object.Namespace, Name: r.Object.Name}
		doc := len(docs)
		var rs []CheckResult
		report := false
		r.CountExcused(excusedBy)
		for _, d := range r.Decisions {
			res := resultOf(ref, d, doc)
			report = report || !res.Allowed || len(res.Findings) > 0 || len(res.Warnings) > 0 || len(res.Patch) > 0 || res.Error != ""
			denied = denied || !res.Allowed
			rs = append(rs, res)
		}
		if !report {
			return nil // only what has something to say is kept: memory stays bounded
		}
		source := r.Object.Resource.GroupResource().String()
		docs = append(docs, Document{Source: source, Index: -1, Item: -1, Object: map[string]any{
			"apiVersion": ref.APIVersion, "kind": ref.Kind, "metadata": map[string]any{"namespace": ref.Namespace, "name": ref.Name}}})
		objects = append(objects, ObjectOut{Object: ref, Source: source, Defaulted: []string{}})
		results = append(results, rs...)
		return nil
	})
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("audit: %w", err)}
	}
	if err := write(cmd.OutOrStdout(), docs, objects, results, auditSummary{objects: stats.Objects, resources: len(targets),
		exceptions: exceptions.Exceptions().Statuses(time.Now(), excusedBy)}); err != nil {
		return err
	}
	for _, t := range stats.Forbidden {
		// A partial audit must never read as a clean one.
		fmt.Fprintf(stderr, "gatehouse: not allowed to list %s: its objects were not audited\n", t.GVR.GroupResource())
	}
	if denied {
		return &exitError{code: exitDenied}
	}
	if len(stats.Forbidden) > 0 {
		return &exitError{code: exitUsage}
	}
	return nil
}

// startExceptions watches the cluster's exceptions, as serve does, and
// waits until the view has synced (or found no exception CRDs).
func startExceptions(ctx context.Context, rc *rest.Config, cfg configv1alpha1.ServerConfig, wait time.Duration) (*clusterstate.CachedExceptions, error) {
	ex, err := clusterstate.NewCachedExceptions(rc, route.ExceptionIndexOptions(cfg.Exceptions), logr.Discard())
	if err != nil {
		return nil, usageError("%v", err)
	}
	go func() { _ = ex.Start(ctx) }()
	deadline := time.Now().Add(wait)
	for !ex.Synced() {
		if time.Now().After(deadline) {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("the exceptions did not sync within %s (is the cluster reachable?)", wait)}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return ex, nil
}

// startClusterState starts the informer caches the state-reading webhooks
// read, as serve does: the cluster state (namespaces, harnesses,
// dependency groups, roles) when state is set, the workloads of
// workloadsNamespace unless it is empty; and waits until they have synced:
// a verdict against a partial view would be wrong. audit and check
// --cluster read the cluster through it.
func startClusterState(ctx context.Context, rc *rest.Config, state bool, workloadsNamespace string, wait time.Duration) (*clusterstate.CachedState, *clusterstate.CachedWorkloads, error) {
	var synced []func() bool
	var cached *clusterstate.CachedState
	var workloads *clusterstate.CachedWorkloads
	if state {
		s, err := clusterstate.NewCachedState(rc)
		if err != nil {
			return nil, nil, usageError("%v", err)
		}
		go func() { _ = s.Start(ctx) }()
		cached = s
		synced = append(synced, func() bool { return s.Ready(nil) == nil })
	}
	if workloadsNamespace != "" {
		w, err := clusterstate.NewCachedWorkloads(rc, workloadsNamespace)
		if err != nil {
			return nil, nil, usageError("%v", err)
		}
		go func() { _ = w.Start(ctx) }()
		workloads = w
		synced = append(synced, w.Synced)
	}
	deadline := time.Now().Add(wait)
	for _, ok := range synced {
		for !ok() {
			if time.Now().After(deadline) {
				return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("the cluster state did not sync within %s (is the cluster reachable?)", wait)}
			}
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return cached, workloads, nil
}

// terminal reports whether w is a terminal (progress is drawn only there).
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
