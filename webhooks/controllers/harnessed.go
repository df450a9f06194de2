package controllers

import (
	"context"
	"fmt"
	"slices"

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
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
)

// HarnessedNamespacesFieldManager owns the harnessed-namespace label that
// HarnessedNamespaces sets; a label someone else set is theirs.
const HarnessedNamespacesFieldManager = "gatehouse-harnessed-namespaces"

// HarnessedNamespaces keeps harness-proxy's fail-closed selection current
// (docs/contracts.md §4): every namespace that an OperatorHarness with
// injectProxyConfiguration: true names carries Label, as soon as both the
// harness and the namespace exist, so a pod created there while gatehouse
// is unavailable is refused rather than started without the proxy. The
// webhook configurations and the combined endpoints select harnessed
// namespaces by that label, so they follow without being rewritten.
//
// The label is written with server-side apply under its own field manager:
// a GitOps tool that owns the Namespace's other fields does not fight it,
// and when no harness names a namespace any more the manager gives the
// label up (it is removed unless someone else also set it). Every event
// re-decides every namespace; a Namespace is written only when it changes.
type HarnessedNamespaces struct {
	Client client.Client
	Label  string
}

// allNamespaces is the single work item.
var allNamespaces = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all-harnessed-namespaces"}}

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// SetupWithManager registers the reconciler: it watches Namespaces (their
// metadata) at once and each kind of OperatorHarness once it is served
// (helmetica's is optional).
func (r *HarnessedNamespaces) SetupWithManager(mgr ctrl.Manager) error {
	enqueue := crhandler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{allNamespaces}
	})
	namespaces := &metav1.PartialObjectMetadata{}
	namespaces.SetGroupVersionKind(namespaceGVK)
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("harnessed-namespaces").
		WatchesMetadata(namespaces, enqueue).
		Complete(r); err != nil {
		return err
	}
	for _, gvk := range harness.GVKs {
		watched := &unstructured.Unstructured{}
		watched.SetGroupVersionKind(gvk)
		name := "harnessed-namespaces-" + gvk.Group
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

// Reconcile labels every namespace a harness injects into and gives up the
// label of every other namespace this manager labelled.
func (r *HarnessedNamespaces) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
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
	injected := proxy.InjectedNamespaces(harnesses)
	namespaces := &metav1.PartialObjectMetadataList{}
	namespaces.SetGroupVersionKind(namespaceGVK.GroupVersion().WithKind("NamespaceList"))
	if err := r.Client.List(ctx, namespaces); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing namespaces: %w", err)
	}
	for _, ns := range namespaces.Items {
		_, labelled := ns.Labels[r.Label]
		want := slices.Contains(injected, ns.Name) && ns.DeletionTimestamp == nil
		switch {
		case want && !labelled:
			if err := r.apply(ctx, ns.Name, true); err != nil {
				return reconcile.Result{}, err
			}
		case !want && labelled && r.owns(ns):
			if err := r.apply(ctx, ns.Name, false); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	return reconcile.Result{}, nil
}

// apply sets (or, with set false, gives up) the label on namespace name.
func (r *HarnessedNamespaces) apply(ctx context.Context, name string, set bool) error {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(namespaceGVK)
	ns.SetName(name)
	if set {
		ns.SetLabels(map[string]string{r.Label: "true"})
	}
	//nolint:staticcheck // controller-runtime's Apply patch with an unstructured object: no generated apply configuration needed.
	err := r.Client.Patch(ctx, ns, client.Apply, client.FieldOwner(HarnessedNamespacesFieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("labelling namespace %s: %w", name, err)
	}
	return nil
}

// owns reports whether this manager applied a field of ns.
func (r *HarnessedNamespaces) owns(ns metav1.PartialObjectMetadata) bool {
	for _, f := range ns.ManagedFields {
		if f.Manager == HarnessedNamespacesFieldManager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
