package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	cmcontroller "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	// The controllers and issuers register themselves with cert-manager's
	// controller and issuer registries when imported.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// certManagerControllers are the cert-manager controllers a self-signed ->
// CA -> serving certificate chain needs, by their registered names.
var certManagerControllers = []string{
	"issuers",
	"certificaterequests-approver",
	"certificaterequests-issuer-selfsigned",
	"certificaterequests-issuer-ca",
	"certificates-trigger",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-issuing",
	"certificates-readiness",
}

// CertManagerCRDs returns the directory of cert-manager's CRDs inside the
// cert-manager module this suite builds against (plain YAML, as released).
func CertManagerCRDs(repo string) (string, error) {
	dir, err := moduleDir(repo, "github.com/cert-manager/cert-manager")
	if err != nil {
		return "", err
	}
	crds := filepath.Join(dir, "deploy", "crds")
	if _, err := os.Stat(crds); err != nil {
		return "", fmt.Errorf("cert-manager CRDs: %w", err)
	}
	return crds, nil
}

// startCertManager runs cert-manager's certificate controllers in this
// process against the API server in kubeconfig, until ctx ends.
func startCertManager(ctx context.Context, kubeconfig string, errs chan<- error) error {
	factory, err := cmcontroller.NewContextFactory(ctx, cmcontroller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   100,
		KubernetesAPIBurst: 200,
		IssuerOptions:      cmcontroller.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
	})
	if err != nil {
		return fmt.Errorf("cert-manager context: %w", err)
	}
	known := cmcontroller.Known()
	for _, name := range certManagerControllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("cert-manager controller %q is not registered", name)
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("cert-manager controller %s: %w", name, err)
		}
		go func() {
			if err := c.Run(1, ctx); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("cert-manager controller %s: %w", name, err)
			}
		}()
	}
	// Informers start after every controller has registered its handlers.
	cmctx, err := factory.Build()
	if err != nil {
		return err
	}
	cmctx.SharedInformerFactory.Start(ctx.Done())
	cmctx.KubeSharedInformerFactory.Start(ctx.Done())
	return nil
}

// startCAInjector runs cert-manager's cainjector for webhook configurations
// in this process, until ctx ends.
func startCAInjector(ctx context.Context, cfg *rest.Config, errs chan<- error) error {
	cfg = rest.CopyConfig(cfg)
	// cainjector derives its server-side-apply field manager from the user
	// agent; without one every apply fails with "fieldManager: Required".
	cfg.UserAgent = "cert-manager-cainjector/gatehouse-e2e"
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("cainjector manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			"mutatingwebhookconfiguration":   true,
			"validatingwebhookconfiguration": true,
		},
	})
	if err != nil {
		return fmt.Errorf("cainjector: %w", err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			errs <- fmt.Errorf("cainjector: %w", err)
		}
	}()
	return nil
}
