package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// SelectionsFieldManager owns what Selections writes: the managed
// namespace labels and the harnessed-accounts matchCondition; a label
// someone else set is theirs.
const SelectionsFieldManager = "gatehouse-selections"

// Selections keeps the selections of the webhook configurations current
// from cluster state (webhooks/route/selection.go,
// docs/harness-proxy-and-labels.md):
//   - harness-proxy's fail-closed selection (docs/contracts.md §4): every
//     namespace that an OperatorHarness with injectProxyConfiguration: true
//     names carries the harnessed label, as soon as both the harness and
//     the namespace exist, so a pod created there while gatehouse is
//     unavailable is refused rather than started without the proxy;
//   - harness-labels' selection: every namespace that carries the scope
//     label of an OperatorHarness in Enforce mode carries the scoped label,
//     and only those namespaces' objects are sent to it;
//   - the entries only harnessed service accounts need reach
//     (route.HarnessedAccountEntries) carry the matchCondition
//     route.HarnessedAccountsCondition, the accounts the harnesses claim.
//
// The labels are written with server-side apply under their own field
// manager: a GitOps tool that owns the Namespace's other fields does not
// fight it, and when a label is no longer wanted the manager gives it up
// (it is removed unless someone else also set it). Every event re-decides
// every namespace; a Namespace is written only when it changes.
type Selections struct {
	Client client.Client
	// Reader reads the webhook configurations uncached (they are two
	// objects, read on each reconcile; a cache would watch every one).
	Reader  client.Reader
	Options route.Options
	// Configuration names the webhook configurations (both kinds).
	Configuration string
}

// resync re-applies the selections this often even without an event, so
// that a webhook configuration replaced without the condition gets it back.
const resync = time.Minute

// allNamespaces is the single work item.
var allNamespaces = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all-selections"}}

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// SetupWithManager registers the reconciler: it watches Namespaces (their
// metadata) at once and each kind of OperatorHarness once it is served
// (helmetica's is optional).
func (r *Selections) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := crhandler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{allNamespaces}
	})
	namespaces := &metav1.PartialObjectMetadata{}
	namespaces.SetGroupVersionKind(namespaceGVK)
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("selections").
		WatchesMetadata(namespaces, enqueue).
		Complete(r); err != nil {
		return err
	}
	for _, gvk := range harness.GVKs() {
		watched := &unstructured.Unstructured{}
		watched.SetGroupVersionKind(gvk)
		name := "selections-" + gvk.Group
		if err := mgr.Add(waitForKind{mgr: mgr, gvk: gvk, start: func() error {
			return ctrl.NewControllerManagedBy(mgr).Named(name).
				Watches(watched, enqueue).
				Complete(r)
		}}); err != nil {
			return err
		}
	}
	return nil
}

// Reconcile gives every namespace the managed labels it should carry and
// gives up those it should not, and brings the harnessed-accounts condition
// of the webhook configurations up to date.
func (r *Selections) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var harnesses []map[string]any
	for _, gvk := range harness.GVKs() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Client.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) {
				continue // the kind is not installed: no harness of it
			}
			return reconcile.Result{}, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			harnesses = append(harnesses, list.Items[i].Object)
		}
	}
	namespaces := &metav1.PartialObjectMetadataList{}
	namespaces.SetGroupVersionKind(namespaceGVK.GroupVersion().WithKind("NamespaceList"))
	if err := r.Client.List(ctx, namespaces); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing namespaces: %w", err)
	}
	managed := []string{r.Options.HarnessedNamespaceLabel, r.Options.ScopedNamespaceLabel}
	for _, ns := range namespaces.Items {
		want := map[string]string{}
		if ns.DeletionTimestamp == nil {
			want = route.ManagedNamespaceLabels(r.Options, ns.Name, ns.Labels, harnesses)
		}
		if !r.differs(ns, want, managed) {
			continue
		}
		if err := r.apply(ctx, ns.Name, want); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.applyAccounts(ctx, route.HarnessedAccountsExpression(harnesses)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: resync}, nil
}

// webhookConfigurationKinds are the two kinds whose entries may carry the
// harnessed-accounts condition.
var webhookConfigurationKinds = []schema.GroupVersionKind{
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
}

// applyAccounts sets the harnessed-accounts condition to expr on every
// entry of HarnessedAccountEntries that the webhook configurations have
// (which depends on their layout) and that does not carry it already. It
// applies only that condition, by server-side apply, so the rest of each
// entry stays whoever applied it.
func (r *Selections) applyAccounts(ctx context.Context, expr string) error {
	wanted := map[string]bool{}
	for _, name := range route.HarnessedAccountEntries(r.Options) {
		wanted[name] = true
	}
	for _, gvk := range webhookConfigurationKinds {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(gvk)
		if err := r.Reader.Get(ctx, client.ObjectKey{Name: r.Configuration}, live); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading %s %s: %w", gvk.Kind, r.Configuration, err)
		}
		entries, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
		var apply []any
		for _, e := range entries {
			entry, _ := e.(map[string]any)
			name, _ := entry["name"].(string)
			if !wanted[name] || conditionIs(entry, expr) {
				continue
			}
			apply = append(apply, map[string]any{"name": name, "matchConditions": []any{
				map[string]any{"name": route.HarnessedAccountsCondition, "expression": expr},
			}})
		}
		if len(apply) == 0 {
			continue
		}
		patch := &unstructured.Unstructured{Object: map[string]any{"webhooks": apply}}
		patch.SetGroupVersionKind(gvk)
		patch.SetName(r.Configuration)
		//nolint:staticcheck // as in apply: an unstructured Apply patch.
		if err := r.Client.Patch(ctx, patch, client.Apply, client.FieldOwner(SelectionsFieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("adding %s to %s %s: %w", route.HarnessedAccountsCondition, gvk.Kind, r.Configuration, err)
		}
	}
	return nil
}

// conditionIs reports whether a webhook entry carries the
// harnessed-accounts condition with expression expr.
func conditionIs(entry map[string]any, expr string) bool {
	conditions, _ := entry["matchConditions"].([]any)
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["name"] == route.HarnessedAccountsCondition {
			return c["expression"] == expr
		}
	}
	return false
}

// differs reports whether applying want would change ns: a wanted label
// it lacks, or a managed label it carries, that this manager applied, and
// that is no longer wanted.
func (r *Selections) differs(ns metav1.PartialObjectMetadata, want map[string]string, managed []string) bool {
	for _, key := range managed {
		_, has := ns.Labels[key]
		_, wanted := want[key]
		if wanted && !has || !wanted && has && r.owns(ns, key) {
			return true
		}
	}
	return false
}

// apply sets exactly labels (none gives up every label this manager set)
// on namespace name.
func (r *Selections) apply(ctx context.Context, name string, labels map[string]string) error {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	ns.SetName(name)
	if len(labels) > 0 {
		ns.SetLabels(labels)
	}
	//nolint:staticcheck // controller-runtime's Apply patch with an unstructured object: no generated apply configuration needed.
	err := r.Client.Patch(ctx, ns, client.Apply, client.FieldOwner(SelectionsFieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("labelling namespace %s: %w", name, err)
	}
	return nil
}

// owns reports whether this manager applied the label key of ns.
func (r *Selections) owns(ns metav1.PartialObjectMetadata, key string) bool {
	field := fmt.Sprintf(`"f:%s"`, key)
	for _, f := range ns.ManagedFields {
		if f.Manager == SelectionsFieldManager && f.Operation == metav1.ManagedFieldsOperationApply &&
			f.FieldsV1 != nil && strings.Contains(f.FieldsV1.GetRawString(), field) {
			return true
		}
	}
	return false
}
