package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CachedState is the StateReader and NamespaceReader of `gatehouse serve`:
// informer caches of DependencyGroups, CustomResourceDefinitionSources,
// OperatorHarnesses, ClusterRoles and Roles (trimmed to what the lookups
// read), with a field index
// per stateIndex so each lookup is a map access whatever the number of
// objects, and a metadata-only cache of namespaces (name and labels). Until
// every informer has synced, lookups fail (the webhooks deny) and Ready
// fails.
type CachedState struct {
	cache cache.Cache
	// live reads a namespace the cache does not have yet (created a moment
	// ago) from the API server, at most liveReadsPerSecond a second;
	// missing remembers for missingTTL the namespaces it did not find.
	live      metadata.Interface
	liveReads flowcontrol.RateLimiter
	missingMu sync.Mutex
	missing   map[string]time.Time
	synced    atomic.Bool
}

// namespaceGVK is the one kind cached as metadata only.
var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

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
	return &CachedState{
		cache:     c,
		live:      live,
		liveReads: flowcontrol.NewTokenBucketRateLimiter(liveReadsPerSecond, 2*liveReadsPerSecond),
		missing:   map[string]time.Time{},
	}, nil
}

func namespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(namespaceGVK)
	return ns
}

// keepOnlyWhatIsRead trims a cached object to what the lookups read: the
// name and creationTimestamp, and spec. Managed fields, annotations (with a
// last-applied-configuration as large as the object), labels and status are
// dropped, so the caches of a large cluster cost little memory.
func keepOnlyWhatIsRead(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		// Namespaces: the name and labels are all LABEL reads.
		m.ObjectMeta = metav1.ObjectMeta{
			Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, Labels: m.Labels,
		}
		return m, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.Object = TrimForLookups(u.Object)
	return u, nil
}

// TrimForLookups returns what the state lookups and their evaluators read of
// an object: apiVersion, kind, spec, and of metadata the name, namespace,
// creationTimestamp (and uid and resourceVersion, which an informer needs);
// of RBAC roles, which have no spec, their rules and aggregationRule, and of
// ClusterRoles their labels too (aggregation rules select by label). The
// server's caches and `gatehouse check --state` keep the same.
func TrimForLookups(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	kept := map[string]any{}
	for _, key := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := meta[key]; ok {
			kept[key] = v
		}
	}
	out := map[string]any{
		"apiVersion": obj["apiVersion"],
		"kind":       obj["kind"],
		"metadata":   kept,
		"spec":       obj["spec"],
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if gvk == ClusterRoleGVK || gvk == RoleGVK {
		delete(out, "spec")
		out["rules"] = obj["rules"]
		if v, ok := obj["aggregationRule"]; ok {
			out["aggregationRule"] = v
		}
		if gvk == ClusterRoleGVK {
			if v, ok := meta["labels"]; ok {
				kept["labels"] = v
			}
		}
	}
	return out
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
	if _, err := s.cache.GetInformer(ctx, namespaceMetadata()); err != nil {
		return fmt.Errorf("namespace informer: %w", err)
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

// Lookup implements StateReader: the names of Objects, sorted.
func (s *CachedState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, err := s.Objects(gvk, index, value)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(objs))
	for i, obj := range objs {
		names[i] = (&unstructured.Unstructured{Object: obj}).GetName()
	}
	return sortedUnique(names), nil
}

// Objects implements StateReader with the field index. The objects are the
// cache's own (no copy per review): read-only.
func (s *CachedState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	if !s.synced.Load() {
		return nil, errNotSynced
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

// NamespaceLabels implements NamespaceReader from the metadata cache; a
// namespace the cache has not seen yet is read from the API server, so an
// object created right after its namespace still gets its scope labels (see
// liveReadsPerSecond for the bounds).
func (s *CachedState) NamespaceLabels(name string) (map[string]string, error) {
	if !s.synced.Load() {
		return nil, errNotSynced
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
