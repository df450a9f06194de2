package route

import (
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
)

// Options are the parts of the server configuration that evaluators and the
// rendered webhook configurations read.
type Options struct {
	Products policies.ProductSelector
	// ServiceAccounts says which ServiceAccount each product's operator
	// release gives its pods (SA).
	ServiceAccounts serviceaccount.Naming
	// SecurityDefaultsLabel is the namespace label that opts a namespace in
	// to the pod security webhooks.
	SecurityDefaultsLabel Label
	// PodDefaults are the pod security defaults PSC fills in and requires.
	PodDefaults podsecurity.Defaults
	// Overrides names the component-override ConfigMap and how live
	// workloads are found.
	Overrides configv1alpha1.Overrides
	// OverrideTable is the component table OVR checks entries against (the
	// preset or list Overrides names); nil means the default preset.
	OverrideTable *overrides.Table
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
	// ScopedNamespaceLabel is the namespace label key under which
	// harness-labels is sent namespaced objects, when gatehouse manages the
	// namespace labels.
	ScopedNamespaceLabel string
	// ManagedSelections: gatehouse keeps HarnessedNamespaceLabel and
	// ScopedNamespaceLabel current (selection.go), and the webhook
	// configurations select by them alone.
	ManagedSelections bool
	// Modes are the webhooks' modes by name; a webhook not listed
	// enforces (webhooks/modes.go).
	Modes map[string]configv1alpha1.Mode
	// Exemptions are the requests no webhook judges (exemptions.go).
	Exemptions configv1alpha1.Exemptions
	// ServerNamespace is the namespace gatehouse runs in, which every
	// entry excludes (ManifestOptions.Namespace); empty means
	// DefaultNamespace.
	ServerNamespace string
	// ExceptionRules are the configuration's exceptions block, which the
	// exception webhook holds exceptions to.
	ExceptionRules configv1alpha1.Exceptions
	// Exceptions are the exceptions that may excuse a member's findings
	// (webhooks/exceptions.go); nil excuses nothing.
	Exceptions ExceptionReader
	// Now is the time exceptions' expiry is judged at (Clock); nil is the
	// wall clock. check --now sets it, to see what an expiry will deny.
	Now func() time.Time
	// StateGaps, offline only, is the view of `gatehouse check` that
	// remembers what it was asked for and not given (webhooks/undecided.go).
	StateGaps StateGaps
}

// Clock is the time exceptions' expiry is judged at: Now, or the wall
// clock.
func (o Options) Clock() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Label is one label key and value.
type Label struct{ Key, Value string }

// OptionsFromConfig derives the options from a configuration that passed
// ValidateConfig (which reports everything these conversions could reject).
// The defaults the policies own are applied here, where the options are
// built: the configured pod security defaults laid over the built-in table,
// and the built-in harness proxy under each unset proxy field.
func OptionsFromConfig(cfg configv1alpha1.ServerConfig) Options {
	key, value, _ := cfg.SecurityDefaultsLabel()
	table, _ := overrideTable(field.NewPath("overrides"), cfg.Overrides)
	return Options{
		Products:                policies.ProductSelector{GroupSuffixes: cfg.Products.GroupSuffixes},
		ServiceAccounts:         serviceAccountNaming(cfg.ServiceAccounts),
		SecurityDefaultsLabel:   Label{Key: key, Value: value},
		PodDefaults:             podDefaults(cfg.PodSecurity.Defaults),
		Overrides:               cfg.Overrides,
		OverrideTable:           table,
		Proxy:                   proxyConfig(cfg.Harness.Proxy),
		HarnessedNamespaceLabel: cfg.Harness.FailClosedNamespaceLabel,
		ScopedNamespaceLabel:    cfg.Harness.ScopedNamespaceLabel,
		ManagedSelections:       cfg.Harness.ManageSelections,
		Modes:                   modes(cfg),
		Exemptions:              cfg.Exemptions,
		ExceptionRules:          cfg.Exceptions,
	}
}

// serviceAccountNaming is the configured preset with the configured
// products laid over it. An unknown preset (ValidateConfig refuses it)
// derives every name.
func serviceAccountNaming(cfg configv1alpha1.ServiceAccounts) serviceaccount.Naming {
	preset := serviceaccount.PresetReleased
	if cfg.Preset == configv1alpha1.PresetDerived {
		preset = serviceaccount.PresetDerived
	}
	naming, _ := serviceaccount.Preset(preset)
	if len(cfg.Products) > 0 && naming.Products == nil {
		naming.Products = map[schema.GroupKind]serviceaccount.Rule{}
	}
	for _, p := range cfg.Products {
		rule := serviceaccount.Rule{Kind: serviceaccount.Named, Name: p.Name}
		switch p.Rule {
		case configv1alpha1.RuleNone:
			rule.Name = serviceaccount.DefaultServiceAccount
		case configv1alpha1.RuleDerived:
			rule = serviceaccount.Rule{Kind: serviceaccount.Derived}
		}
		naming.Products[schema.GroupKind{Group: p.Group, Kind: p.Kind}] = rule
	}
	return naming
}

// modes lists the mode of every webhook that does not enforce.
func modes(cfg configv1alpha1.ServerConfig) map[string]configv1alpha1.Mode {
	var out map[string]configv1alpha1.Mode
	for _, def := range registry {
		if m := cfg.ModeOf(def.Name); m != configv1alpha1.ModeEnforce {
			if out == nil {
				out = map[string]configv1alpha1.Mode{}
			}
			out[def.Name] = m
		}
	}
	return out
}

// ValidateConfig checks a configuration before OptionsFromConfig reads it:
// the configuration's own rules, webhook names the registry does not know,
// and the policies' rules for the values they read, one error per problem,
// each with the path of its field. serve and check reject a configuration
// it refuses.
func ValidateConfig(cfg configv1alpha1.ServerConfig) field.ErrorList {
	return cfg.Validate(Names(), configv1alpha1.PolicyChecks{
		PodSecurityDefaults: func(at *field.Path, o configv1alpha1.PodSecurityDefaults) field.ErrorList {
			return podDefaults(o).Validate(at)
		},
		HarnessProxy: func(at *field.Path, p configv1alpha1.HarnessProxy) field.ErrorList {
			return proxyConfig(p).Validate(at)
		},
		OverrideComponents: func(at *field.Path, o configv1alpha1.Overrides) field.ErrorList {
			_, errs := overrideTable(at, o)
			return errs
		},
		Mutating: func(name string) bool {
			def, ok := Lookup(name)
			return ok && def.Type == Mutating
		},
	})
}

// overrideTable is the component table of the overrides configuration at
// at: its components, or the preset componentTable names (the default
// preset when neither is set). Each error is attributed to its field below
// at.
func overrideTable(at *field.Path, o configv1alpha1.Overrides) (*overrides.Table, field.ErrorList) {
	if len(o.Components) == 0 {
		name := o.ComponentTable
		if name == "" {
			name = configv1alpha1.DefaultComponentTable
		}
		if presets := overrides.PresetNames(); !slices.Contains(presets, name) {
			return nil, field.ErrorList{field.NotSupported(at.Child("componentTable"), name, presets)}
		}
		return overrides.MustPreset(name), nil
	}
	components := make([]overrides.Component, len(o.Components))
	for i, c := range o.Components {
		components[i] = overrides.Component{Name: c.Name, Kinds: c.Kinds, PerSite: c.Scope == configv1alpha1.ScopePerSite,
			SiteLabels: c.SiteLabels}
	}
	return overrides.NewTable(at.Child("components"), components)
}

// podDefaults lays the configured overrides over the built-in defaults
// table (ValidateConfig checks the result).
func podDefaults(o configv1alpha1.PodSecurityDefaults) podsecurity.Defaults {
	d := podsecurity.BuiltinDefaults()
	setIf(&d.RunAsUser, o.RunAsUser)
	setIf(&d.RunAsGroup, o.RunAsGroup)
	setIf(&d.FSGroup, o.FSGroup)
	setIf(&d.FSGroupChangePolicy, o.FSGroupChangePolicy)
	setIf(&d.RunAsNonRoot, o.RunAsNonRoot)
	setIf(&d.SeccompProfileType, o.SeccompProfileType)
	setIf(&d.AllowPrivilegeEscalation, o.AllowPrivilegeEscalation)
	if o.CapabilitiesDrop != nil {
		d.CapabilitiesDrop = append([]string(nil), o.CapabilitiesDrop...)
	}
	return d
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// proxyConfig is the built-in harness proxy with each configured field laid
// over it.
func proxyConfig(p configv1alpha1.HarnessProxy) proxy.Config {
	c := proxy.BuiltinConfig()
	if p.Host != "" {
		c.Host = p.Host
	}
	if p.Port != 0 {
		c.Port = p.Port
	}
	if p.CAConfigMap != "" {
		c.CAConfigMap = p.CAConfigMap
	}
	return c
}

// The defaults of the installation in deploy/: the namespace gatehouse runs
// in and its ServiceAccount.
const (
	DefaultNamespace      = "gatehouse-system"
	DefaultServiceAccount = "gatehouse"
)

// ModeOf is the named webhook's mode under o.
func (o Options) ModeOf(name string) configv1alpha1.Mode {
	if m, ok := o.Modes[name]; ok {
		return m
	}
	return configv1alpha1.ModeEnforce
}

// enforces reports whether the named webhook is in Enforce.
func (o Options) enforces(name string) bool {
	return o.ModeOf(name) == configv1alpha1.ModeEnforce
}

// FailurePolicy is the failure policy an entry of the named webhook is
// rendered with: its own in Enforce, Ignore otherwise.
func (o Options) FailurePolicy(name string, own admissionregistrationv1.FailurePolicyType) admissionregistrationv1.FailurePolicyType {
	if o.enforces(name) {
		return own
	}
	return admissionregistrationv1.Ignore
}
