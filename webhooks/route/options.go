package route

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	// StateGaps, offline only, is the view of `gatehouse check` that
	// remembers what it was asked for and not given (webhooks/undecided.go).
	StateGaps StateGaps
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
	defaults, _ := podDefaults(cfg.PodSecurity.Defaults)
	table, _ := overrideTable(cfg.Overrides)
	return Options{
		Products:                policies.ProductSelector{GroupSuffixes: cfg.Products.GroupSuffixes},
		ServiceAccounts:         serviceAccountNaming(cfg.ServiceAccounts),
		SecurityDefaultsLabel:   Label{Key: key, Value: value},
		PodDefaults:             defaults,
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
			_, err := podDefaults(o)
			return policyErrors(at, err, "pod security defaults: ")
		},
		HarnessProxy: func(at *field.Path, p configv1alpha1.HarnessProxy) field.ErrorList {
			// The proxy's check names no field of its own.
			if err := proxyConfig(p).Validate(); err != nil {
				return field.ErrorList{field.Invalid(at, field.OmitValueType{}, err.Error())}
			}
			return nil
		},
		OverrideComponents: func(at *field.Path, o configv1alpha1.Overrides) field.ErrorList {
			if presets := overrides.PresetNames(); len(o.Components) == 0 && o.ComponentTable != "" && !slices.Contains(presets, o.ComponentTable) {
				return field.ErrorList{field.NotSupported(at.Child("componentTable"), o.ComponentTable, presets)}
			}
			_, err := overrideTable(o)
			return policyErrors(at, err, "")
		},
		Mutating: func(name string) bool {
			def, ok := Lookup(name)
			return ok && def.Type == Mutating
		},
	})
}

// policyErrors are the errors of a policy's check of the value at at, one
// for each error err joins. The policies' checks return errors, not
// field.ErrorList (their messages also answer reviews, which must not
// change), each attributed to its key below the checked value after
// prefix: "runAsUser: ...", "components[1].kinds[0]: ...". The key is read
// into a field.Path below at; a message whose key does not read as one is
// attributed to at itself.
func policyErrors(at *field.Path, err error, prefix string) field.ErrorList {
	if err == nil {
		return nil
	}
	each := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		each = joined.Unwrap()
	}
	var errs field.ErrorList
	for _, e := range each {
		msg := strings.TrimPrefix(e.Error(), prefix)
		if key, detail, ok := strings.Cut(msg, ": "); ok {
			if p, ok := keyPath(at, key); ok {
				errs = append(errs, field.Invalid(p, field.OmitValueType{}, detail))
				continue
			}
		}
		errs = append(errs, field.Invalid(at, field.OmitValueType{}, msg))
	}
	return errs
}

// keyPath reads a policy's key ("runAsUser", "capabilitiesDrop[2]",
// "components[1].kinds[0]", "[0].name") into a path below at: field
// names joined by dots, each followed by any list indexes.
func keyPath(at *field.Path, key string) (*field.Path, bool) {
	p := at
	for i, part := range strings.Split(key, ".") {
		name, rest, _ := strings.Cut(part, "[")
		switch {
		case name != "" && isFieldName(name):
			p = p.Child(name)
		case name == "" && i == 0 && rest != "":
		default:
			return nil, false
		}
		for rest != "" {
			index, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(index)
			if !ok || err != nil || n < 0 || (after != "" && !strings.HasPrefix(after, "[")) {
				return nil, false
			}
			p = p.Index(n)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return p, true
}

// isFieldName: a configuration field's JSON name, lowerCamelCase.
func isFieldName(s string) bool {
	for i, r := range s {
		lower := r >= 'a' && r <= 'z'
		later := i > 0 && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		if !lower && !later {
			return false
		}
	}
	return s != ""
}

// overrideTable is the component table an overrides configuration names:
// its components, or the preset componentTable names (the default preset
// when neither is set). Each error is attributed to its field below
// overrides.
func overrideTable(o configv1alpha1.Overrides) (*overrides.Table, error) {
	if len(o.Components) == 0 {
		name := o.ComponentTable
		if name == "" {
			name = configv1alpha1.DefaultComponentTable
		}
		table, err := overrides.Preset(name)
		if err != nil {
			return nil, fmt.Errorf("componentTable: %w", err)
		}
		return table, nil
	}
	components := make([]overrides.Component, len(o.Components))
	for i, c := range o.Components {
		components[i] = overrides.Component{Name: c.Name, Kinds: c.Kinds, PerSite: c.Scope == configv1alpha1.ScopePerSite,
			SiteLabels: c.SiteLabels}
	}
	table, err := overrides.NewTable(components)
	if err == nil {
		return table, nil
	}
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			errs = append(errs, fmt.Errorf("components%w", e))
		}
	} else {
		errs = append(errs, fmt.Errorf("components: %w", err))
	}
	return nil, errors.Join(errs...)
}

// podDefaults lays the configured overrides over the built-in defaults
// table and checks the result.
func podDefaults(o configv1alpha1.PodSecurityDefaults) (podsecurity.Defaults, error) {
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
	return d, d.Validate()
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
