package controllers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// WebhookConfigurations writes gatehouse's own webhook configurations, and
// the admission policy that goes with them, as the server's configuration
// renders them (render.WebhookConfigurations, what `gatehouse manifests`
// prints for the same configuration): a Helm value that puts a webhook in
// Audit, exempts a namespace or renames a selection label reaches the API
// server with the pods that judge by it, with no rendering step in between.
//
// The two webhook configurations must exist (the chart creates them empty,
// so that Helm owns their lifecycle and an uninstall removes them); their
// entries are replaced, their metadata is kept but for gatehouse's label.
// Every entry's caBundle is CAFile's (the serving Secret's ca.crt), so no
// other writer owns part of an entry and a webhook switched off leaves no
// remnant. The harnessed-accounts condition Selections applies is carried
// over to the entries that keep it. The policy gatehouse-managed-labels and
// its binding are created when rendered, owned by gatehouse's ClusterRole
// (PolicyOwner: the garbage collector removes them with the installation,
// while deleting the webhook configurations, break glass, leaves them in
// force), and deleted when no longer rendered.
//
// A write is an update of the whole object, made only when a server-side
// dry run of it differs from the stored object: the API server's defaults
// are its own, and an unchanged configuration costs at most five reads per Interval
// (the owner, the two configurations, the policy and its binding).
// Leader-elected: during a rollout the replica that leads writes its own
// configuration, and the server's modes decide safely either way
// (webhooks/route/drift.go).
type WebhookConfigurations struct {
	// Client writes; Reader reads uncached (a handful of named objects).
	Client client.Client
	Reader client.Reader
	// Manifests are the options the entries are rendered with; their
	// Certificate must be empty (no cainjector annotation).
	Manifests route.ManifestOptions
	// CAFile holds the PEM bundle every caBundle carries.
	CAFile string
	// PolicyOwner names the ClusterRole that owns the managed-labels policy
	// and its binding (gatehouse's own).
	PolicyOwner string
	Interval    time.Duration

	// seen remembers, per object, the rendering and stored version last
	// found equal, to skip the dry run while neither changes.
	seen map[string]string
}

// NeedLeaderElection: one writer at a time.
func (w *WebhookConfigurations) NeedLeaderElection() bool { return true }

// Start writes at once, then every Interval, until ctx ends.
func (w *WebhookConfigurations) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("webhook-configurations")
	var previous string
	for {
		changed, err := w.Sync(ctx)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // a stop, not a failure of the write
		}
		now := ""
		if err != nil {
			now = err.Error()
		}
		switch {
		case err != nil && now != previous:
			log.Error(err, "cannot write the webhook configurations; the registered ones stay as they are", "configuration", render.ConfigurationName)
		case err == nil && previous != "":
			log.Info("the webhook configurations are written again", "configuration", render.ConfigurationName)
		}
		for _, c := range changed {
			log.Info("wrote the server's rendering", "object", c)
		}
		previous = now
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.Interval):
		}
	}
}

var webhookConfigurationWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gatehouse_webhook_configuration_writes_total",
	Help: "Writes of gatehouse's own webhook configurations and admission policy by the leader, by kind and result (updated, created, deleted, error).",
}, []string{"kind", "result"})

func init() { metrics.Registry.MustRegister(webhookConfigurationWrites) }

// The kinds Sync writes, in order: the configurations first, so that a
// deleted one (break glass) stops the write before the policies.
var (
	validatingKind = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
	mutatingKind   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	policyKind     = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}
	bindingKind    = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}
)

// Sync renders the objects and writes those that differ from the stored
// ones; it returns what it wrote ("<Kind> <name>").
func (w *WebhookConfigurations) Sync(ctx context.Context) ([]string, error) {
	if w.seen == nil {
		w.seen = map[string]string{}
	}
	ca, err := os.ReadFile(w.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle for the entries: %w", err)
	}
	if len(bytes.TrimSpace(ca)) == 0 {
		return nil, fmt.Errorf("%s is empty: the serving Secret's issuer writes no ca.crt, so the API server could not verify gatehouse", w.CAFile)
	}
	objs, err := w.Objects(ca)
	if err != nil {
		return nil, err
	}
	rendered := map[schema.GroupVersionKind]*unstructured.Unstructured{}
	for _, obj := range objs {
		rendered[obj.GroupVersionKind()] = obj
	}
	// The owner is read only when a policy is written or may be deleted:
	// the entries never wait on it.
	var owner *metav1.OwnerReference
	ownerOf := func() (*metav1.OwnerReference, error) {
		if owner == nil {
			var err error
			if owner, err = w.owner(ctx); err != nil {
				return nil, err
			}
		}
		return owner, nil
	}
	var written []string
	for _, gvk := range []schema.GroupVersionKind{validatingKind, mutatingKind, policyKind, bindingKind} {
		name := render.ConfigurationName
		if gvk == policyKind || gvk == bindingKind {
			name = render.ManagedLabelsPolicyName
		}
		want := rendered[gvk]
		wrote, err := w.write(ctx, gvk, name, want, ownerOf)
		if err != nil {
			webhookConfigurationWrites.WithLabelValues(gvk.Kind, "error").Inc()
			return written, err
		}
		if wrote != "" {
			webhookConfigurationWrites.WithLabelValues(gvk.Kind, wrote).Inc()
			written = append(written, fmt.Sprintf("%s %s (%s)", gvk.Kind, name, wrote))
		}
	}
	return written, nil
}

// owner is the reference the policy and its binding carry: to the
// ClusterRole PolicyOwner, which the chart installs and an uninstall
// removes.
func (w *WebhookConfigurations) owner(ctx context.Context) (*metav1.OwnerReference, error) {
	role := &metav1.PartialObjectMetadata{}
	role.SetGroupVersionKind(clusterRoleKind)
	if err := w.Reader.Get(ctx, client.ObjectKey{Name: w.PolicyOwner}, role); err != nil {
		return nil, fmt.Errorf("reading the ClusterRole %s, which owns the managed-labels policy: %w", w.PolicyOwner, err)
	}
	// No blockOwnerDeletion: it would need update on the ClusterRole's
	// finalizers where OwnerReferencesPermissionEnforcement runs.
	return &metav1.OwnerReference{APIVersion: clusterRoleKind.GroupVersion().String(), Kind: clusterRoleKind.Kind,
		Name: role.Name, UID: role.UID}, nil
}

var clusterRoleKind = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}

// Objects are what the leader writes, in the order `gatehouse manifests`
// prints them, with every entry's caBundle set to ca (left out when ca is
// empty: `serve --print-webhook-configurations`).
func (w *WebhookConfigurations) Objects(ca []byte) ([]*unstructured.Unstructured, error) {
	if w.Manifests.Certificate != "" {
		return nil, errors.New("the written entries carry their own caBundle: render them without a cert-manager Certificate")
	}
	if l := w.Manifests.Layout; l != "" && l != route.LayoutCombined && l != route.LayoutSeparate {
		return nil, fmt.Errorf("layout %s: gatehouse writes the combined or separate layout only (apply the in-process layout from `gatehouse manifests`)", l)
	}
	doc, err := render.WebhookConfigurations(w.Manifests)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	for {
		// Into an Unstructured, whose decoder reads integers as int64, as
		// the client reads the stored objects.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding the rendered webhook configurations: %w", err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding the rendered webhook configurations: %w", err)
		}
		out = append(out, obj)
	}
	if len(ca) == 0 {
		return out, nil
	}
	bundle := base64.StdEncoding.EncodeToString(ca)
	for _, obj := range out {
		entries, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		if len(entries) == 0 {
			continue
		}
		for _, e := range entries {
			if err := unstructured.SetNestedField(e.(map[string]any), bundle, "clientConfig", "caBundle"); err != nil {
				return nil, err
			}
		}
		if err := unstructured.SetNestedSlice(obj.Object, entries, "webhooks"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// write makes the stored object gvk/name what want renders (nil: a webhook
// configuration without entries, no policy). It returns what it did
// ("" for nothing).
func (w *WebhookConfigurations) write(ctx context.Context, gvk schema.GroupVersionKind, name string, want *unstructured.Unstructured,
	ownerOf func() (*metav1.OwnerReference, error)) (string, error) {
	policy := gvk == policyKind || gvk == bindingKind
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	if err := w.Reader.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
		switch {
		case !apierrors.IsNotFound(err):
			return "", fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
		case !policy:
			return "", fmt.Errorf("%s %s does not exist: gatehouse fills it but does not create it (the chart and deploy/managed-webhooks do)", gvk.Kind, name)
		case want == nil:
			return "", nil
		}
		owner, err := ownerOf()
		if err != nil {
			return "", err
		}
		want.SetOwnerReferences([]metav1.OwnerReference{*owner})
		if err := w.Client.Create(ctx, want); err != nil {
			return "", fmt.Errorf("creating %s %s: %w", gvk.Kind, name, err)
		}
		return "created", nil
	}
	var owner *metav1.OwnerReference
	if policy {
		var err error
		if owner, err = ownerOf(); err != nil {
			return "", err
		}
	}
	if policy && want == nil {
		if !slices.ContainsFunc(live.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == owner.UID }) {
			return "", nil // not gatehouse's to remove
		}
		if err := w.Client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID()), ResourceVersion: ptr.To(live.GetResourceVersion())}); err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("deleting %s %s: %w", gvk.Kind, name, err)
		}
		return "deleted", nil
	}
	desired := live.DeepCopy()
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	field := "spec"
	if policy {
		for k, v := range want.GetLabels() {
			labels[k] = v
		}
		desired.SetOwnerReferences([]metav1.OwnerReference{*owner})
		desired.Object["spec"] = want.Object["spec"]
	} else {
		field = "webhooks"
		labels["app.kubernetes.io/name"] = "gatehouse"
		var entries []any
		if want != nil {
			entries, _, _ = unstructured.NestedSlice(want.Object, "webhooks")
		}
		carryAccountsCondition(live, entries)
		if entries == nil {
			delete(desired.Object, "webhooks")
		} else {
			desired.Object["webhooks"] = entries
		}
	}
	desired.SetLabels(labels)
	key := gvk.Kind + "/" + name
	fingerprint := fmt.Sprintf("%x %s", sha256.Sum256(fingerprintOf(desired.Object)), live.GetResourceVersion())
	if w.seen[key] == fingerprint {
		return "", nil
	}
	dry := desired.DeepCopy()
	if err := w.Client.Update(ctx, dry, client.DryRunAll); err != nil {
		return "", fmt.Errorf("updating %s %s (dry run): %w", gvk.Kind, name, err)
	}
	if equality.Semantic.DeepEqual(dry.Object[field], live.Object[field]) && equality.Semantic.DeepEqual(dry.GetLabels(), live.GetLabels()) &&
		equality.Semantic.DeepEqual(dry.GetOwnerReferences(), live.GetOwnerReferences()) {
		w.seen[key] = fingerprint
		return "", nil
	}
	if err := w.Client.Update(ctx, desired); err != nil {
		return "", fmt.Errorf("updating %s %s: %w", gvk.Kind, name, err)
	}
	return "updated", nil
}

// carryAccountsCondition copies, onto each entry of entries, the
// harnessed-accounts condition the stored entry of the same name carries
// (Selections', controllers/selections.go): without it the entry would be
// sent every service account's requests until Selections applies it again.
func carryAccountsCondition(live *unstructured.Unstructured, entries []any) {
	stored, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
	conditions := map[string]any{}
	for _, e := range stored {
		entry, _ := e.(map[string]any)
		list, _ := entry["matchConditions"].([]any)
		for _, c := range list {
			if c, ok := c.(map[string]any); ok && c["name"] == route.HarnessedAccountsCondition {
				conditions[fmt.Sprint(entry["name"])] = c
			}
		}
	}
	for _, e := range entries {
		entry := e.(map[string]any)
		if c, ok := conditions[fmt.Sprint(entry["name"])]; ok {
			list, _ := entry["matchConditions"].([]any)
			entry["matchConditions"] = append(list, c)
		}
	}
}

// fingerprintOf is obj as JSON (decoded YAML always encodes).
func fingerprintOf(obj map[string]any) []byte {
	b, _ := json.Marshal(obj)
	return b
}
