package webhooks

import (
	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
)

// Options are the parts of the server configuration that evaluators and the
// rendered webhook configurations read.
type Options struct {
	Products policies.ProductSelector
	// SecurityDefaultsLabel is the namespace label that opts a namespace in
	// to the pod security webhooks.
	SecurityDefaultsLabel Label
	// PodDefaults are the pod security defaults PSC fills in and requires.
	PodDefaults podsecurity.Defaults
	// Overrides names the component-override ConfigMap and how live
	// workloads are found.
	Overrides configv1alpha1.Overrides
	// ClusterState answers DG, CRDS and HARNESS lookups; nil when gatehouse
	// reads no cluster state (those webhooks then deny: they never judge
	// without the view).
	ClusterState StateReader
	// Workloads reads the operator's live workloads for OVR resolution; nil
	// when gatehouse has no access to the cluster (resolution is then
	// skipped with a warning).
	Workloads WorkloadReader
	// Namespaces answers namespace labels for LABEL; nil when gatehouse
	// reads no cluster state (harness-labels then denies).
	Namespaces NamespaceReader
	// Proxy is the harness proxy PROXY injects.
	Proxy proxy.Config
	// HarnessedNamespaceLabel is the namespace label key under which
	// harness-proxy fails closed.
	HarnessedNamespaceLabel string
}

// Label is one label key and value.
type Label struct{ Key, Value string }

// OptionsFromConfig derives the options from a configuration that passed
// Validate (which reports everything these conversions could reject).
func OptionsFromConfig(cfg configv1alpha1.ServerConfig) Options {
	key, value, _ := cfg.SecurityDefaultsLabel()
	defaults, _ := cfg.PodDefaults()
	return Options{
		Products:                policies.ProductSelector{GroupSuffixes: cfg.Products.GroupSuffixes},
		SecurityDefaultsLabel:   Label{Key: key, Value: value},
		PodDefaults:             defaults,
		Overrides:               cfg.Overrides,
		Proxy:                   cfg.ProxyConfig(),
		HarnessedNamespaceLabel: cfg.Harness.FailClosedNamespaceLabel,
	}
}
