// Package v1alpha1 is gatehouse's server configuration file format
// (apiVersion gatehouse.dev/v1alpha1, kind ServerConfig). Every default of
// every contract lives here; flags of `gatehouse serve` override the common
// knobs.
package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// APIVersion and Kind identify the configuration file format.
const (
	APIVersion = "gatehouse.dev/v1alpha1"
	Kind       = "ServerConfig"
)

// ServerConfig is the whole server configuration.
type ServerConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	// Serving configures the listeners.
	Serving Serving `json:"serving,omitempty"`

	// Webhooks switches individual webhooks by their registry name
	// (secret-scope, service-account, ...) and sets their mode. A webhook
	// not listed is enabled, in DefaultMode.
	Webhooks map[string]Webhook `json:"webhooks,omitempty"`

	// DefaultMode is the mode of every webhook that sets none: Enforce
	// (the default), Warn or Audit (docs/rollout.md).
	DefaultMode Mode `json:"defaultMode,omitempty"`

	// Exemptions are the requests gatehouse never judges.
	Exemptions Exemptions `json:"exemptions,omitempty"`

	// Exceptions says which exception objects gatehouse honours and how
	// long one may run (docs/contracts.md §12).
	Exceptions Exceptions `json:"exceptions,omitempty"`

	// Products selects the custom resources that SCOPE's CR walk and SA's
	// derived-name rules apply to.
	Products Products `json:"products,omitempty"`

	// ServiceAccounts says which ServiceAccount each product's operator
	// release gives its pods (SA).
	ServiceAccounts ServiceAccounts `json:"serviceAccounts,omitempty"`

	// PodSecurity configures the pod security defaults (PSC).
	PodSecurity PodSecurity `json:"podSecurity,omitempty"`

	// Overrides configures the component-overrides webhook (OVR).
	Overrides Overrides `json:"overrides,omitempty"`

	// Harness configures the harness-proxy and harness-labels webhooks
	// (PROXY, LABEL).
	Harness Harness `json:"harness,omitempty"`

	// Audit configures the background audit of stored objects.
	Audit Audit `json:"audit,omitempty"`
}

// Audit configures the background audit, which `gatehouse serve
// --role=audit` runs in a Deployment of its own (never a replica that serves
// admission): every stored object of every intercepted resource is reviewed
// through the same chain as a CREATE, and the findings are written as
// reports of the report APIs Reports names (docs/audit.md).
type Audit struct {
	// Interval between the starts of two passes, a Go duration ("1h",
	// "30m"); "0" switches the background audit off. Default "1h".
	Interval string `json:"interval,omitempty"`
	// PageSize is the most objects asked for per list call (pages are
	// also sized by the bytes of their objects). Default 500.
	PageSize int64 `json:"pageSize,omitempty"`
	// QPS and Burst bound the audit's own API requests (a client-side
	// token bucket). Default 20 and 40.
	QPS   float32 `json:"qps,omitempty"`
	Burst int     `json:"burst,omitempty"`
	// Reports says which report APIs the findings are written as.
	Reports AuditReports `json:"reports,omitempty"`
}

// AuditReports configures the reports the background audit writes: one per
// object with something to report, of each API listed, with the same
// content (docs/audit.md).
type AuditReports struct {
	// APIs are the report APIs written, by apiVersion: ReportAPIPolicyReport
	// (PolicyReport and ClusterPolicyReport), ReportAPIOpenReports (Report
	// and ClusterReport), or both. Default [ReportAPIPolicyReport], what
	// earlier releases wrote: an install that sets nothing keeps its reports
	// and the CRDs it has.
	APIs []ReportAPI `json:"apis,omitempty"`
}

// ReportAPI is a report API the background audit can write, named by its
// apiVersion.
type ReportAPI string

// The report APIs.
const (
	// ReportAPIPolicyReport is the Kubernetes Policy Working Group's
	// PolicyReport API (CRDs in deploy/policyreport-crds).
	ReportAPIPolicyReport ReportAPI = "wgpolicyk8s.io/v1alpha2"
	// ReportAPIOpenReports is OpenReports, the API Kyverno and Kubewarden
	// moved to (CRDs in deploy/openreports-crds).
	ReportAPIOpenReports ReportAPI = "openreports.io/v1alpha1"
)

// ReportAPIs are the report APIs, in the order the audit writes them.
func ReportAPIs() []ReportAPI { return []ReportAPI{ReportAPIPolicyReport, ReportAPIOpenReports} }

// Harness configures what harnessed operator pods are sent to, and where the
// harness-proxy webhook fails closed.
type Harness struct {
	// Proxy is the harness proxy service injected into harnessed pods.
	Proxy HarnessProxy `json:"proxy,omitempty"`
	// FailClosedNamespaceLabel is the label key that marks the namespaces of
	// harnessed operators. Pod creation there is refused while gatehouse is
	// unavailable (failurePolicy Fail); elsewhere the proxy is still injected
	// whenever gatehouse answers, but a pod created while it does not is
	// admitted as it is. Default "gatehouse.dev/harnessed".
	FailClosedNamespaceLabel string `json:"failClosedNamespaceLabel,omitempty"`
	// ScopedNamespaceLabel is the label key that marks the namespaces that
	// carry the scope label of an OperatorHarness in Enforce mode, where
	// harness-labels copies it onto every new object. Default
	// "gatehouse.dev/scoped".
	ScopedNamespaceLabel string `json:"scopedNamespaceLabel,omitempty"`
	// ManageSelections has gatehouse keep both labels current itself
	// (a leader-elected controller in serve, docs/harness-proxy-and-labels.md),
	// and the webhook configurations rendered from this configuration
	// rely on them: harness-proxy is then sent pods of harnessed namespaces
	// only, and harness-labels namespaced objects of scoped namespaces only.
	// Off, the selection is static and broad: every namespace is sent.
	ManageSelections bool `json:"manageSelections,omitempty"`
}

// HarnessProxy is where the harness proxy listens and which ConfigMap holds
// its CA certificate. A field left out keeps the built-in value of
// policies/proxy, laid under it when the options are built (SetDefaults
// leaves it unset).
type HarnessProxy struct {
	// Host becomes KUBERNETES_SERVICE_HOST. Default
	// "proxy-service.proxy-namespace.svc".
	Host string `json:"host,omitempty"`
	// Port becomes KUBERNETES_SERVICE_PORT. Default 443.
	Port int32 `json:"port,omitempty"`
	// CAConfigMap is the ConfigMap, in the pod's namespace, whose key ca.crt
	// is the proxy's CA certificate. Default "proxy-root-ca.crt".
	CAConfigMap string `json:"caConfigMap,omitempty"`
}

// Overrides names the component-override ConfigMap and how the operator's
// live workloads are found for resolution.
type Overrides struct {
	// Namespace is the operator namespace. Default "unbounded-system".
	Namespace string `json:"namespace,omitempty"`
	// ConfigMapName is the one ConfigMap the webhook validates. Default
	// "unbounded-component-overrides".
	ConfigMapName string `json:"configMapName,omitempty"`
	// ComponentLabel is the label whose value names a workload's component
	// (net, machina, metalman, ...). Default "app.kubernetes.io/component".
	ComponentLabel string `json:"componentLabel,omitempty"`
	// ComponentTable names the preset component table overrides are
	// checked against: "any" (the default: every component of every
	// upstream release the presets hold, so no released engine's document
	// is denied for its component) or the table of one upstream release,
	// "upstream-<commit>" (docs/component-overrides.md lists them and how to
	// tell which one an operator runs). Set either this or Components.
	ComponentTable string `json:"componentTable,omitempty"`
	// Components is the component table itself, for an unbounded release
	// no preset describes; it replaces the preset.
	Components []OverrideComponent `json:"components,omitempty"`
}

// OverrideComponent is one component of the table: what an override's
// component field may name, and the workloads that component runs.
type OverrideComponent struct {
	// Name, as an override names it (a lowercase RFC 1123 label).
	Name string `json:"name"`
	// Kinds are the workload kinds it runs as: Deployment, DaemonSet or
	// both.
	Kinds []string `json:"kinds"`
	// Scope is Singleton (one workload in the cluster; sites is refused) or
	// PerSite (one workload per Site; sites selects them).
	Scope ComponentScope `json:"scope"`
	// SiteLabels are the label keys, in order, whose value names the Site
	// of one of its workloads, as its operator stamps them (the first the
	// workload carries, on itself or else on its pod template, wins).
	// PerSite only, and required there.
	SiteLabels []string `json:"siteLabels,omitempty"`
}

// ComponentScope says whether a component runs one workload or one per Site.
type ComponentScope string

// The scopes of a component.
const (
	ScopeSingleton ComponentScope = "Singleton"
	ScopePerSite   ComponentScope = "PerSite"
)

// PodSecurity configures the pod-security-defaults and pod-security webhooks.
type PodSecurity struct {
	// NamespaceLabel is the "key=value" label that opts a namespace in.
	// Default "gatehouse.dev/security-defaults=enabled".
	NamespaceLabel string `json:"namespaceLabel,omitempty"`
	// Defaults override single values of the built-in table; a field left
	// out keeps the built-in value.
	Defaults PodSecurityDefaults `json:"defaults,omitempty"`
}

// PodSecurityDefaults are the overridable values of the defaults table.
type PodSecurityDefaults struct {
	RunAsUser                *int64   `json:"runAsUser,omitempty"`
	RunAsGroup               *int64   `json:"runAsGroup,omitempty"`
	FSGroup                  *int64   `json:"fsGroup,omitempty"`
	FSGroupChangePolicy      *string  `json:"fsGroupChangePolicy,omitempty"`
	RunAsNonRoot             *bool    `json:"runAsNonRoot,omitempty"`
	SeccompProfileType       *string  `json:"seccompProfileType,omitempty"`
	AllowPrivilegeEscalation *bool    `json:"allowPrivilegeEscalation,omitempty"`
	CapabilitiesDrop         []string `json:"capabilitiesDrop,omitempty"`
}

// Serving configures the webhook, probe and metrics listeners.
type Serving struct {
	// Port of the HTTPS webhook listener. Default 9443.
	Port int `json:"port,omitempty"`
	// Host the webhook listener binds to. Default: all addresses.
	Host string `json:"host,omitempty"`
	// CertDir holds tls.crt and tls.key, reloaded when they change.
	CertDir string `json:"certDir,omitempty"`
	// TLSMinVersion is "1.2" (default) or "1.3".
	TLSMinVersion string `json:"tlsMinVersion,omitempty"`
	// EnableHTTP2 serves HTTP/2 as well as HTTP/1.1. Off by default: HTTP/2
	// rapid-reset and stream exhaustion bugs have hit admission webhooks,
	// and the API server talks HTTP/1.1 to webhooks anyway.
	EnableHTTP2 bool `json:"enableHTTP2,omitempty"`
	// ProbeAddress serves /healthz and /readyz. Default ":8081".
	ProbeAddress string `json:"probeAddress,omitempty"`
	// MetricsAddress serves Prometheus metrics; "0" disables. Default ":8080".
	MetricsAddress string `json:"metricsAddress,omitempty"`
	// EnableProfiling serves Go's profiles (net/http/pprof) under
	// /debug/pprof/ on the metrics address. Off by default: a profile
	// shows the heap, and with it objects under review.
	EnableProfiling bool `json:"enableProfiling,omitempty"`
}

// Webhook switches one webhook and sets its mode.
type Webhook struct {
	Enabled *bool `json:"enabled,omitempty"`
	// Mode overrides DefaultMode for this webhook. A mutating webhook takes
	// Enforce or Audit: it patches, or it only records what it would patch.
	Mode Mode `json:"mode,omitempty"`
}

// Mode is what a webhook does with its findings.
type Mode string

// The modes. A webhook in Warn or Audit never denies and is rendered with
// failurePolicy Ignore.
const (
	// ModeEnforce denies (validating) or patches (mutating).
	ModeEnforce Mode = "Enforce"
	// ModeWarn admits, with each denying finding as an admission warning
	// (validating webhooks only).
	ModeWarn Mode = "Warn"
	// ModeAudit admits silently: the findings, and a mutating webhook's
	// patch, go to audit annotations and metrics only.
	ModeAudit Mode = "Audit"
)

// Exemptions are the requests gatehouse never judges: they are rendered into
// the webhook configurations where the API server can apply them (namespaces
// into every namespaceSelector, users into a matchCondition), and the server
// checks them again before any webhook decides, counting each exempt
// request as decision "exempt". The namespace gatehouse runs in is always
// exempt, whatever the list says.
type Exemptions struct {
	// Namespaces by name. Default: kube-system and kube-node-lease (the
	// control plane and node heartbeats never wait on gatehouse). Setting
	// the list replaces the default: keep them in it.
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceLabels exempt every namespace that matches any one of them.
	NamespaceLabels []NamespaceLabel `json:"namespaceLabels,omitempty"`
	// Usernames are exempt requesters, exactly as authenticated.
	Usernames []string `json:"usernames,omitempty"`
	// Groups exempt every requester in one of them.
	Groups []string `json:"groups,omitempty"`
	// ServiceAccounts are exempt requesters, "namespace/name", or
	// "namespace/*" for every service account of a namespace.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
}

// Exceptions configures the exception objects (gatehouse.dev/v1alpha1
// ClusterException and Exception): narrow, expiring excuses for chosen
// findings about chosen objects, read from the cluster, as opposed to
// Exemptions, which are configuration and wide.
type Exceptions struct {
	// Namespaced has gatehouse honour Exceptions, each held by a namespace
	// for its own objects, beside ClusterExceptions. Off by default: whoever
	// may create an Exception in a namespace could then excuse that
	// namespace's findings, so a cluster admin opts in, and grants that
	// right, deliberately. Off, an Exception excuses nothing and is refused
	// at admission.
	Namespaced bool `json:"namespaced,omitempty"`
	// MaxDuration is the longest an exception may run: its spec.expires
	// must lie within this of the time it is created or updated. Default
	// 720h (30 days): one release cycle to ship the fix, and a forgotten
	// exception lapses within a month. At most MaxExceptionDuration (a
	// year).
	MaxDuration metav1.Duration `json:"maxDuration,omitempty"`
}

// NamespaceLabel matches namespaces by one label: operator In (the label has
// one of Values) or Exists (the label is set; no Values).
type NamespaceLabel struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// The operators of a NamespaceLabel.
const (
	LabelOpIn     = "In"
	LabelOpExists = "Exists"
)

// ServiceAccounts chooses, per product, the ServiceAccount its operator
// release runs the product's pods as: SA denies any other in the product's
// podOverrides and in the workloads the product controls
// (docs/service-account.md).
type ServiceAccounts struct {
	// Preset is the table the products start from: Released (the default:
	// the kubedoop operators as released on operator-go v0.12.x, each naming
	// its ServiceAccount itself, and the derived rule for products not in
	// its table) or Derived (operator-go after commit e1f8813: every product
	// "<lowercased kind>-<name>", hashed past 253 bytes).
	Preset ServiceAccountPreset `json:"preset,omitempty"`
	// Products set the rule of single products over the preset's.
	Products []ProductServiceAccount `json:"products,omitempty"`
}

// ServiceAccountPreset names a table of ServiceAccount rules.
type ServiceAccountPreset string

// The presets.
const (
	PresetReleased ServiceAccountPreset = "Released"
	PresetDerived  ServiceAccountPreset = "Derived"
)

// ProductServiceAccount is the rule of one product (API group and kind of
// its custom resource).
type ProductServiceAccount struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Rule is Named (Name, where "{name}" stands for the cluster's name:
	// "{name}-sa", "zookeeper"), None (the operator sets no ServiceAccount,
	// so the pods run as the namespace's "default") or Derived (operator-go's
	// "<lowercased kind>-<name>").
	Rule ServiceAccountRule `json:"rule"`
	Name string             `json:"name,omitempty"`
}

// ServiceAccountRule is how an operator names a product's ServiceAccount.
type ServiceAccountRule string

// The rules.
const (
	RuleNamed   ServiceAccountRule = "Named"
	RuleNone    ServiceAccountRule = "None"
	RuleDerived ServiceAccountRule = "Derived"
)

// ClusterNamePlaceholder stands for the cluster's name in a Named rule.
const ClusterNamePlaceholder = "{name}"

// Products selects product custom resources by API group suffix.
type Products struct {
	// GroupSuffixes, each starting with ".", e.g. ".kubedoop.dev" (the default).
	GroupSuffixes []string `json:"groupSuffixes,omitempty"`
}
