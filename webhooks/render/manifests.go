package render

import (
	"bytes"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// ConfigurationName is the name of both webhook configurations.
const ConfigurationName = "gatehouse"

// WebhookConfigurations renders the registry as the validating and mutating
// webhook configurations the API server needs, as one multi-document YAML,
// followed by the admission policies that go with them: the in-process
// layout's, and, when gatehouse manages the selections, the policy that
// protects the managed namespace labels (managed_labels.go).
func WebhookConfigurations(o route.ManifestOptions) ([]byte, error) {
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: objectMeta(o),
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: objectMeta(o),
	}
	layout := o.Layout
	if layout == "" {
		layout = route.DefaultLayout
	}
	type entry struct {
		typ route.Type
		w   admissionregistrationv1.ValidatingWebhook
	}
	var entries []entry
	switch layout {
	case route.LayoutSeparate:
		for _, def := range route.Registry() {
			for _, w := range o.Entries(def) {
				entries = append(entries, entry{def.Type, w})
			}
		}
	case route.LayoutCombined:
		for _, g := range route.Groups() {
			for _, w := range o.GroupEntries(g) {
				entries = append(entries, entry{g.Type, w})
			}
		}
	case route.LayoutInProcess:
		for _, g := range route.Groups() {
			for _, w := range o.GroupEntries(g) {
				entries = append(entries, entry{g.Type, inProcessEntry(o, g, w)})
			}
		}
	default:
		return nil, configv1alpha1.OneOf("layout", layout, route.LayoutSeparate, route.LayoutCombined, route.LayoutInProcess)
	}
	for _, e := range entries {
		w := e.w
		switch e.typ {
		case route.Validating:
			validating.Webhooks = append(validating.Webhooks, w)
		case route.Mutating:
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
	if layout == route.LayoutInProcess {
		policies, err := inProcessManifests(o)
		if err != nil {
			return nil, err
		}
		out.Write(policies)
	}
	managed, err := managedLabelsManifests(o)
	if err != nil {
		return nil, err
	}
	out.Write(managed)
	return out.Bytes(), nil
}

func objectMeta(o route.ManifestOptions) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Name: ConfigurationName, Labels: map[string]string{"app.kubernetes.io/name": "gatehouse"}}
	if o.Certificate != "" {
		meta.Annotations = map[string]string{"cert-manager.io/inject-ca-from": o.Certificate}
	}
	return meta
}

// marshalManifest renders obj as YAML without the empty creationTimestamp
// that metav1.ObjectMeta always serialises, and without an empty status
// (which an admission policy's type always has).
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
	if status, ok := m["status"].(map[string]any); ok && len(status) == 0 {
		delete(m, "status")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rendering manifest: %w", err)
	}
	return out, nil
}
