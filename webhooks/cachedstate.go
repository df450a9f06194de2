package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CachedState is the StateReader of `gatehouse serve`: informer caches of
// DependencyGroups, CustomResourceDefinitionSources and OperatorHarnesses
// (managed fields stripped), with a field index per stateIndex so each
// lookup is a map access whatever the number of objects. Until every
// informer has synced, lookups fail (the webhooks deny) and Ready fails.
type CachedState struct {
	cache  cache.Cache
	synced atomic.Bool
}

// NewCachedState prepares the caches; Start fills them.
func NewCachedState(cfg *rest.Config) (*CachedState, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           runtime.NewScheme(),
		DefaultTransform: keepOnlyWhatIsRead,
	})
	if err != nil {
		return nil, err
	}
	return &CachedState{cache: c}, nil
}

// keepOnlyWhatIsRead trims a cached object to what the lookups read: the
// name and creationTimestamp, and spec. Managed fields, annotations (with a
// last-applied-configuration as large as the object), labels and status are
// dropped, so the caches of a large cluster cost little memory.
func keepOnlyWhatIsRead(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, key := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := meta[key]; ok {
			kept[key] = v
		}
	}
	u.Object = map[string]any{
		"apiVersion": u.Object["apiVersion"],
		"kind":       u.Object["kind"],
		"metadata":   kept,
		"spec":       u.Object["spec"],
	}
	return u, nil
}

// Start registers the indexes and informers and runs them until ctx ends.
func (s *CachedState) Start(ctx context.Context) error {
	for _, idx := range stateIndexes {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(idx.gvk)
		values := idx.values
		if err := s.cache.IndexField(ctx, obj, idx.name, func(o client.Object) []string {
			u, ok := o.(*unstructured.Unstructured)
			if !ok {
				return nil
			}
			return values(u.Object)
		}); err != nil {
			return fmt.Errorf("index %s: %w", idx.name, err)
		}
	}
	go func() {
		if s.cache.WaitForCacheSync(ctx) {
			s.synced.Store(true)
		}
	}()
	return s.cache.Start(ctx)
}

// Ready is a readiness check: false until every cache has synced.
func (s *CachedState) Ready(*http.Request) error {
	if !s.synced.Load() {
		return errors.New("cluster state caches not synced yet")
	}
	return nil
}

var errNotSynced = errors.New("cluster state caches not synced yet")

// Lookup implements StateReader with the field index.
func (s *CachedState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	if !s.synced.Load() {
		return nil, errNotSynced
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.cache.List(context.Background(), list, client.MatchingFields{index: value}); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].GetName()
	}
	return sortedUnique(names), nil
}

// Exists implements StateReader.
func (s *CachedState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	if !s.synced.Load() {
		return false, errNotSynced
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err := s.cache.Get(context.Background(), types.NamespacedName{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
