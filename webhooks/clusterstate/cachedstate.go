package clusterstate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
)

// CachedState is the route.StateReader and route.NamespaceReader of
// `gatehouse serve`: informer caches of DependencyGroups,
// CustomResourceDefinitionSources, OperatorHarnesses of both groups,
// ClusterRoles and Roles (trimmed to what the lookups read), with a field
// index per index of the policies (indexes.go) so each lookup is a map
// access whatever the number of objects, and metadata-only caches of
// namespaces (name and labels) and CRDs (names). Until every informer has
// synced, lookups fail (the webhooks deny) and Ready fails.
//
// helmetica's CRDs are optional (deploy/default installs none of them), so
// a kind is watched only while its CRD exists: a kind whose CRD is absent
// has no objects and its lookups answer "none"; a CRD that appears starts
// its kind's informer, and until that has synced the kind's lookups fail.
type CachedState struct {
	cache cache.Cache
	// kinds holds, per cached kind, whether its informer has synced.
	kinds map[schema.GroupVersionKind]*kindCache
	ctx   context.Context
	// live reads a namespace the cache does not have yet (created a moment
	// ago) from the API server, at most liveReadsPerSecond a second;
	// missing remembers for missingTTL the namespaces it did not find.
	live      metadata.Interface
	liveReads flowcontrol.RateLimiter
	missingMu sync.Mutex
	missing   map[string]time.Time
	synced    atomic.Bool
}

// kindCache is the state of one cached kind's informer.
type kindCache struct {
	crd      string // <plural>.<group>; "" for a built-in kind
	starting atomic.Bool
	indexed  atomic.Bool
	synced   atomic.Bool
}

// The kinds cached as metadata only.
var (
	namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	crdGVK       = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

// errKindAbsent: the kind's CRD is not installed, so it has no objects.
var errKindAbsent = errors.New("kind not installed")

// Reads of namespaces the cache has not seen. The API server's
// NamespaceLifecycle plugin rejects objects in namespaces that do not exist
// before any webhook runs, so in a cluster a miss is a namespace created a
// moment ago that the watch has not delivered yet: rare, and worth one read.
// A client calling gatehouse directly can make every review miss, so the
// reads are bounded: a namespace found missing is not read again for
// missingTTL, and beyond liveReadsPerSecond a miss reads as a namespace
// without labels (the scope label is then not copied) instead of waiting.
const (
	liveReadTimeout    = time.Second
	liveReadsPerSecond = 20
	missingTTL         = 5 * time.Second
	maxMissing         = 1024
)

// NewCachedState prepares the caches; Start fills them.
func NewCachedState(cfg *rest.Config) (*CachedState, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme:           runtime.NewScheme(),
		DefaultTransform: keepOnlyWhatIsRead,
	})
	if err != nil {
		return nil, err
	}
	// The client's own limiter would queue reads (5 a second by default);
	// liveReads decides instead, without waiting.
	liveCfg := rest.CopyConfig(cfg)
	liveCfg.QPS, liveCfg.Burst, liveCfg.RateLimiter = -1, 0, nil
	live, err := metadata.NewForConfig(liveCfg)
	if err != nil {
		return nil, err
	}
	kinds := map[schema.GroupVersionKind]*kindCache{}
	for gvk, plural := range cachedKinds {
		k := &kindCache{}
		if plural != "" {
			k.crd = plural + "." + gvk.Group
		}
		kinds[gvk] = k
	}
	return &CachedState{
		kinds:     kinds,
		cache:     c,
		live:      live,
		liveReads: flowcontrol.NewTokenBucketRateLimiter(liveReadsPerSecond, 2*liveReadsPerSecond),
		missing:   map[string]time.Time{},
	}, nil
}

func namespaceMetadata() *metav1.PartialObjectMetadata { return metadataOf(namespaceGVK) }

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// Start runs the namespace and CRD informers, then the informer of every
// cached kind whose CRD exists, until ctx ends; a CRD created later starts
// its kind (startKind).
func (s *CachedState) Start(ctx context.Context) error {
	s.ctx = ctx
	if _, err := s.cache.GetInformer(ctx, namespaceMetadata()); err != nil {
		return fmt.Errorf("namespace informer: %w", err)
	}
	crds, err := s.cache.GetInformer(ctx, metadataOf(crdGVK))
	if err != nil {
		return fmt.Errorf("CRD informer: %w", err)
	}
	if _, err := crds.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				s.crdAppeared(m.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("CRD informer: %w", err)
	}
	go func() {
		if !s.cache.WaitForCacheSync(ctx) {
			return
		}
		// Ready once every kind whose CRD exists now has synced.
		for gvk, k := range s.kinds {
			if s.crdInstalled(k.crd) == nil {
				s.startKind(gvk)
			}
		}
		for _, k := range s.kinds {
			for k.starting.Load() && !k.synced.Load() {
				select {
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
		s.synced.Store(true)
	}()
	return s.cache.Start(ctx)
}

// crdAppeared starts the kind a newly seen CRD serves.
func (s *CachedState) crdAppeared(name string) {
	for gvk, k := range s.kinds {
		if k.crd == name {
			s.startKind(gvk)
		}
	}
}

// startKind registers the indexes of gvk and starts its informer, once; the
// kind counts as synced when the informer has.
func (s *CachedState) startKind(gvk schema.GroupVersionKind) {
	k := s.kinds[gvk]
	if k == nil || s.ctx == nil || !k.starting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		// A failure (a CRD not served yet) lets the next lookup try again.
		defer k.starting.Store(false)
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		if !k.indexed.Load() {
			for _, idx := range indexes {
				if idx.GVK != gvk {
					continue
				}
				values := idx.Values
				if err := s.cache.IndexField(s.ctx, obj, idx.Name, func(o client.Object) []string {
					u, ok := o.(*unstructured.Unstructured)
					if !ok {
						return nil
					}
					return values(u.Object)
				}); err != nil {
					return
				}
			}
			k.indexed.Store(true)
		}
		if _, err := s.cache.GetInformer(s.ctx, obj); err == nil {
			k.synced.Store(true)
		}
	}()
}

// crdInstalled says whether the cache has the CRD named name: nil when it
// has (or name is "", a built-in kind's), errKindAbsent when it has not.
func (s *CachedState) crdInstalled(name string) error {
	if name == "" {
		return nil
	}
	err := s.cache.Get(context.Background(), types.NamespacedName{Name: name}, metadataOf(crdGVK))
	if apierrors.IsNotFound(err) {
		return errKindAbsent
	}
	return err
}

// kindReady says whether gvk's objects can be read: nil when its informer
// has synced, errKindAbsent when its CRD is not installed (no objects), an
// error when the view cannot answer (caches not synced, or the kind's
// informer is still starting: its CRD appeared a moment ago).
func (s *CachedState) kindReady(gvk schema.GroupVersionKind) error {
	if !s.synced.Load() {
		return ErrNotSynced
	}
	k := s.kinds[gvk]
	if k == nil {
		return fmt.Errorf("%s is not a cached kind", gvk)
	}
	if k.synced.Load() {
		return nil
	}
	if err := s.crdInstalled(k.crd); err != nil {
		return err
	}
	s.startKind(gvk)
	return fmt.Errorf("the cache of %s is starting (its CRD was just installed)", gvk)
}

// Ready is a readiness check: false until every cache has synced.
func (s *CachedState) Ready(*http.Request) error {
	if !s.synced.Load() {
		return ErrNotSynced
	}
	return nil
}

// ErrNotSynced is the answer of every lookup until the caches have synced.
var ErrNotSynced = errors.New("cluster state caches not synced yet")

// Lookup implements route.StateReader: the ObjectKeys of Objects, sorted.
func (s *CachedState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, err := s.Objects(gvk, index, value)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(objs))
	for i, obj := range objs {
		names[i] = dependencygroup.ObjectKey(obj)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Objects implements route.StateReader with the field index, across namespaces.
// The objects are the cache's own (no copy per review): read-only.
func (s *CachedState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	switch err := s.kindReady(gvk); {
	case errors.Is(err, errKindAbsent):
		return nil, nil
	case err != nil:
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.cache.List(context.Background(), list, client.MatchingFields{index: value}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list.Items))
	for i := range list.Items {
		out[i] = list.Items[i].Object
	}
	return out, nil
}

// NamespaceLabels implements route.NamespaceReader from the metadata cache; a
// namespace the cache has not seen yet is read from the API server, so an
// object created right after its namespace still gets its scope labels (see
// liveReadsPerSecond for the bounds).
func (s *CachedState) NamespaceLabels(name string) (map[string]string, error) {
	if !s.synced.Load() {
		return nil, ErrNotSynced
	}
	ns := namespaceMetadata()
	err := s.cache.Get(context.Background(), types.NamespacedName{Name: name}, ns)
	if err == nil {
		return ns.Labels, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if s.recentlyMissing(name) || !s.liveReads.TryAccept() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveReadTimeout)
	defer cancel()
	live, err := s.live.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.rememberMissing(name)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return live.Labels, nil
}

func (s *CachedState) recentlyMissing(name string) bool {
	s.missingMu.Lock()
	defer s.missingMu.Unlock()
	at, ok := s.missing[name]
	return ok && time.Since(at) < missingTTL
}

func (s *CachedState) rememberMissing(name string) {
	s.missingMu.Lock()
	defer s.missingMu.Unlock()
	if len(s.missing) >= maxMissing {
		for n, at := range s.missing {
			if time.Since(at) >= missingTTL {
				delete(s.missing, n)
			}
		}
		if len(s.missing) >= maxMissing {
			clear(s.missing)
		}
	}
	s.missing[name] = time.Now()
}

// Exists implements route.StateReader for a cluster-scoped kind.
func (s *CachedState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	switch err := s.kindReady(gvk); {
	case errors.Is(err, errKindAbsent):
		return false, nil
	case err != nil:
		return false, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err := s.cache.Get(context.Background(), types.NamespacedName{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
