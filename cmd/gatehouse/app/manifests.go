package app

import (
	"slices"

	"github.com/spf13/cobra"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Defaults of the installation in deploy/.
const (
	DefaultNamespace   = route.DefaultNamespace
	DefaultService     = "gatehouse"
	DefaultCertificate = DefaultNamespace + "/gatehouse-serving"
)

func newManifests() *cobra.Command {
	var (
		o      route.ManifestOptions
		config string
		manage bool
		modes  modeFlags
	)
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print the webhook configurations for the registry and a server configuration",
		Long: `Print the MutatingWebhookConfiguration and ValidatingWebhookConfiguration that route the API
server's requests to gatehouse, rendered from the same registry that routes objects in check
(with --layout in-process --defaults-policy, also PSC's defaults as a MutatingAdmissionPolicy and its binding; with
--manage-selections, also the ValidatingAdmissionPolicy gatehouse-managed-labels and its binding, which
keep anyone but gatehouse from removing or changing the namespace labels the entries select by).
deploy/ holds this output for the default configuration; regenerate it with 'make manifests'.`,
		Example: `  # what deploy/webhooks holds
  gatehouse manifests --manage-selections > webhookconfigurations.yaml

  # a rollout step: every webhook in Audit, rendered with failurePolicy Ignore
  gatehouse manifests --config config.yaml --default-mode Audit | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(layouts, o.Layout) {
				return usageError("%v", configv1alpha1.OneOf("--layout", o.Layout, layouts...))
			}
			if o.DefaultsPolicy && o.Layout != route.LayoutInProcess {
				return usageError("--defaults-policy renders a policy of the in-process layout: add --layout in-process")
			}
			cfg, err := loadConfig(config)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("manage-selections") {
				cfg.Harness.ManageSelections = manage
			}
			if err := modes.apply(cmd, &cfg); err != nil {
				return err
			}
			o.Options = route.OptionsFromConfig(cfg)
			out, err := render.WebhookConfigurations(o)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Namespace, "namespace", DefaultNamespace, "namespace gatehouse runs in (excluded from admission)")
	fl.StringVar(&o.Service, "service", DefaultService, "Service in front of gatehouse")
	fl.StringVar(&o.ServiceAccount, "service-account", route.DefaultServiceAccount,
		"ServiceAccount gatehouse runs as, in --namespace: with --manage-selections, the only requester that may remove or change the managed namespace labels")
	fl.StringVar(&o.URL, "url", "", "base URL to call instead of the Service (local control planes)")
	fl.StringVar(&o.Certificate, "certificate", DefaultCertificate, "cert-manager Certificate (namespace/name) whose CA is injected; empty for none")
	fl.StringVar(&o.Layout, "layout", route.DefaultLayout, "separate (one entry per webhook), combined (one per failure policy and kind) or in-process (combined, less what CEL proves allowed; docs/in-process.md)")
	fl.BoolVar(&o.DefaultsPolicy, "defaults-policy", false, "with --layout in-process: PSC's defaults as a MutatingAdmissionPolicy (Kubernetes 1.36), so Pods are defaulted and admitted while gatehouse is down; it costs the API server more than the webhook call (docs/in-process.md)")
	fl.StringVar(&config, "config", "", "server configuration file, as for serve")
	fl.BoolVar(&manage, "manage-selections", false,
		"select by the harnessed and scoped namespace labels alone, as for a serve that keeps them current (harness.manageSelections)")
	modes.register(cmd)
	return cmd
}
