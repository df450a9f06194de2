package app

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The roles of `gatehouse serve` (docs/audit.md, "Isolation").
const (
	// RoleWebhook serves the admission webhooks and runs the leader-elected
	// controllers; it never audits.
	RoleWebhook = "webhook"
	// RoleAudit runs the background audit alone: no webhook listener, no
	// serving certificate.
	RoleAudit = "audit"
)

// AuditLeaseName is the audit role's leader election Lease: one audit pod
// audits at a time, whatever the webhook role's controllers do.
const AuditLeaseName = "gatehouse-audit"

// runAuditRole is `gatehouse serve --role=audit`.
func runAuditRole(ctx context.Context, cmd *cobra.Command, f serveFlags, cfg configv1alpha1.ServerConfig, log logr.Logger) error {
	set := cmd.Flags().Changed
	for _, flag := range []string{"dev", "dev-dir", "cert-dir", "port", "host", "tls-min-version", "enable-http2", "shutdown-delay",
		"cert-poll-interval", "reconcile-dependencygroups", "manage-selections", "manage-harnessed-namespaces"} {
		if set(flag) {
			return usageError("--%s is a flag of the webhook role; --role=%s serves no webhook and runs no other controller", flag, RoleAudit)
		}
	}
	srv, err := NewAuditServer(cfg, log, f.kube, f.leaderNS)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// NewAuditServer assembles the audit role: the informer caches the webhooks
// read, the webhooks themselves (reviewing stored objects, never serving),
// the leader-elected background audit under AuditLeaseName in
// leaderNamespace, the probe and the metrics listeners. It needs cluster
// access and an audit.interval other than "0".
func NewAuditServer(cfg configv1alpha1.ServerConfig, log logr.Logger, kube kubeFlags, leaderNamespace string) (*Server, error) {
	interval, _ := cfg.AuditInterval() // validated with the configuration
	if interval == 0 {
		return nil, usageError("--role=%s with audit.interval \"0\": there is nothing to run", RoleAudit)
	}
	s := &Server{cfg: cfg, role: RoleAudit, log: log}
	rc, err := s.restConfig(kube)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, usageError("--role=%s needs cluster access (--kubeconfig or in-cluster)", RoleAudit)
	}
	s.rc = rc
	opts := route.OptionsFromConfig(cfg)
	if err := s.startState(&opts); err != nil {
		return nil, err
	}
	s.opts, s.hooks = opts, webhooks.Build(opts, cfg.Enabled)
	a, err := s.backgroundAudit(leaderNamespace, interval)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(s.rc, ctrl.Options{
		Metrics:                       metricsserver.Options{BindAddress: "0"}, // served by the server's own metrics listener
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              AuditLeaseName,
		LeaderElectionNamespace:       leaderNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(a); err != nil {
		return nil, err
	}
	s.manager = mgr
	if err := s.listen(); err != nil {
		return nil, err
	}
	log.Info("audit role: the background audit runs here, no webhook is served", "interval", interval.String(), "lease", leaderNamespace+"/"+AuditLeaseName)
	return s, nil
}

// backgroundAudit is the leader-elected audit over the server's own
// webhooks and caches, with its own client-side rate limit.
func (s *Server) backgroundAudit(ownNamespace string, interval time.Duration) (*controllers.Audit, error) {
	rc := rest.CopyConfig(s.rc)
	rc.QPS, rc.Burst, rc.UserAgent = s.cfg.Audit.QPS, s.cfg.Audit.Burst, "gatehouse-audit"
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	pager, err := audit.NewPager(rc)
	if err != nil {
		return nil, err
	}
	pager.PageSize = s.cfg.Audit.PageSize
	scanner := audit.NewScanner(pager, disc, s.hooks, s.opts)
	scanner.SkipNamespaces = s.opts.ExemptNamespaces(ownNamespace)
	synced := func() bool {
		return (s.state == nil || s.state.Ready(nil) == nil) && (s.workloads == nil || s.workloads.Synced()) &&
			(s.exceptions == nil || s.exceptions.Synced())
	}
	return &controllers.Audit{Scanner: scanner, Pager: pager, Dynamic: dyn, APIs: s.cfg.Audit.Reports.APIs, Interval: interval, Synced: synced,
		Exceptions: s.opts.Exceptions}, nil
}
