package v1alpha1

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Default returns the configuration used when no file is given.
func Default() ServerConfig {
	var c ServerConfig
	c.SetDefaults()
	return c
}

// SetDefaults fills every unset field whose default this package owns. The
// harness proxy and the pod security defaults table are the policies':
// webhooks.OptionsFromConfig lays the configured values over their built-in
// ones, so an unset field there stays unset here.
func (c *ServerConfig) SetDefaults() {
	if c.APIVersion == "" {
		c.APIVersion = APIVersion
	}
	if c.Kind == "" {
		c.Kind = Kind
	}
	s := &c.Serving
	if s.Port == 0 {
		s.Port = 9443
	}
	if s.TLSMinVersion == "" {
		s.TLSMinVersion = "1.2"
	}
	if s.ProbeAddress == "" {
		s.ProbeAddress = ":8081"
	}
	if s.MetricsAddress == "" {
		s.MetricsAddress = ":8080"
	}
	if len(c.Products.GroupSuffixes) == 0 {
		c.Products.GroupSuffixes = []string{".kubedoop.dev"}
	}
	if c.ServiceAccounts.Preset == "" {
		c.ServiceAccounts.Preset = PresetReleased
	}
	if c.PodSecurity.NamespaceLabel == "" {
		c.PodSecurity.NamespaceLabel = DefaultSecurityDefaultsLabel
	}
	o := &c.Overrides
	if o.Namespace == "" {
		o.Namespace = "unbounded-system"
	}
	if o.ConfigMapName == "" {
		o.ConfigMapName = "unbounded-component-overrides"
	}
	if o.ComponentLabel == "" {
		o.ComponentLabel = "app.kubernetes.io/component"
	}
	if o.ComponentTable == "" && len(o.Components) == 0 {
		o.ComponentTable = DefaultComponentTable
	}
	if c.DefaultMode == "" {
		c.DefaultMode = ModeEnforce
	}
	if c.Exemptions.Namespaces == nil {
		c.Exemptions.Namespaces = DefaultExemptNamespaces()
	}
	if c.Harness.FailClosedNamespaceLabel == "" {
		c.Harness.FailClosedNamespaceLabel = DefaultHarnessedNamespaceLabel
	}
	if c.Harness.ScopedNamespaceLabel == "" {
		c.Harness.ScopedNamespaceLabel = DefaultScopedNamespaceLabel
	}
	a := &c.Audit
	if a.Interval == "" {
		a.Interval = "1h"
	}
	if a.PageSize == 0 {
		a.PageSize = 500
	}
	if a.QPS == 0 {
		a.QPS = 20
	}
	if a.Burst == 0 {
		a.Burst = 40
	}
}

// MinAuditInterval is the shortest background audit interval accepted: a
// pass lists every intercepted resource of the cluster.
const MinAuditInterval = time.Minute

// AuditInterval parses Audit.Interval; 0 means off.
func (c *ServerConfig) AuditInterval() (time.Duration, error) {
	if c.Audit.Interval == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.Audit.Interval)
	if err != nil {
		return 0, fmt.Errorf("audit.interval: must be a duration such as \"1h\", or \"0\" for off")
	}
	if d < MinAuditInterval {
		return 0, fmt.Errorf("audit.interval: must be at least %s, or \"0\" for off", MinAuditInterval)
	}
	return d, nil
}

// DefaultComponentTable is the component table overrides are checked
// against when the configuration names none (policies/overrides holds the
// presets).
const DefaultComponentTable = "any"

// DefaultExemptNamespaces are the namespaces exempt when the configuration
// names none: the control plane's and the node heartbeats'.
func DefaultExemptNamespaces() []string { return []string{"kube-system", "kube-node-lease"} }

// DefaultHarnessedNamespaceLabel marks the namespaces where harness-proxy
// fails closed.
const DefaultHarnessedNamespaceLabel = "gatehouse.dev/harnessed"

// DefaultScopedNamespaceLabel marks the namespaces where harness-labels
// copies a scope label.
const DefaultScopedNamespaceLabel = "gatehouse.dev/scoped"

// DefaultSecurityDefaultsLabel opts a namespace in to the pod security webhooks.
const DefaultSecurityDefaultsLabel = "gatehouse.dev/security-defaults=enabled"

// SecurityDefaultsLabel splits PodSecurity.NamespaceLabel into key and value.
func (c *ServerConfig) SecurityDefaultsLabel() (key, value string, err error) {
	key, value, ok := strings.Cut(c.PodSecurity.NamespaceLabel, "=")
	if !ok {
		return "", "", fmt.Errorf("podSecurity.namespaceLabel: must be key=value")
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return "", "", fmt.Errorf("podSecurity.namespaceLabel: key: %s", strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 || value == "" {
		return "", "", fmt.Errorf("podSecurity.namespaceLabel: value must be a non-empty label value")
	}
	return key, value, nil
}

// PolicyChecks check the values whose rules belong to the policies that read
// them. webhooks.ValidateConfig passes them in, so that this package imports
// nothing of gatehouse's (the import-arrow test in cmd/gatehouse holds it to
// that). A nil check is not run.
type PolicyChecks struct {
	// PodSecurityDefaults checks the built-in pod security defaults table
	// with these overrides laid over it.
	PodSecurityDefaults func(PodSecurityDefaults) error
	// HarnessProxy checks the proxy harness-proxy injects, each unset field
	// taking its built-in value.
	HarnessProxy func(HarnessProxy) error
	// Mutating reports whether the named webhook mutates (Warn is refused
	// for it).
	Mutating func(name string) bool
	// OverrideComponents checks the component table of overrides: the
	// preset ComponentTable names, or Components. Each error it joins is
	// attributed to its field below overrides ("components[1].kinds[0]:
	// ...").
	OverrideComponents func(Overrides) error
}

// Validate checks the values that defaulting cannot fix. knownWebhooks are
// the registry's names; a configuration naming another webhook is an error
// (a typo would otherwise leave a webhook silently enabled). The errors of
// checks are attributed to their fields and reported in field order with the
// rest.
func (c *ServerConfig) Validate(knownWebhooks []string, checks PolicyChecks) error {
	var errs []string
	if c.APIVersion != APIVersion {
		errs = append(errs, fmt.Sprintf("apiVersion: must be %q", APIVersion))
	}
	if c.Kind != Kind {
		errs = append(errs, fmt.Sprintf("kind: must be %q", Kind))
	}
	if c.Serving.Port < 1 || c.Serving.Port > 65535 {
		errs = append(errs, "serving.port: must be between 1 and 65535")
	}
	if c.Serving.TLSMinVersion != "1.2" && c.Serving.TLSMinVersion != "1.3" {
		errs = append(errs, OneOf("serving.tlsMinVersion", c.Serving.TLSMinVersion, "1.2", "1.3").Error())
	}
	known := map[string]bool{}
	for _, n := range knownWebhooks {
		known[n] = true
	}
	names := make([]string, 0, len(c.Webhooks))
	for name := range c.Webhooks {
		names = append(names, name)
	}
	sort.Strings(names)
	errs = append(errs, modeErrors("defaultMode", c.DefaultMode, false)...)
	for _, name := range names {
		if !known[name] {
			errs = append(errs, fmt.Sprintf("webhooks[%s]: no such webhook (known: %s)", name, strings.Join(knownWebhooks, ", ")))
			continue
		}
		mutating := checks.Mutating != nil && checks.Mutating(name)
		errs = append(errs, modeErrors(fmt.Sprintf("webhooks[%s].mode", name), c.Webhooks[name].Mode, mutating)...)
	}
	if checks.Mutating != nil && c.DefaultMode == ModeWarn {
		// A mutating webhook without a mode of its own would be in Warn:
		// one error names them all.
		var inherit []string
		for _, name := range knownWebhooks {
			if checks.Mutating(name) && c.Webhooks[name].Mode == "" && c.Enabled(name) {
				inherit = append(inherit, name)
			}
		}
		if len(inherit) > 0 {
			errs = append(errs, fmt.Sprintf("defaultMode: Warn: mutating webhooks have no Warn mode; give %s a mode of their own (Enforce or Audit)", andList(inherit)))
		}
	}
	errs = append(errs, c.Exemptions.errors()...)
	for i, s := range c.Products.GroupSuffixes {
		if !strings.HasPrefix(s, ".") || len(s) < 2 {
			errs = append(errs, fmt.Sprintf("products.groupSuffixes[%d]: must start with \".\" and name a domain", i))
		}
	}
	errs = append(errs, c.ServiceAccounts.errors(c.Products)...)
	if len(validation.IsDNS1123Label(c.Overrides.Namespace)) > 0 {
		errs = append(errs, "overrides.namespace: must be a namespace name")
	}
	if len(validation.IsDNS1123Subdomain(c.Overrides.ConfigMapName)) > 0 {
		errs = append(errs, "overrides.configMapName: must be a ConfigMap name")
	}
	if len(validation.IsQualifiedName(c.Overrides.ComponentLabel)) > 0 {
		errs = append(errs, "overrides.componentLabel: must be a label key")
	}
	errs = append(errs, c.Overrides.componentErrors(checks.OverrideComponents)...)
	if _, _, err := c.SecurityDefaultsLabel(); err != nil {
		errs = append(errs, err.Error())
	}
	if err := runCheck(checks.PodSecurityDefaults, c.PodSecurity.Defaults); err != nil {
		errs = append(errs, "podSecurity.defaults: "+err.Error())
	}
	if err := runCheck(checks.HarnessProxy, c.Harness.Proxy); err != nil {
		errs = append(errs, "harness.proxy: "+err.Error())
	} else if ca := c.Harness.Proxy.CAConfigMap; ca != "" && len(validation.IsDNS1123Subdomain(ca)) > 0 {
		errs = append(errs, "harness.proxy.caConfigMap: must be a ConfigMap name")
	}
	if len(validation.IsQualifiedName(c.Harness.FailClosedNamespaceLabel)) > 0 {
		errs = append(errs, "harness.failClosedNamespaceLabel: must be a label key")
	}
	if len(validation.IsQualifiedName(c.Harness.ScopedNamespaceLabel)) > 0 {
		errs = append(errs, "harness.scopedNamespaceLabel: must be a label key")
	}
	if c.Harness.ScopedNamespaceLabel == c.Harness.FailClosedNamespaceLabel {
		errs = append(errs, "harness.scopedNamespaceLabel: must differ from harness.failClosedNamespaceLabel")
	}
	if _, err := c.AuditInterval(); err != nil {
		errs = append(errs, err.Error())
	}
	if c.Audit.PageSize < 1 || c.Audit.PageSize > 10000 {
		errs = append(errs, "audit.pageSize: must be between 1 and 10000")
	}
	if c.Audit.QPS <= 0 || c.Audit.Burst < 1 {
		errs = append(errs, "audit.qps, audit.burst: must be positive")
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// errors checks the ServiceAccount rules; products must select each group.
func (s ServiceAccounts) errors(products Products) []string {
	var errs []string
	switch s.Preset {
	case "", PresetReleased, PresetDerived:
	default:
		errs = append(errs, OneOf("serviceAccounts.preset", string(s.Preset), string(PresetReleased), string(PresetDerived)).Error())
	}
	type groupKind struct{ group, kind string }
	seen := map[groupKind]int{}
	for i, p := range s.Products {
		at := fmt.Sprintf("serviceAccounts.products[%d]", i)
		selected := slices.ContainsFunc(products.GroupSuffixes, func(suffix string) bool { return strings.HasSuffix(p.Group, suffix) })
		switch {
		case len(validation.IsDNS1123Subdomain(p.Group)) > 0:
			errs = append(errs, at+".group: must be an API group")
		case !selected:
			errs = append(errs, at+".group: must end in one of products.groupSuffixes, or gatehouse never judges the product")
		}
		if len(validation.IsDNS1035Label(strings.ToLower(p.Kind))) > 0 {
			errs = append(errs, at+".kind: must be a kind")
		}
		if j, dup := seen[groupKind{p.Group, p.Kind}]; dup {
			errs = append(errs, fmt.Sprintf("%s: the same group and kind as serviceAccounts.products[%d]", at, j))
		} else {
			seen[groupKind{p.Group, p.Kind}] = i
		}
		switch p.Rule {
		case RuleNamed:
			sample := strings.ReplaceAll(p.Name, ClusterNamePlaceholder, "x")
			if p.Name == "" || strings.ContainsAny(sample, "{}") || len(validation.IsDNS1123Subdomain(sample)) > 0 {
				errs = append(errs, at+".name: must be a ServiceAccount name, where "+ClusterNamePlaceholder+" may stand for the cluster's name")
			}
		case RuleNone, RuleDerived:
			if p.Name != "" {
				errs = append(errs, fmt.Sprintf("%s.name: only a %s rule takes a name", at, RuleNamed))
			}
		default:
			errs = append(errs, OneOf(at+".rule", string(p.Rule), string(RuleNamed), string(RuleNone), string(RuleDerived)).Error())
		}
	}
	return errs
}

// componentErrors checks the component table of overrides: the shape this
// package owns (one of componentTable and components; each component's
// scope), then the policy's rules, each error attributed to its field.
func (o Overrides) componentErrors(check func(Overrides) error) []string {
	var errs []string
	if o.ComponentTable != "" && len(o.Components) > 0 {
		errs = append(errs, "overrides.componentTable: set componentTable or components, not both "+
			"(components is the whole table and replaces the preset)")
	}
	for i, c := range o.Components {
		if c.Scope != ScopeSingleton && c.Scope != ScopePerSite {
			errs = append(errs, OneOf(fmt.Sprintf("overrides.components[%d].scope", i), string(c.Scope), string(ScopeSingleton), string(ScopePerSite)).Error())
		}
	}
	if len(errs) > 0 || check == nil {
		return errs
	}
	err := check(o)
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []string{"overrides." + err.Error()}
	}
	for _, e := range joined.Unwrap() {
		errs = append(errs, "overrides."+e.Error())
	}
	return errs
}

// OneOf is the one phrasing of a value outside its set, for a field of the
// configuration or a flag: `<name>: must be A, B or C (got "x")`. got is
// what the user wrote (a flag, the configuration), never a value from a
// manifest.
func OneOf(name, got string, allowed ...string) error {
	return fmt.Errorf("%s: must be %s (got %q)", name, orList(allowed), got)
}

// orList is "A", "A or B", "A, B or C"; andList the same with "and".
func orList(items []string) string { return joinLast(items, " or ") }

func andList(items []string) string { return joinLast(items, " and ") }

func joinLast(items []string, last string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// modeErrors checks one mode; empty is allowed (the default applies).
func modeErrors(field string, m Mode, mutating bool) []string {
	switch m {
	case "", ModeEnforce, ModeAudit:
		return nil
	case ModeWarn:
		if mutating {
			return []string{field + ": mutating webhooks have no Warn mode: they patch (Enforce) or record what they would patch (Audit)"}
		}
		return nil
	}
	return []string{OneOf(field, string(m), string(ModeEnforce), string(ModeWarn), string(ModeAudit)).Error()}
}

// errors checks every exemption; each error names its field.
func (e Exemptions) errors() []string {
	var errs []string
	for i, ns := range e.Namespaces {
		if len(validation.IsDNS1123Label(ns)) > 0 {
			errs = append(errs, fmt.Sprintf("exemptions.namespaces[%d]: must be a namespace name", i))
		}
	}
	for i, l := range e.NamespaceLabels {
		field := fmt.Sprintf("exemptions.namespaceLabels[%d]", i)
		if len(validation.IsQualifiedName(l.Key)) > 0 {
			errs = append(errs, field+".key: must be a label key")
		}
		switch l.Operator {
		case LabelOpIn:
			if len(l.Values) == 0 {
				errs = append(errs, field+".values: operator In needs at least one value")
			}
			for j, v := range l.Values {
				if len(validation.IsValidLabelValue(v)) > 0 {
					errs = append(errs, fmt.Sprintf("%s.values[%d]: must be a label value", field, j))
				}
			}
		case LabelOpExists:
			if len(l.Values) > 0 {
				errs = append(errs, field+".values: operator Exists takes no values")
			}
		default:
			errs = append(errs, OneOf(field+".operator", l.Operator, LabelOpIn, LabelOpExists).Error())
		}
	}
	for i, u := range e.Usernames {
		if strings.TrimSpace(u) == "" {
			errs = append(errs, fmt.Sprintf("exemptions.usernames[%d]: must not be empty", i))
		}
	}
	for i, g := range e.Groups {
		if strings.TrimSpace(g) == "" {
			errs = append(errs, fmt.Sprintf("exemptions.groups[%d]: must not be empty", i))
		}
	}
	for i, sa := range e.ServiceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || (name != "*" && len(validation.IsDNS1123Subdomain(name)) > 0) {
			errs = append(errs, fmt.Sprintf(`exemptions.serviceAccounts[%d]: must be "namespace/name" or "namespace/*"`, i))
		}
	}
	return errs
}

// ModeOf is the mode of the named webhook: its own, or DefaultMode.
func (c *ServerConfig) ModeOf(name string) Mode {
	if m := c.Webhooks[name].Mode; m != "" {
		return m
	}
	if c.DefaultMode == "" {
		return ModeEnforce
	}
	return c.DefaultMode
}

// runCheck runs check on v; a nil check passes.
func runCheck[T any](check func(T) error, v T) error {
	if check == nil {
		return nil
	}
	return check(v)
}

// Enabled reports whether the named webhook is switched on.
func (c *ServerConfig) Enabled(name string) bool {
	w, ok := c.Webhooks[name]
	return !ok || w.Enabled == nil || *w.Enabled
}

// Load reads a configuration file strictly (unknown fields are errors) and
// defaults it.
func Load(path string) (ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ServerConfig{}, err
	}
	// Decoding is case-sensitive and strict: a misspelt, miscased or
	// duplicated key is an error, never silently ignored.
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return ServerConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	var c ServerConfig
	strictErrs, err := kjson.UnmarshalStrict(jsonData, &c)
	if err != nil {
		return ServerConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(strictErrs) > 0 {
		return ServerConfig{}, fmt.Errorf("%s: %w", path, errors.Join(strictErrs...))
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return ServerConfig{}, fmt.Errorf("%s: must start with apiVersion: %s and kind: %s", path, APIVersion, Kind)
	}
	c.SetDefaults()
	return c, nil
}
