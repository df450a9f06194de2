package clusterstate

import (
	"context"
	"errors"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workloadKinds are the kinds OVR resolves against.
var workloadKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
}

// CachedWorkloads is a route.WorkloadReader over an informer cache of the
// Deployments and DaemonSets of one namespace, with managed fields stripped:
// only what resolution reads is worth the memory.
type CachedWorkloads struct {
	cache  cache.Cache
	synced atomic.Bool
}

// NewCachedWorkloads prepares the cache; Start fills it.
func NewCachedWorkloads(cfg *rest.Config, namespace string) (*CachedWorkloads, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:            runtime.NewScheme(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	return &CachedWorkloads{cache: c}, nil
}

// Start runs the informers until ctx ends.
func (w *CachedWorkloads) Start(ctx context.Context) error {
	for _, gvk := range workloadKinds {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		if _, err := w.cache.GetInformer(ctx, obj); err != nil {
			return err
		}
	}
	go func() {
		if w.cache.WaitForCacheSync(ctx) {
			w.synced.Store(true)
		}
	}()
	return w.cache.Start(ctx)
}

// ListWorkloads implements route.WorkloadReader. Before the cache has synced it
// answers an error rather than a partial list.
func (w *CachedWorkloads) ListWorkloads(ctx context.Context, namespace, kind string, labels map[string]string) ([]map[string]any, error) {
	if !w.synced.Load() {
		return nil, errors.New("workload cache not synced yet")
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind + "List"})
	if err := w.cache.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list.Items))
	for i := range list.Items {
		out[i] = list.Items[i].Object
	}
	return out, nil
}

// Synced reports whether the cache has synced (`gatehouse audit` waits for
// it before reviewing, so resolution reads the whole namespace).
func (w *CachedWorkloads) Synced() bool { return w.synced.Load() }
