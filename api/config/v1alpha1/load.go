package v1alpha1

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	goyaml "go.yaml.in/yaml/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
// route.OptionsFromConfig lays the configured values over their built-in
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
	if c.Exceptions.MaxDuration.Duration == 0 {
		c.Exceptions.MaxDuration = metav1.Duration{Duration: DefaultMaxExceptionDuration}
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
	if len(a.Reports.APIs) == 0 {
		a.Reports.APIs = []ReportAPI{ReportAPIPolicyReport}
	}
}

// MinAuditInterval is the shortest background audit interval accepted: a
// pass lists every intercepted resource of the cluster.
const MinAuditInterval = time.Minute

// AuditInterval parses Audit.Interval; 0 means off.
func (c *ServerConfig) AuditInterval() (time.Duration, error) {
	d, err := c.auditInterval(field.NewPath("audit", "interval"))
	if err != nil {
		return 0, err
	}
	return d, nil
}

// auditInterval is AuditInterval, its error at fldPath.
func (c *ServerConfig) auditInterval(fldPath *field.Path) (time.Duration, *field.Error) {
	if c.Audit.Interval == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.Audit.Interval)
	if err != nil {
		return 0, field.Invalid(fldPath, c.Audit.Interval, `must be a duration such as "1h", or "0" for off`)
	}
	if d < MinAuditInterval {
		return 0, field.Invalid(fldPath, c.Audit.Interval, fmt.Sprintf(`must be at least %s, or "0" for off`, MinAuditInterval))
	}
	return d, nil
}

// DefaultMaxExceptionDuration is the longest an exception may run when the
// configuration says nothing: 30 days.
const DefaultMaxExceptionDuration = 30 * 24 * time.Hour

// MaxExceptionDuration is the longest exceptions.maxDuration accepted: an
// exception is temporary, and one that must outlive a year is an exemption.
const MaxExceptionDuration = 365 * 24 * time.Hour

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
	key, value, errs := c.securityDefaultsLabel(field.NewPath("podSecurity", "namespaceLabel"))
	return key, value, errs.ToAggregate()
}

// securityDefaultsLabel is SecurityDefaultsLabel, its errors at fldPath.
func (c *ServerConfig) securityDefaultsLabel(fldPath *field.Path) (key, value string, errs field.ErrorList) {
	label := c.PodSecurity.NamespaceLabel
	key, value, ok := strings.Cut(label, "=")
	if !ok {
		return "", "", field.ErrorList{field.Invalid(fldPath, label, "must be key=value")}
	}
	for _, msg := range validation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(fldPath, label, "key: "+msg))
	}
	if len(validation.IsValidLabelValue(value)) > 0 || value == "" {
		errs = append(errs, field.Invalid(fldPath, label, "value must be a non-empty label value"))
	}
	if len(errs) > 0 {
		return "", "", errs
	}
	return key, value, nil
}

// PolicyChecks check the values whose rules belong to the policies that read
// them. route.ValidateConfig passes them in, so that this package imports
// nothing of gatehouse's (the import-arrow test in cmd/gatehouse holds it to
// that). A nil check is not run. Each check is given the path of the value it
// checks and attributes its errors to that path or to fields below it.
type PolicyChecks struct {
	// PodSecurityDefaults checks the built-in pod security defaults table
	// with these overrides laid over it.
	PodSecurityDefaults func(*field.Path, PodSecurityDefaults) field.ErrorList
	// HarnessProxy checks the proxy harness-proxy injects, each unset field
	// taking its built-in value.
	HarnessProxy func(*field.Path, HarnessProxy) field.ErrorList
	// Mutating reports whether the named webhook mutates (Warn is refused
	// for it).
	Mutating func(name string) bool
	// OverrideComponents checks the component table of overrides: the
	// preset ComponentTable names, or Components, each error below the
	// path it is given (overrides.components[1].kinds[0]).
	OverrideComponents func(*field.Path, Overrides) field.ErrorList
}

// Validate checks the values that defaulting cannot fix, one error per
// problem, each with the path of its field. knownWebhooks are the
// registry's names; a configuration naming another webhook is an error (a
// typo would otherwise leave a webhook silently enabled). The errors of
// checks are reported in field order with the rest.
//
// An error may print the value at fault: the configuration is the
// operator's own, and it holds no secrets. A value from a manifest never
// reaches these errors.
func (c *ServerConfig) Validate(knownWebhooks []string, checks PolicyChecks) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{Kind}))
	}
	serving := field.NewPath("serving")
	if c.Serving.Port < 1 || c.Serving.Port > 65535 {
		errs = append(errs, field.Invalid(serving.Child("port"), c.Serving.Port, "must be between 1 and 65535"))
	}
	if c.Serving.TLSMinVersion != "1.2" && c.Serving.TLSMinVersion != "1.3" {
		errs = append(errs, field.NotSupported(serving.Child("tlsMinVersion"), c.Serving.TLSMinVersion, []string{"1.2", "1.3"}))
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
	defaultMode := field.NewPath("defaultMode")
	errs = append(errs, modeErrors(defaultMode, c.DefaultMode, false)...)
	for _, name := range names {
		at := field.NewPath("webhooks").Key(name)
		if !known[name] {
			errs = append(errs, field.NotSupported(at, name, knownWebhooks))
			continue
		}
		mutating := checks.Mutating != nil && checks.Mutating(name)
		errs = append(errs, modeErrors(at.Child("mode"), c.Webhooks[name].Mode, mutating)...)
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
			errs = append(errs, field.Invalid(defaultMode, string(c.DefaultMode),
				fmt.Sprintf("mutating webhooks have no Warn mode; give %s a mode of their own (Enforce or Audit)", andList(inherit))))
		}
	}
	errs = append(errs, c.Exemptions.errors(field.NewPath("exemptions"))...)
	if d := c.Exceptions.MaxDuration.Duration; d <= 0 || d > MaxExceptionDuration {
		errs = append(errs, field.Invalid(field.NewPath("exceptions", "maxDuration"), c.Exceptions.MaxDuration.Duration.String(),
			fmt.Sprintf("must be positive and at most %s", MaxExceptionDuration)))
	}
	groupSuffixes := field.NewPath("products", "groupSuffixes")
	for i, s := range c.Products.GroupSuffixes {
		if !strings.HasPrefix(s, ".") || len(s) < 2 {
			errs = append(errs, field.Invalid(groupSuffixes.Index(i), s, `must start with "." and name a domain`))
		}
	}
	errs = append(errs, c.ServiceAccounts.errors(field.NewPath("serviceAccounts"), groupSuffixes, c.Products)...)
	overrides := field.NewPath("overrides")
	if len(validation.IsDNS1123Label(c.Overrides.Namespace)) > 0 {
		errs = append(errs, field.Invalid(overrides.Child("namespace"), c.Overrides.Namespace, "must be a namespace name"))
	}
	if len(validation.IsDNS1123Subdomain(c.Overrides.ConfigMapName)) > 0 {
		errs = append(errs, field.Invalid(overrides.Child("configMapName"), c.Overrides.ConfigMapName, "must be a ConfigMap name"))
	}
	if len(validation.IsQualifiedName(c.Overrides.ComponentLabel)) > 0 {
		errs = append(errs, field.Invalid(overrides.Child("componentLabel"), c.Overrides.ComponentLabel, "must be a label key"))
	}
	errs = append(errs, c.Overrides.componentErrors(overrides, checks.OverrideComponents)...)
	podSecurity := field.NewPath("podSecurity")
	_, _, labelErrs := c.securityDefaultsLabel(podSecurity.Child("namespaceLabel"))
	errs = append(errs, labelErrs...)
	errs = append(errs, runCheck(checks.PodSecurityDefaults, podSecurity.Child("defaults"), c.PodSecurity.Defaults)...)
	harness := field.NewPath("harness")
	if proxyErrs := runCheck(checks.HarnessProxy, harness.Child("proxy"), c.Harness.Proxy); len(proxyErrs) > 0 {
		errs = append(errs, proxyErrs...)
	} else if ca := c.Harness.Proxy.CAConfigMap; ca != "" && len(validation.IsDNS1123Subdomain(ca)) > 0 {
		errs = append(errs, field.Invalid(harness.Child("proxy", "caConfigMap"), ca, "must be a ConfigMap name"))
	}
	failClosed, scoped := harness.Child("failClosedNamespaceLabel"), harness.Child("scopedNamespaceLabel")
	if len(validation.IsQualifiedName(c.Harness.FailClosedNamespaceLabel)) > 0 {
		errs = append(errs, field.Invalid(failClosed, c.Harness.FailClosedNamespaceLabel, "must be a label key"))
	}
	if len(validation.IsQualifiedName(c.Harness.ScopedNamespaceLabel)) > 0 {
		errs = append(errs, field.Invalid(scoped, c.Harness.ScopedNamespaceLabel, "must be a label key"))
	}
	if c.Harness.ScopedNamespaceLabel == c.Harness.FailClosedNamespaceLabel {
		errs = append(errs, field.Invalid(scoped, c.Harness.ScopedNamespaceLabel, "must differ from "+failClosed.String()))
	}
	audit := field.NewPath("audit")
	if _, err := c.auditInterval(audit.Child("interval")); err != nil {
		errs = append(errs, err)
	}
	if c.Audit.PageSize < 1 || c.Audit.PageSize > 10000 {
		errs = append(errs, field.Invalid(audit.Child("pageSize"), c.Audit.PageSize, "must be between 1 and 10000"))
	}
	if c.Audit.QPS <= 0 {
		errs = append(errs, field.Invalid(audit.Child("qps"), c.Audit.QPS, "must be positive"))
	}
	if c.Audit.Burst < 1 {
		errs = append(errs, field.Invalid(audit.Child("burst"), c.Audit.Burst, "must be positive"))
	}
	errs = append(errs, c.Audit.Reports.errors(audit.Child("reports"))...)
	return errs
}

// errors checks the report APIs at fldPath: each one gatehouse writes,
// each once, at least one (a background audit that writes no report is
// switched off with audit.interval "0").
func (r AuditReports) errors(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	apis := fldPath.Child("apis")
	if len(r.APIs) == 0 {
		return field.ErrorList{field.Required(apis, "name one or both of "+andList([]string{string(ReportAPIPolicyReport), string(ReportAPIOpenReports)}))}
	}
	seen := map[ReportAPI]int{}
	for i, api := range r.APIs {
		at := apis.Index(i)
		if !slices.Contains(ReportAPIs(), api) {
			errs = append(errs, field.NotSupported(at, string(api), ReportAPIs()))
			continue
		}
		if j, dup := seen[api]; dup {
			e := field.Duplicate(at, string(api))
			e.Detail = "the same API as " + apis.Index(j).String()
			errs = append(errs, e)
			continue
		}
		seen[api] = i
	}
	return errs
}

// errors checks the ServiceAccount rules at fldPath; products must select
// each group (groupSuffixes is their path).
func (s ServiceAccounts) errors(fldPath, groupSuffixes *field.Path, products Products) field.ErrorList {
	var errs field.ErrorList
	switch s.Preset {
	case "", PresetReleased, PresetDerived:
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("preset"), string(s.Preset), []ServiceAccountPreset{PresetReleased, PresetDerived}))
	}
	type groupKind struct{ group, kind string }
	seen := map[groupKind]int{}
	for i, p := range s.Products {
		at := fldPath.Child("products").Index(i)
		selected := slices.ContainsFunc(products.GroupSuffixes, func(suffix string) bool { return strings.HasSuffix(p.Group, suffix) })
		switch {
		case len(validation.IsDNS1123Subdomain(p.Group)) > 0:
			errs = append(errs, field.Invalid(at.Child("group"), p.Group, "must be an API group"))
		case !selected:
			errs = append(errs, field.Invalid(at.Child("group"), p.Group, "must end in one of "+groupSuffixes.String()+", or gatehouse never judges the product"))
		}
		if len(validation.IsDNS1035Label(strings.ToLower(p.Kind))) > 0 {
			errs = append(errs, field.Invalid(at.Child("kind"), p.Kind, "must be a kind"))
		}
		if j, dup := seen[groupKind{p.Group, p.Kind}]; dup {
			e := field.Duplicate(at, field.OmitValueType{})
			e.Detail = "the same group and kind as " + fldPath.Child("products").Index(j).String()
			errs = append(errs, e)
		} else {
			seen[groupKind{p.Group, p.Kind}] = i
		}
		name := at.Child("name")
		const nameRule = "must be a ServiceAccount name, where " + ClusterNamePlaceholder + " may stand for the cluster's name"
		switch p.Rule {
		case RuleNamed:
			sample := strings.ReplaceAll(p.Name, ClusterNamePlaceholder, "x")
			switch {
			case p.Name == "":
				errs = append(errs, field.Required(name, nameRule))
			case strings.ContainsAny(sample, "{}") || len(validation.IsDNS1123Subdomain(sample)) > 0:
				errs = append(errs, field.Invalid(name, p.Name, nameRule))
			}
		case RuleNone, RuleDerived:
			if p.Name != "" {
				errs = append(errs, field.Forbidden(name, fmt.Sprintf("only a %s rule takes a name", RuleNamed)))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("rule"), string(p.Rule), []ServiceAccountRule{RuleNamed, RuleNone, RuleDerived}))
		}
	}
	return errs
}

// componentErrors checks the component table of overrides at fldPath: the
// shape this package owns (one of componentTable and components; each
// component's scope), then the policy's rules.
func (o Overrides) componentErrors(fldPath *field.Path, check func(*field.Path, Overrides) field.ErrorList) field.ErrorList {
	var errs field.ErrorList
	if o.ComponentTable != "" && len(o.Components) > 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("componentTable"), "set componentTable or components, not both "+
			"(components is the whole table and replaces the preset)"))
	}
	for i, c := range o.Components {
		if c.Scope != ScopeSingleton && c.Scope != ScopePerSite {
			errs = append(errs, field.NotSupported(fldPath.Child("components").Index(i).Child("scope"), string(c.Scope),
				[]ComponentScope{ScopeSingleton, ScopePerSite}))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return runCheck(check, fldPath, o)
}

// OneOf is the one phrasing of a value outside its set, for a flag, a
// parameter or (through field.NotSupported, which it is) a field of the
// configuration: `<name>: Unsupported value: "x": supported values: "A",
// "B", "C"`. got is what the user wrote (a flag, the configuration), never
// a value from a manifest.
func OneOf(name, got string, allowed ...string) error {
	return field.NotSupported(field.NewPath(name), got, allowed)
}

// andList is "A", "A and B", "A, B and C".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// modeErrors checks one mode at fldPath; empty is allowed (the default
// applies).
func modeErrors(fldPath *field.Path, m Mode, mutating bool) field.ErrorList {
	switch m {
	case "", ModeEnforce, ModeAudit:
		return nil
	case ModeWarn:
		if mutating {
			return field.ErrorList{field.Invalid(fldPath, string(m),
				"mutating webhooks have no Warn mode: they patch (Enforce) or record what they would patch (Audit)")}
		}
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, string(m), []Mode{ModeEnforce, ModeWarn, ModeAudit})}
}

// errors checks every exemption at fldPath.
func (e Exemptions) errors(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ns := range e.Namespaces {
		if len(validation.IsDNS1123Label(ns)) > 0 {
			errs = append(errs, field.Invalid(fldPath.Child("namespaces").Index(i), ns, "must be a namespace name"))
		}
	}
	for i, l := range e.NamespaceLabels {
		at := fldPath.Child("namespaceLabels").Index(i)
		if len(validation.IsQualifiedName(l.Key)) > 0 {
			errs = append(errs, field.Invalid(at.Child("key"), l.Key, "must be a label key"))
		}
		values := at.Child("values")
		switch l.Operator {
		case LabelOpIn:
			if len(l.Values) == 0 {
				errs = append(errs, field.Required(values, "operator In needs at least one value"))
			}
			for j, v := range l.Values {
				if len(validation.IsValidLabelValue(v)) > 0 {
					errs = append(errs, field.Invalid(values.Index(j), v, "must be a label value"))
				}
			}
		case LabelOpExists:
			if len(l.Values) > 0 {
				errs = append(errs, field.Forbidden(values, "operator Exists takes no values"))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("operator"), l.Operator, []string{LabelOpIn, LabelOpExists}))
		}
	}
	for i, u := range e.Usernames {
		if strings.TrimSpace(u) == "" {
			errs = append(errs, field.Required(fldPath.Child("usernames").Index(i), "must not be empty"))
		}
	}
	for i, g := range e.Groups {
		if strings.TrimSpace(g) == "" {
			errs = append(errs, field.Required(fldPath.Child("groups").Index(i), "must not be empty"))
		}
	}
	for i, sa := range e.ServiceAccounts {
		ns, name, ok := strings.Cut(sa, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || (name != "*" && len(validation.IsDNS1123Subdomain(name)) > 0) {
			errs = append(errs, field.Invalid(fldPath.Child("serviceAccounts").Index(i), sa, `must be "namespace/name" or "namespace/*"`))
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

// runCheck runs check on v at fldPath; a nil check passes.
func runCheck[T any](check func(*field.Path, T) field.ErrorList, fldPath *field.Path, v T) field.ErrorList {
	if check == nil {
		return nil
	}
	return check(fldPath, v)
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
	var typeErr *goyaml.TypeError
	if errors.As(err, &typeErr) {
		// The parser's "unmarshal errors:" list, one line per error, each
		// naming the file: "config.yaml: yaml: line 5: key "port" already set in map".
		errs := make([]error, len(typeErr.Errors))
		for i, e := range typeErr.Errors {
			errs[i] = fmt.Errorf("%s: yaml: %s", path, e)
		}
		return ServerConfig{}, errors.Join(errs...)
	}
	if err != nil {
		return ServerConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	var c ServerConfig
	strictErrs, err := kjson.UnmarshalStrict(jsonData, &c)
	if err != nil {
		return ServerConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(strictErrs) > 0 {
		// One line per error, each naming the file.
		errs := make([]error, len(strictErrs))
		for i, e := range strictErrs {
			errs[i] = fmt.Errorf("%s: %w", path, e)
		}
		return ServerConfig{}, errors.Join(errs...)
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		return ServerConfig{}, fmt.Errorf("%s: must start with apiVersion: %s and kind: %s", path, APIVersion, Kind)
	}
	c.SetDefaults()
	return c, nil
}
