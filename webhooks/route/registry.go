package route

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
)

// Type says whether a webhook validates or mutates.
type Type string

const (
	Validating Type = "Validating"
	Mutating   Type = "Mutating"
)

// Definition is one row of the registry. Name and Path are public API: they
// appear in deploy/, metrics, logs and `gatehouse check` output.
type Definition struct {
	Name          string
	Path          string
	Type          Type
	FailurePolicy admissionregistrationv1.FailurePolicyType
	Intercept     Intercept
	// FailClosedOnlyInHarnessed limits failurePolicy Fail to namespaces
	// carrying Options.HarnessedNamespaceLabel: the webhook configuration
	// gets a second entry, "<name>-unlabelled", on the same path with
	// failurePolicy Ignore for every other namespace. While gatehouse
	// answers, both entries decide alike.
	FailClosedOnlyInHarnessed bool
}

var (
	create       = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	update       = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
	createUpdate = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}

	// pods are judged on CREATE only: a pod's security context is immutable
	// afterwards, and a namespace that opts in later must not block edits of
	// the pods it already runs. Ephemeral containers are added by UPDATE of
	// their own subresource, and each new one is judged.
	pods                = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Operations: create}
	ephemeralContainers = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: SubresourceEphemeralContainers, Kind: "Pod", Operations: update}

	dependencyGroups = Resource{GVR: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "dependencygroups"}, Kind: "DependencyGroup"}
	crdSources       = Resource{GVR: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "customresourcedefinitionsources"}, Kind: "CustomResourceDefinitionSource"}
	harnesses        = Resource{GVR: schema.GroupVersionResource{Group: "vshn.net", Version: "v1", Resource: "operatorharnesses"}, Kind: "OperatorHarness"}
	// helmeticaHarnesses: helmetica's own OperatorHarness (scopeToLabel and
	// operator only), read wherever a harness is read.
	helmeticaHarnesses = Resource{GVR: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "operatorharnesses"}, Kind: "OperatorHarness"}
	exceptions         = Resource{GVR: exceptionsv1alpha1.SchemeGroupVersion.WithResource("exceptions"), Kind: exceptionsv1alpha1.KindException}
	clusterExceptions  = Resource{GVR: exceptionsv1alpha1.SchemeGroupVersion.WithResource("clusterexceptions"), Kind: exceptionsv1alpha1.KindClusterException}
	configMaps         = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap"}
	pvcs               = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Kind: "PersistentVolumeClaim"}

	// Subresources other than status whose UPDATE keeps metadata changes
	// (their registry strategies reset only spec and status).
	// namespaces: harness-labels takes a Namespace's own CREATE and UPDATE,
	// to add the managed namespace labels (selection.go).
	namespaces        = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace", Operations: createUpdate}
	namespaceFinalize = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Subresource: "finalize", Kind: "Namespace"}
	csrApproval       = Resource{GVR: schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}, Subresource: "approval", Kind: "CertificateSigningRequest"}
)

// ExceptionWebhook is the webhook that reviews gatehouse's exceptions
// themselves; no exception excuses its findings.
const ExceptionWebhook = "exception"

// LabelsGuardWebhook is the webhook that keeps harnessed operators from
// moving objects out of a harness's scope; no exception excuses its
// findings.
const LabelsGuardWebhook = "harness-labels-guard"

// Excusable reports whether an exception may excuse the findings of def: a
// validating webhook's, but neither the exception webhook's (an exception
// that excused the review of exceptions could widen itself) nor
// harness-labels-guard's (the scope labels are the boundary the harness
// draws around an operator, changed only by gatehouse; an exception, which
// a namespace may hold of its own, must not open it). A mutating webhook's
// denial says its patch could not be made, not that the object breaks a
// rule, so there is nothing to excuse.
func Excusable(def Definition) bool {
	return def.Type == Validating && def.Name != ExceptionWebhook && def.Name != LabelsGuardWebhook
}

// SubresourceEphemeralContainers is the subresource that adds ephemeral
// containers to a pod.
const SubresourceEphemeralContainers = "ephemeralcontainers"

// The registry is the one table of every webhook gatehouse serves; the
// server, `gatehouse check` and the manifests in deploy/ all read it.

// Registry lists every webhook gatehouse serves, in the order the API server
// would call them within one kind (mutating first, then validating): a
// copy, so that no caller changes the table serve, check and the manifests
// share (a Definition's slices are the table's: read them only).
func Registry() []Definition { return slices.Clone(registry) }

// registry is Registry's table.
var registry = []Definition{
	{
		Name:          "pod-security-defaults",
		Path:          "/mutate/pod-security-defaults",
		Type:          Mutating,
		FailurePolicy: admissionregistrationv1.Ignore,
		Intercept:     Intercept{Operations: create, Resources: []Resource{pods, ephemeralContainers}, Namespaces: OptedInNamespaces},
	},
	{
		Name:          "harness-proxy",
		Path:          "/mutate/harness-proxy",
		Type:          Mutating,
		FailurePolicy: admissionregistrationv1.Fail,
		// pods only on CREATE: injecting on UPDATE would block their
		// deletion (and pod specs are immutable anyway).
		Intercept:                 Intercept{Operations: create, Resources: []Resource{pods}},
		FailClosedOnlyInHarnessed: true,
	},
	{
		Name:          "harness-labels",
		Path:          "/mutate/harness-labels",
		Type:          Mutating,
		FailurePolicy: admissionregistrationv1.Ignore,
		// Every resource (subresources create nothing): any namespaced
		// object may be created in a scoped namespace. UPDATEs are
		// harness-labels-guard's.
		Intercept: Intercept{Operations: create, Beyond: EveryResource, Namespaces: ScopedNamespaces, Acts: labelActs,
			Resources: []Resource{namespaces}},
	},
	{
		Name:          "secret-scope",
		Path:          "/validate/secret-scope",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: append(PodResources(), pvcs), Beyond: ProductResources, Acts: scopeActs},
	},
	{
		Name:          "service-account",
		Path:          "/validate/service-account",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: PodResources(), Beyond: ProductResources, Acts: serviceAccountActs},
	},
	{
		Name:          "component-overrides",
		Path:          "/validate/component-overrides",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: []Resource{configMaps}, Object: OverrideConfigMapOnly},
	},
	{
		Name:          "harness",
		Path:          "/validate/harness",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: []Resource{harnesses, helmeticaHarnesses}},
	},
	{
		Name:          "dependency-group",
		Path:          "/validate/dependency-group",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: []Resource{dependencyGroups}},
	},
	{
		Name:          "crd-source",
		Path:          "/validate/crd-source",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: []Resource{crdSources}},
	},
	{
		// The UPDATE half of LABEL, fail-closed: a denial must not be lost
		// to an error that an Ignore policy turns into an allow. Only
		// UPDATEs by service accounts that change labels are sent, through
		// the main resource and every subresource that keeps metadata
		// changes (docs/harness-proxy-and-labels.md, "Edges").
		Name:          LabelsGuardWebhook,
		Path:          "/validate/" + LabelsGuardWebhook,
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept: Intercept{Operations: update, Beyond: EveryResourceAndStatus,
			Resources: []Resource{namespaceFinalize, csrApproval},
			Updates:   UpdatesByServiceAccounts | UpdatesChangingLabels},
	},
	{
		Name:          "pod-security",
		Path:          "/validate/pod-security",
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: append([]Resource{pods, ephemeralContainers}, podTemplateResources()...), Namespaces: OptedInNamespaces},
	},
	{
		// EXC: gatehouse's own exceptions (docs/contracts.md §12), held to
		// the configuration's exceptions block. Fail: an exception nobody
		// reviewed could be broader than the rules allow.
		Name:          ExceptionWebhook,
		Path:          "/validate/" + ExceptionWebhook,
		Type:          Validating,
		FailurePolicy: admissionregistrationv1.Fail,
		Intercept:     Intercept{Operations: createUpdate, Resources: []Resource{clusterExceptions, exceptions}},
	},
}

// Names returns the registry's webhook names in order.
func Names() []string {
	out := make([]string, len(registry))
	for i, d := range registry {
		out[i] = d.Name
	}
	return out
}

// Lookup returns the definition named name.
func Lookup(name string) (Definition, bool) {
	for _, d := range registry {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// validateRegistry checks the table itself: unique names and paths, paths
// that say what the webhook does, a known failure policy, operations.
func validateRegistry(defs []Definition) error {
	names, paths := map[string]bool{}, map[string]bool{}
	for _, d := range defs {
		if d.Name == "" || names[d.Name] {
			return fmt.Errorf("webhook name %q is empty or used twice", d.Name)
		}
		if paths[d.Path] {
			return fmt.Errorf("webhook %s: path %q is used twice", d.Name, d.Path)
		}
		names[d.Name], paths[d.Path] = true, true
		wantPrefix := map[Type]string{Validating: "/validate/", Mutating: "/mutate/"}[d.Type]
		if wantPrefix == "" || d.Path != wantPrefix+d.Name {
			return fmt.Errorf("webhook %s: path %q must be %q", d.Name, d.Path, wantPrefix+d.Name)
		}
		if d.FailurePolicy != admissionregistrationv1.Fail && d.FailurePolicy != admissionregistrationv1.Ignore {
			return fmt.Errorf("webhook %s: failure policy %q", d.Name, d.FailurePolicy)
		}
		if len(d.Intercept.Operations) == 0 {
			return fmt.Errorf("webhook %s: no operations", d.Name)
		}
	}
	return nil
}

func init() {
	if err := validateRegistry(registry); err != nil {
		panic(err)
	}
}
