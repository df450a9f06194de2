package controllers

import (
	"context"
	"fmt"
	"strings"

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
	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// NamespaceLabelsFieldManager owns the managed namespace labels that
// NamespaceLabels sets; a label someone else set is theirs.
const NamespaceLabelsFieldManager = "gatehouse-namespace-labels"

// NamespaceLabels keeps the selections of the webhook configurations
// current from cluster state (webhooks/selection.go,
// docs/harness-proxy-and-labels.md):
//   - harness-proxy's fail-closed selection (docs/contracts.md §4): every
//     namespace that an OperatorHarness with injectProxyConfiguration: true
//     names carries the harnessed label, as soon as both the harness and
//     the namespace exist, so a pod created there while gatehouse is
//     unavailable is refused rather than started without the proxy;
//   - harness-labels' selection: every namespace that carries the scope
//     label of an OperatorHarness in Enforce mode carries the scoped label,
//     and only those namespaces' objects are sent to it.
//
// The labels are written with server-side apply under their own field
// manager: a GitOps tool that owns the Namespace's other fields does not
// fight it, and when a label is no longer wanted the manager gives it up
// (it is removed unless someone else also set it). Every event re-decides
// every namespace; a Namespace is written only when it changes.
type NamespaceLabels struct {
	Client  client.Client
	Options webhooks.Options
}

// allNamespaces is the single work item.
var allNamespaces = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all-namespace-labels"}}

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// SetupWithManager registers the reconciler: it watches Namespaces (their
// metadata) at once and each kind of OperatorHarness once it is served
// (helmetica's is optional).
func (r *NamespaceLabels) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := crhandler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{allNamespaces}
	})
	namespaces := &metav1.PartialObjectMetadata{}
	namespaces.SetGroupVersionKind(namespaceGVK)
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("namespace-labels").
		WatchesMetadata(namespaces, enqueue).
		Complete(r); err != nil {
		return err
	}
	for _, gvk := range harness.GVKs {
		watched := &unstructured.Unstructured{}
		watched.SetGroupVersionKind(gvk)
		name := "namespace-labels-" + gvk.Group
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
// gives up those it should not.
func (r *NamespaceLabels) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var harnesses []map[string]any
	for _, gvk := range harness.GVKs {
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
			want = webhooks.ManagedNamespaceLabels(r.Options, ns.Name, ns.Labels, harnesses)
		}
		if !r.differs(ns, want, managed) {
			continue
		}
		if err := r.apply(ctx, ns.Name, want); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// differs reports whether applying want would change ns: a wanted label
// it lacks, or a managed label it carries, that this manager applied, and
// that is no longer wanted.
func (r *NamespaceLabels) differs(ns metav1.PartialObjectMetadata, want map[string]string, managed []string) bool {
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
func (r *NamespaceLabels) apply(ctx context.Context, name string, labels map[string]string) error {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	ns.SetName(name)
	if len(labels) > 0 {
		ns.SetLabels(labels)
	}
	//nolint:staticcheck // controller-runtime's Apply patch with an unstructured object: no generated apply configuration needed.
	err := r.Client.Patch(ctx, ns, client.Apply, client.FieldOwner(NamespaceLabelsFieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("labelling namespace %s: %w", name, err)
	}
	return nil
}

// owns reports whether this manager applied the label key of ns.
func (r *NamespaceLabels) owns(ns metav1.PartialObjectMetadata, key string) bool {
	field := fmt.Sprintf(`"f:%s"`, key)
	for _, f := range ns.ManagedFields {
		if f.Manager == NamespaceLabelsFieldManager && f.Operation == metav1.ManagedFieldsOperationApply &&
			f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), field) {
			return true
		}
	}
	return false
}
