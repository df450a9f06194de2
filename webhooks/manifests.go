package webhooks

import (
	"bytes"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ManifestOptions say where the API server reaches gatehouse.
type ManifestOptions struct {
	// Namespace and Service route requests through a Service (port 443).
	Namespace string
	Service   string
	// URL, when set, is used instead of the Service (base URL, no trailing
	// slash): for a local control plane without kube-proxy.
	URL string
	// Certificate is the cert-manager Certificate ("<namespace>/<name>")
	// whose CA cainjector writes into every caBundle.
	Certificate string
	// Layout is LayoutSeparate (one entry per webhook) or LayoutCombined
	// (one entry per Group); empty means DefaultLayout.
	Layout string
	// Options must equal the server's.
	Options
}

// The webhook configuration layouts: both are served by every gatehouse.
const (
	LayoutSeparate  = "separate"
	LayoutCombined  = "combined"
	LayoutInProcess = "in-process" // combined, less what admission policies decide (inprocess.go)
	DefaultLayout   = LayoutCombined
)

// ConfigurationName is the name of both webhook configurations.
const ConfigurationName = "gatehouse"

// TimeoutSeconds bounds every call the API server makes to gatehouse.
const TimeoutSeconds = 5

// excludedNamespaces are never sent to gatehouse, so that gatehouse, the
// control plane and node heartbeats can always start, whatever gatehouse's state.
func excludedNamespaces(own string) []string {
	return []string{own, "kube-system", "kube-node-lease"}
}

// WebhookConfigurations renders the registry as the validating and mutating
// webhook configurations the API server needs, as one multi-document YAML.
func WebhookConfigurations(o ManifestOptions) ([]byte, error) {
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: o.objectMeta(),
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: o.objectMeta(),
	}
	layout := o.Layout
	if layout == "" {
		layout = DefaultLayout
	}
	type entry struct {
		typ Type
		w   admissionregistrationv1.ValidatingWebhook
	}
	var entries []entry
	switch layout {
	case LayoutSeparate:
		for _, def := range Registry {
			for _, w := range o.entries(def) {
				entries = append(entries, entry{def.Type, w})
			}
		}
	case LayoutCombined:
		for _, g := range Groups {
			if w, ok := o.groupEntry(g); ok {
				entries = append(entries, entry{g.Type, w})
			}
		}
	case LayoutInProcess:
		for _, g := range Groups {
			if w, ok := o.groupEntry(g); ok {
				entries = append(entries, entry{g.Type, o.inProcessEntry(g, w)})
			}
		}
	default:
		return nil, fmt.Errorf("layout %q: must be %s, %s or %s", layout, LayoutSeparate, LayoutCombined, LayoutInProcess)
	}
	for _, e := range entries {
		w := e.w
		switch e.typ {
		case Validating:
			validating.Webhooks = append(validating.Webhooks, w)
		case Mutating:
			ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
			mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy,
				MatchPolicy: w.MatchPolicy, NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector,
				SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
				MatchConditions: w.MatchConditions, ReinvocationPolicy: &ifNeeded,
			})
		}
	}
	var out bytes.Buffer
	for _, obj := range []any{mutating, validating} {
		if obj == any(mutating) && len(mutating.Webhooks) == 0 {
			continue
		}
		doc, err := marshalManifest(obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	if layout == LayoutInProcess {
		policies, err := o.inProcessManifests()
		if err != nil {
			return nil, err
		}
		out.Write(policies)
	}
	return out.Bytes(), nil
}

func (o ManifestOptions) objectMeta() metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Name: ConfigurationName, Labels: map[string]string{"app.kubernetes.io/name": "gatehouse"}}
	if o.Certificate != "" {
		meta.Annotations = map[string]string{"cert-manager.io/inject-ca-from": o.Certificate}
	}
	return meta
}

func (o ManifestOptions) validatingWebhook(def Definition) admissionregistrationv1.ValidatingWebhook {
	failure := def.FailurePolicy
	equivalent := admissionregistrationv1.Equivalent
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(TimeoutSeconds)
	w := admissionregistrationv1.ValidatingWebhook{
		Name:                    def.Name + ".gatehouse.dev",
		ClientConfig:            o.clientConfig(def.Path),
		Rules:                   def.Intercept.rules(),
		FailurePolicy:           &failure,
		MatchPolicy:             &equivalent,
		SideEffects:             &none,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key:      "kubernetes.io/metadata.name",
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   excludedNamespaces(o.Namespace),
		}}},
	}
	if def.Intercept.OptIn {
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      o.SecurityDefaultsLabel.Key,
			Operator: metav1.LabelSelectorOpIn,
			Values:   []string{o.SecurityDefaultsLabel.Value},
		})
	}
	w.MatchConditions = def.Intercept.matchConditions(o.Options)
	return w
}

// groupEntry is the one configuration entry of a combined group: the union
// of its members' rules, narrowed by a matchConditions expression that is
// true exactly for the requests some member's own entry would be sent.
// Namespace opt-ins are decided by the server, except where every member
// shares one.
func (o ManifestOptions) groupEntry(g Group) (admissionregistrationv1.ValidatingWebhook, bool) {
	members := g.members()
	if len(members) == 0 {
		return admissionregistrationv1.ValidatingWebhook{}, false
	}
	first := o.validatingWebhook(members[0].def)
	w := first
	w.Name = g.Name + ".gatehouse.dev"
	w.ClientConfig = o.clientConfig(g.Path)
	failure := g.FailurePolicy
	w.FailurePolicy = &failure
	w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: excludedNamespaces(o.Namespace),
	}}}
	allLabelled, allOptIn := true, true
	w.Rules = nil
	var alts []string
	for _, m := range members {
		w.Rules = append(w.Rules, m.def.Intercept.rules()...)
		alts = append(alts, m.memberExpression(o.Options))
		allLabelled = allLabelled && m.where == labelledOnly
		allOptIn = allOptIn && m.def.Intercept.OptIn
	}
	if allLabelled {
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: o.HarnessedNamespaceLabel, Operator: metav1.LabelSelectorOpExists,
		})
	}
	if allOptIn {
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: o.SecurityDefaultsLabel.Key, Operator: metav1.LabelSelectorOpIn, Values: []string{o.SecurityDefaultsLabel.Value},
		})
	}
	w.MatchConditions = []admissionregistrationv1.MatchCondition{{
		Name: "gatehouse-members", Expression: strings.Join(alts, " || "),
	}}
	return w, true
}

// entries are the configuration entries of one webhook: one, or for a
// webhook that fails closed only in harnessed namespaces, the failing-closed
// entry there and a failing-open one, "<name>-unlabelled", everywhere else.
func (o ManifestOptions) entries(def Definition) []admissionregistrationv1.ValidatingWebhook {
	w := o.validatingWebhook(def)
	if !def.FailClosedOnlyInHarnessed {
		return []admissionregistrationv1.ValidatingWebhook{w}
	}
	elsewhere := *w.DeepCopy()
	elsewhere.Name = def.Name + "-unlabelled.gatehouse.dev"
	ignore := admissionregistrationv1.Ignore
	elsewhere.FailurePolicy = &ignore
	w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: o.HarnessedNamespaceLabel, Operator: metav1.LabelSelectorOpExists,
	})
	elsewhere.NamespaceSelector.MatchExpressions = append(elsewhere.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: o.HarnessedNamespaceLabel, Operator: metav1.LabelSelectorOpDoesNotExist,
	})
	return []admissionregistrationv1.ValidatingWebhook{w, elsewhere}
}

func (o ManifestOptions) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	if o.URL != "" {
		url := o.URL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url}
	}
	port := int32(443)
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: o.Namespace, Name: o.Service, Path: &path, Port: &port,
	}}
}

// rules groups the built-in resources by API group, version and operations
// (subresources as "<resource>/<subresource>"); Products adds a wildcard rule
// that the match condition narrows to product groups, AllResources one for
// every resource (and "*/status" with StatusSubresources).
func (in Intercept) rules() []admissionregistrationv1.RuleWithOperations {
	allScopes := admissionregistrationv1.AllScopes
	var out []admissionregistrationv1.RuleWithOperations
	index := map[string]int{}
	for _, r := range in.Resources {
		ops := r.operations(in)
		key := fmt.Sprintf("%s/%s/%v", r.GVR.Group, r.GVR.Version, ops)
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, admissionregistrationv1.RuleWithOperations{
				Operations: ops,
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{r.GVR.Group}, APIVersions: []string{r.GVR.Version}, Scope: &allScopes,
				},
			})
		}
		name := r.GVR.Resource
		if r.Subresource != "" {
			name += "/" + r.Subresource
		}
		out[i].Resources = append(out[i].Resources, name)
	}
	if in.Products || in.AllResources {
		resources := []string{"*"}
		if in.AllResources && in.StatusSubresources {
			resources = append(resources, "*/status")
		}
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: in.Operations,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: resources, Scope: &allScopes,
			},
		})
	}
	return out
}

// marshalManifest renders obj as YAML without the empty creationTimestamp
// that metav1.ObjectMeta always serialises.
func marshalManifest(obj any) ([]byte, error) {
	raw, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rendering manifest: %w", err)
	}
	return out, nil
}
