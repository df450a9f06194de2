package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/certs"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

type serveFlags struct {
	modes          modeFlags
	role           string
	config         string
	dev            bool
	devDir         string
	disable        []string
	logLevel       int
	shutdownDelay  time.Duration
	certPoll       time.Duration
	port           int
	host           string
	certDir        string
	tlsMinVersion  string
	enableHTTP2    bool
	profiling      bool
	probeAddress   string
	metricsAddress string
	kube           kubeFlags
	reconcileDG    bool
	// manageLabels runs controllers.Selections
	// (harness.manageSelections).
	manageLabels bool
	leaderNS     string
	// namespace is the namespace gatehouse runs in, which the webhook
	// configurations exclude (manifests --namespace).
	namespace string
	// writeConfigs runs controllers.WebhookConfigurations: the leader
	// writes the entries the configuration renders, through service (as
	// serviceAccount) or webhookURL.
	writeConfigs   bool
	printConfigs   bool
	configsEvery   time.Duration
	policyOwner    string
	service        string
	serviceAccount string
	webhookURL     string
}

// managedConfigs is the writer of the webhook configurations
// (--manage-webhook-configurations, or what --print-webhook-configurations
// prints) as the flags and cfg make it, without its clients and CA file,
// which EnableControllers gives it; nil when neither flag is set.
func (f *serveFlags) managedConfigs(cfg configv1alpha1.ServerConfig) *controllers.WebhookConfigurations {
	if !f.writeConfigs && !f.printConfigs {
		return nil
	}
	return &controllers.WebhookConfigurations{
		Manifests: route.ManifestOptions{Namespace: f.namespace, Service: f.service, ServiceAccount: f.serviceAccount, URL: f.webhookURL,
			Layout: route.LayoutCombined, Options: route.OptionsFromConfig(cfg)},
		Interval: f.configsEvery, PolicyOwner: f.policyOwner,
	}
}

// stateWebhooks read the cluster-state caches (objects by index, namespace
// labels); any of them enabled starts the caches.
var stateWebhooks = []string{"dependency-group", "crd-source", "harness", "harness-proxy", "harness-labels", "harness-labels-guard"}

// ServedWithoutCluster reports whether `serve` without cluster access (serve
// --dev) serves the webhook named name: every webhook but stateWebhooks.
func ServedWithoutCluster(name string) bool { return !slices.Contains(stateWebhooks, name) }

func newServe() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the admission webhooks over HTTPS",
		Long: `Serve every enabled webhook of the registry at its path over HTTPS, with /healthz and /readyz
on the probe address and Prometheus metrics on the metrics address. The serving certificate is read
from --cert-dir (tls.crt, tls.key) and reloaded when the files change. --dev creates a self-signed
CA and a certificate for localhost instead, and prints where.

--role=audit runs the background audit instead, and nothing else: no webhook listener, no
certificate, probes and metrics only. The audit reads every stored object, so it runs in a process
(and a Deployment) of its own, whose memory never touches the replicas that serve admission
(docs/audit.md); the webhook role never audits.

The webhooks that read cluster state (namespaces, harnesses, dependency groups, workloads) read
the cluster --kubeconfig and --context name; without either, the in-cluster configuration in a
pod (serve --dev reads no cluster unless given one).`,
		Example: `  # on a laptop: a self-signed CA and certificate for localhost, printed
  gatehouse serve --dev

  # as deploy/ runs it
  gatehouse serve --cert-dir /tls --config /etc/gatehouse/config.yaml --reconcile-dependencygroups

  # against the state of a kind cluster, every webhook recording instead of denying
  gatehouse serve --dev --context kind-gatehouse --default-mode Audit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(f.config)
			if err != nil {
				return err
			}
			if err := f.apply(cmd, &cfg); err != nil {
				return err
			}
			if f.printConfigs {
				return printWebhookConfigurations(cmd.OutOrStdout(), f.managedConfigs(cfg))
			}
			log := newLogger(cmd.ErrOrStderr(), f.logLevel)
			ctrl.SetLogger(log)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			switch f.role {
			case RoleWebhook:
			case RoleAudit:
				return runAuditRole(ctx, cmd, f, cfg, log)
			default:
				return usageError("--role must be %s or %s, not %q", RoleWebhook, RoleAudit, f.role)
			}
			if f.dev {
				dir := f.devDir
				if dir == "" {
					if dir, err = os.MkdirTemp("", "gatehouse-dev-"); err != nil {
						return err
					}
				}
				bundle, err := certs.Dev(dir, certs.DevHosts(), 30*24*time.Hour)
				if err != nil {
					return fmt.Errorf("bootstrapping development certificates: %w", err)
				}
				cfg.Serving.CertDir = bundle.Dir
				fmt.Fprintf(cmd.OutOrStdout(), "development certificates in %s\nCA bundle: %s\n", bundle.Dir, bundle.CAFile)
			}
			if cfg.Serving.CertDir == "" {
				return usageError("serve needs --cert-dir (or serving.certDir in the config, or --dev)")
			}
			kube := f.kube
			if !f.kube.given(cmd) && f.dev {
				kube.kubeconfig = noCluster // --dev never reads whatever cluster the environment points at
			}
			srv, err := NewServer(cfg, log, f.shutdownDelay, f.certPoll, kube, f.namespace)
			if err != nil {
				return err
			}
			if err := srv.EnableControllers(f.leaderNS, f.reconcileDG, cfg.Harness.ManageSelections, f.managedConfigs(cfg)); err != nil {
				srv.probeListener.Close() // Run, which owns it from here on, never ran
				return err
			}
			return srv.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.role, "role", RoleWebhook, RoleWebhook+": serve the webhooks and run the leader-elected controllers, never the audit; "+
		RoleAudit+": run the background audit alone (audit.interval), in a Deployment of its own")
	fl.StringVar(&f.config, "config", "", "server configuration file (apiVersion "+configv1alpha1.APIVersion+", kind "+configv1alpha1.Kind+")")
	fl.BoolVar(&f.dev, "dev", false, "bootstrap a self-signed CA and a serving certificate for localhost, and serve with it")
	fl.StringVar(&f.devDir, "dev-dir", "", "directory for --dev certificates (default: a new temporary directory)")
	fl.StringSliceVar(&f.disable, "disable-webhook", nil, "switch off a webhook by name (repeatable)")
	fl.IntVar(&f.logLevel, "v", 0, "log verbosity")
	fl.DurationVar(&f.shutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, report not-ready for this long before draining, so endpoints stop routing to this replica first")
	fl.DurationVar(&f.certPoll, "cert-poll-interval", 10*time.Second, "how often the certificate files are re-read in addition to file events")
	fl.IntVar(&f.port, "port", 0, "webhook HTTPS port (default 9443)")
	fl.StringVar(&f.host, "host", "", "address the webhook listener binds to (default all; 127.0.0.1 with --dev)")
	fl.StringVar(&f.certDir, "cert-dir", "", "directory holding tls.crt and tls.key")
	fl.StringVar(&f.tlsMinVersion, "tls-min-version", "", `minimum TLS version, "1.2" (default) or "1.3"`)
	fl.BoolVar(&f.enableHTTP2, "enable-http2", false, "serve HTTP/2 too (off by default)")
	fl.BoolVar(&f.profiling, "enable-profiling", false, "serve Go's profiles (pprof) under /debug/pprof/ on the metrics address (serving.enableProfiling; off by default)")
	fl.StringVar(&f.probeAddress, "probe-address", "", `address of /healthz and /readyz (default ":8081")`)
	fl.StringVar(&f.metricsAddress, "metrics-address", "", `address of /metrics, "0" to disable (default ":8080")`)
	f.kube.register(cmd, "the cluster whose state the webhooks read")
	fl.BoolVar(&f.reconcileDG, "reconcile-dependencygroups", false, "run the leader-elected DependencyGroup status reconciler (deploy/ turns it on)")
	fl.BoolVar(&f.manageLabels, "manage-selections", false,
		"keep the harnessed and scoped namespace labels current, which the webhook configurations select by (harness.manageSelections; leader-elected; deploy/ turns it on)")
	fl.BoolVar(&f.manageLabels, "manage-harnessed-namespaces", false, "")
	_ = fl.MarkDeprecated("manage-harnessed-namespaces", "use --manage-selections")
	fl.StringVar(&f.leaderNS, "leader-election-namespace", "gatehouse-system", "namespace of the controllers' (or the audit's) leader election Lease")
	fl.StringVar(&f.namespace, "namespace", DefaultNamespace,
		"namespace gatehouse runs in, which the webhook configurations exclude (as manifests --namespace): a harness that injects the proxy there is denied")
	fl.BoolVar(&f.writeConfigs, "manage-webhook-configurations", false,
		"write the entries of the webhook configurations "+render.ConfigurationName+" as this configuration renders them (what `gatehouse manifests` prints), "+
			"and the managed-labels policy; leader-elected; the configurations must exist (the chart creates them empty)")
	fl.BoolVar(&f.printConfigs, "print-webhook-configurations", false,
		"print what --manage-webhook-configurations writes for these flags and this configuration (without caBundle), and exit")
	fl.StringVar(&f.service, "service", DefaultService, "with --manage-webhook-configurations: the Service in front of gatehouse, in --namespace")
	fl.StringVar(&f.serviceAccount, "service-account", route.DefaultServiceAccount,
		"with --manage-webhook-configurations: the ServiceAccount gatehouse runs as, the only requester that may change the managed namespace labels")
	fl.DurationVar(&f.configsEvery, "webhook-configurations-interval", 15*time.Second,
		"with --manage-webhook-configurations: how often the leader compares the written configurations with its rendering (at most five reads; a dry run only when an object or its rendering changed)")
	fl.StringVar(&f.policyOwner, "policy-owner", "gatehouse",
		"with --manage-webhook-configurations: the ClusterRole (gatehouse's own) that owns the managed-labels policy, so that uninstalling removes it")
	fl.StringVar(&f.webhookURL, "webhook-url", "", "with --manage-webhook-configurations: the base URL the API server calls instead of the Service (local control planes)")
	f.modes.register(cmd)
	return cmd
}

// apply lays the flags that were set over the configuration file.
func (f *serveFlags) apply(cmd *cobra.Command, cfg *configv1alpha1.ServerConfig) error {
	set := cmd.Flags().Changed
	s := &cfg.Serving
	if set("port") {
		s.Port = f.port
	}
	if set("host") {
		s.Host = f.host
	} else if f.dev && s.Host == "" {
		s.Host = "127.0.0.1"
	}
	if set("cert-dir") {
		s.CertDir = f.certDir
	}
	if set("tls-min-version") {
		s.TLSMinVersion = f.tlsMinVersion
	}
	if set("enable-http2") {
		s.EnableHTTP2 = f.enableHTTP2
	}
	if set("enable-profiling") {
		s.EnableProfiling = f.profiling
	}
	if set("probe-address") {
		s.ProbeAddress = f.probeAddress
	}
	if set("metrics-address") {
		s.MetricsAddress = f.metricsAddress
	}
	if set("manage-selections") || set("manage-harnessed-namespaces") {
		cfg.Harness.ManageSelections = f.manageLabels
	}
	off := false
	for _, name := range f.disable {
		if cfg.Webhooks == nil {
			cfg.Webhooks = map[string]configv1alpha1.Webhook{}
		}
		cfg.Webhooks[name] = configv1alpha1.Webhook{Enabled: &off}
	}
	if err := validateWithFlags(cmd, *cfg); err != nil {
		return err
	}
	return f.modes.apply(cmd, cfg)
}

// newLogger writes JSON lines to w. It does not sample: every decision is
// logged.
func newLogger(w io.Writer, level int) logr.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), zapcore.Level(-level))
	return zapr.NewLogger(zap.New(core))
}

// Server is `gatehouse serve`: the webhook listener, the probe listener, the
// metrics listener and the certificate source, run together; in the audit
// role (NewAuditServer) the probe and metrics listeners and the audit only.
type Server struct {
	cfg           configv1alpha1.ServerConfig
	role          string
	log           logr.Logger
	certs         *certs.FileSource
	webhook       webhook.Server
	metrics       metricsserver.Server
	shutdownDelay time.Duration
	stopping      atomic.Bool
	probeListener net.Listener
	// workloads and state are the informer caches, when gatehouse can read
	// the cluster.
	workloads  *clusterstate.CachedWorkloads
	state      *clusterstate.CachedState
	exceptions *clusterstate.CachedExceptions
	// rc is the cluster gatehouse reads, nil for none; manager runs the
	// leader-elected reconciler when enabled.
	rc      *rest.Config
	manager manager.Manager
	// noState is set for serve --dev, which reads no cluster on purpose:
	// the state-reading webhooks are then served only as members of the
	// combined endpoints, where they deny.
	noState bool
	// opts and hooks are what the endpoints serve; the background audit
	// (the audit role) reviews stored objects through the same.
	opts  route.Options
	hooks []*webhooks.Webhook
	// drift compares the registered webhook configurations with the
	// server's modes, when gatehouse reads a cluster (/readyz/mode-drift).
	drift *controllers.ModeDrift
	// configs writes them, with --manage-webhook-configurations.
	configs *controllers.WebhookConfigurations
}

// modeDriftInterval is how often every replica reads the registered webhook
// configurations to compare them with its modes: two GETs.
const modeDriftInterval = 10 * time.Second

// EnableControllers adds the leader-elected controllers that are asked for:
// the DependencyGroup status reconciler (controllers.DependencyGroupStatus),
// the selections controller (controllers.Selections) and configs, the
// writer of the webhook configurations, given its clients and CA file here.
// They share one manager, one Lease and one cache; they need cluster
// access.
//
// The webhook role never runs the background audit, whatever audit.interval
// says: the audit reads every stored object, and a serving replica's memory
// must not depend on what tenants store (the audit role runs it,
// NewAuditServer).
func (s *Server) EnableControllers(leaderNamespace string, dependencyGroups, namespaceLabels bool, configs *controllers.WebhookConfigurations) error {
	if !dependencyGroups && !namespaceLabels && configs == nil {
		return nil
	}
	if s.rc == nil {
		flag := "--reconcile-dependencygroups"
		switch {
		case configs != nil:
			flag = "--manage-webhook-configurations"
		case !dependencyGroups:
			flag = "--manage-selections"
		}
		return usageError("%s needs cluster access (--kubeconfig or in-cluster)", flag)
	}
	scheme := runtime.NewScheme()
	if err := helmeticav1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(s.rc, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"}, // served by the server's own metrics listener
		HealthProbeBindAddress: "0",
		LeaderElection:         true,
		// The Lease keeps the name it had when the DependencyGroup status
		// reconciler was alone: a new name would let an old and a new
		// replica both lead during a rollout.
		LeaderElectionID:              "gatehouse-dependencygroup-status",
		LeaderElectionNamespace:       leaderNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	if dependencyGroups {
		if err := (&controllers.DependencyGroupStatus{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if namespaceLabels {
		r := &controllers.Selections{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Options: route.OptionsFromConfig(s.cfg),
			Configuration: render.ConfigurationName}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if configs != nil {
		if configs.Interval <= 0 {
			return usageError("--webhook-configurations-interval must be positive")
		}
		configs.Client, configs.Reader = mgr.GetClient(), mgr.GetAPIReader()
		configs.CAFile = filepath.Join(s.cfg.Serving.CertDir, "ca.crt")
		s.configs = configs
		if err := mgr.Add(s.configs); err != nil {
			return err
		}
	}
	s.manager = mgr
	return nil
}

// printWebhookConfigurations writes, as YAML documents, the objects the
// leader would write with o (serve --print-webhook-configurations): the
// chart's tests run its Deployment's own arguments through it.
func printWebhookConfigurations(w io.Writer, configs *controllers.WebhookConfigurations) error {
	objs, err := configs.Objects(nil)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		doc, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", doc); err != nil {
			return err
		}
	}
	return nil
}

// NewServer assembles the server; nothing listens until Run.
func NewServer(cfg configv1alpha1.ServerConfig, log logr.Logger, shutdownDelay, certPoll time.Duration, kube kubeFlags, namespace string) (*Server, error) {
	s := &Server{cfg: cfg, role: RoleWebhook, log: log, shutdownDelay: shutdownDelay}
	opts := route.OptionsFromConfig(cfg)
	opts.ServerNamespace = namespace
	rc, err := s.restConfig(kube)
	if err != nil {
		return nil, err
	}
	s.rc = rc
	if err := s.startState(&opts); err != nil {
		return nil, err
	}
	if rc == nil && kube.kubeconfig == noCluster {
		// serve --dev on a laptop: the state-reading webhooks have nothing
		// to read. Their own paths are not served (404, which a Fail policy
		// turns into a denial), but they stay members of the combined
		// endpoints, where they deny what they would judge
		// (StateUnavailable): a combined entry must never admit a write
		// that one of its members could not judge.
		s.noState = true
		log.Info("serving without cluster access: the webhooks that read cluster state are not served on their own paths, "+
			"and the combined endpoints deny what they would judge (give --kubeconfig to serve them)",
			"webhooks", s.enabledStateWebhooks())
	}
	s.certs = certs.NewFileSource(cfg.Serving.CertDir, certPoll, log.WithName("certs"))
	minVersion := uint16(tls.VersionTLS12)
	if cfg.Serving.TLSMinVersion == "1.3" {
		minVersion = tls.VersionTLS13
	}
	s.webhook = webhooks.NewServer(webhook.Options{ // controller-runtime's, with tighter transport limits
		Host: cfg.Serving.Host,
		Port: cfg.Serving.Port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = minVersion
			c.GetCertificate = s.certs.GetCertificate
			if !cfg.Serving.EnableHTTP2 {
				c.NextProtos = []string{"http/1.1"}
			}
		}},
	})
	hooks := webhooks.Build(opts, cfg.Enabled)
	s.opts, s.hooks = opts, hooks
	if rc != nil {
		if s.drift, err = newModeDrift(rc, opts, cfg.Enabled); err != nil {
			return nil, err
		}
	}
	for _, w := range hooks {
		if s.noState && !ServedWithoutCluster(w.Name) {
			continue
		}
		s.webhook.Register(w.Path, w.Admission)
		log.Info("webhook enabled", "webhook", w.Name, "path", w.Path)
	}
	// The combined endpoints are always served, so either layout of the
	// webhook configurations works against any gatehouse.
	for _, c := range webhooks.BuildCombined(hooks, opts) {
		s.webhook.Register(c.Path, c.Admission)
	}
	if err := s.listen(); err != nil {
		return nil, err
	}
	return s, nil
}

// startState creates the informer caches the webhooks read when gatehouse
// reads a cluster, and hands them to opts.
func (s *Server) startState(opts *route.Options) error {
	if s.rc == nil {
		return nil
	}
	var err error
	if s.cfg.Enabled("component-overrides") {
		if s.workloads, err = clusterstate.NewCachedWorkloads(s.rc, s.cfg.Overrides.Namespace); err != nil {
			return err
		}
		opts.Workloads = s.workloads
	}
	if slices.ContainsFunc(stateWebhooks, s.cfg.Enabled) {
		if s.state, err = clusterstate.NewCachedState(s.rc); err != nil {
			return err
		}
		opts.ClusterState = s.state
		opts.Namespaces = s.state
	}
	// Every webhook's findings may be excused, so the exceptions are
	// watched whichever webhooks are enabled.
	if s.exceptions, err = clusterstate.NewCachedExceptions(s.rc, route.ExceptionIndexOptions(s.cfg.Exceptions),
		s.log.WithName("exceptions")); err != nil {
		return err
	}
	opts.Exceptions = s.exceptions
	return nil
}

// profilingHandlers are net/http/pprof's, by path, for the metrics
// listener (serving.enableProfiling).
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// listen creates the metrics server and binds the probe listener.
func (s *Server) listen() error {
	if s.cfg.Serving.MetricsAddress != "0" {
		opts := metricsserver.Options{BindAddress: s.cfg.Serving.MetricsAddress}
		if s.cfg.Serving.EnableProfiling {
			opts.ExtraHandlers = profilingHandlers()
		}
		m, err := metricsserver.NewServer(opts, nil, nil)
		if err != nil {
			return err
		}
		s.metrics = m
	}
	probe, err := net.Listen("tcp", s.cfg.Serving.ProbeAddress)
	if err != nil {
		return fmt.Errorf("probe address: %w", err)
	}
	s.probeListener = probe
	return nil
}

// newModeDrift is the check of the registered webhook configurations
// against opts, reading them uncached (get on their two names is all the
// RBAC grants).
func newModeDrift(rc *rest.Config, opts route.Options, enabled func(string) bool) (*controllers.ModeDrift, error) {
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	reader, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &controllers.ModeDrift{Reader: reader, Options: opts, Enabled: enabled, Configuration: render.ConfigurationName,
		Interval: modeDriftInterval}, nil
}

// noCluster is the kubeconfig value that means "read no cluster state".
const noCluster = "\x00none"

// restConfig finds the cluster the state-reading webhooks read, as
// kubeFlags.restConfig finds it. Without any there is none:
// component-overrides then skips resolution with a warning, and the
// stateWebhooks deny, since they never judge without their view, so
// /readyz/cluster-state fails and names them (serve --dev does not serve
// them at all). A kubeconfig or context that was asked for but is broken is
// an error.
//
// The workload cache does not gate readiness (OVR resolution is best effort
// by contract); the cluster-state caches do.
func (s *Server) restConfig(kube kubeFlags) (*rest.Config, error) {
	if kube.kubeconfig == noCluster {
		return nil, nil
	}
	asked := kube.kubeconfig != "" || kube.context != ""
	rc, err := kube.restConfig()
	switch {
	case err != nil && asked:
		return nil, err
	case err != nil:
		s.log.Info("no cluster configuration: no webhook reads cluster state", "reason", err.Error())
		return nil, nil
	}
	rc.UserAgent = "gatehouse"
	return rc, nil
}

// ProbeAddr is the address the probe listener is bound to.
func (s *Server) ProbeAddr() string { return s.probeListener.Addr().String() }

// Run serves until ctx ends, then reports not-ready for the shutdown delay
// and drains in-flight reviews.
func (s *Server) Run(ctx context.Context) error {
	serveCtx, stopServing := context.WithCancel(context.Background())
	defer stopServing()
	g, gctx := errgroup.WithContext(serveCtx)
	if s.role == RoleWebhook {
		g.Go(func() error { return s.certs.Start(gctx) })
		g.Go(func() error { return s.webhook.Start(gctx) })
	}
	if s.metrics != nil {
		g.Go(func() error { return s.metrics.Start(gctx) })
	}
	if s.workloads != nil {
		g.Go(func() error { return s.workloads.Start(gctx) })
	}
	if s.state != nil {
		g.Go(func() error { return s.state.Start(gctx) })
	}
	if s.exceptions != nil {
		g.Go(func() error { return s.exceptions.Start(gctx) })
	}
	if s.manager != nil {
		g.Go(func() error { return s.manager.Start(gctx) })
	}
	if s.drift != nil {
		g.Go(func() error { return s.drift.Start(logr.NewContext(gctx, s.log)) })
	}
	probes := &http.Server{Handler: s.probeMux(), ReadHeaderTimeout: 10 * time.Second}
	g.Go(func() error {
		if err := probes.Serve(s.probeListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		select {
		case <-ctx.Done():
			s.stopping.Store(true)
			s.log.Info("shutting down: not ready from now on", "delay", s.shutdownDelay.String())
			select {
			case <-time.After(s.shutdownDelay):
			case <-gctx.Done():
			}
		case <-gctx.Done():
		}
		stopServing() // the webhook server drains in-flight reviews on this
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return probes.Shutdown(shutdownCtx)
	})
	return g.Wait()
}

func (s *Server) probeMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/healthz", http.StripPrefix("/healthz", &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}))
	mux.Handle("/healthz/", http.StripPrefix("/healthz", &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}))
	checks := map[string]healthz.Checker{
		"shutdown": func(*http.Request) error {
			if s.stopping.Load() {
				return errors.New("shutting down")
			}
			return nil
		},
	}
	if s.role == RoleWebhook {
		checks["certificate"] = s.certs.Ready
		checks["webhook-server"] = s.webhook.StartedChecker()
	}
	if enabled := s.enabledStateWebhooks(); len(enabled) > 0 && !s.noState {
		checks["cluster-state"] = func(r *http.Request) error {
			if s.state == nil {
				return fmt.Errorf("gatehouse has no cluster access, so %v, which judge against cluster state, can only deny", enabled)
			}
			return s.state.Ready(r)
		}
	}
	if s.drift != nil {
		checks["mode-drift"] = func(r *http.Request) error {
			if s.configs != nil {
				// The leader writes the entries for its own modes: a
				// replica's readiness does not wait for them (a rolled pod
				// would wait for a leader that is not rolled yet); the
				// drift is still logged and counted.
				return nil
			}
			return s.drift.Ready(r)
		}
	}
	ready := &healthz.Handler{Checks: checks}
	mux.Handle("/readyz", http.StripPrefix("/readyz", ready))
	mux.Handle("/readyz/", http.StripPrefix("/readyz", ready))
	return mux
}

// enabledStateWebhooks are the enabled webhooks that judge against cluster
// state: /readyz passes only while they can read it.
func (s *Server) enabledStateWebhooks() []string {
	var out []string
	for _, name := range stateWebhooks {
		if s.cfg.Enabled(name) {
			out = append(out, name)
		}
	}
	return out
}
