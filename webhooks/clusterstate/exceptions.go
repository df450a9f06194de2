package clusterstate

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
)

// exceptionResources are the resources of the exception objects, as the
// RBAC rules name them.
var exceptionResources = []schema.GroupVersionResource{
	exceptionsv1alpha1.SchemeGroupVersion.WithResource("exceptions"),
	exceptionsv1alpha1.SchemeGroupVersion.WithResource("clusterexceptions"),
}

// crdPoll is how often CachedExceptions looks for the exception CRDs while
// they are not installed.
const crdPoll = 30 * time.Second

// CachedExceptions is the route.ExceptionReader of `gatehouse serve`:
// informers on Exceptions and ClusterExceptions, and the exception.Index
// compiled from them, rebuilt on the first read after the informers saw a
// change (a burst of events compiles once, and a review never compiles
// unless something changed).
//
// The exception CRDs are optional: while they are not installed (the
// server's API discovery does not list them) nothing is excused, which is
// logged once; they are looked for again every crdPoll, and the informers
// start when they appear. Until the informers have synced, nothing is
// excused either: a denial that an exception would lift stands a moment
// longer, which fails closed.
type CachedExceptions struct {
	client    dynamic.Interface
	discovery discovery.DiscoveryInterface
	opts      exception.Options
	log       logr.Logger

	// changes counts the informers' events; built is the count the index
	// was compiled at; mu keeps two reads from compiling at once.
	changes atomic.Uint64
	synced  atomic.Bool
	// absent: the CRDs were not installed when last looked for.
	absent atomic.Bool
	mu     sync.Mutex
	built  atomic.Uint64
	index  atomic.Pointer[exception.Index]
	stores []toolscache.Store
}

// NewCachedExceptions prepares the informers; Start runs them. opts are the
// configuration's exceptions block as the index applies it.
func NewCachedExceptions(cfg *rest.Config, opts exception.Options, log logr.Logger) (*CachedExceptions, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return newCachedExceptions(client, disc, opts, log), nil
}

func newCachedExceptions(client dynamic.Interface, disc discovery.DiscoveryInterface, opts exception.Options, log logr.Logger) *CachedExceptions {
	return &CachedExceptions{client: client, discovery: disc, opts: opts, log: log}
}

// Start waits for the exception CRDs, then runs the informers until ctx
// ends. It returns nil when ctx ends: the CRDs missing is no failure.
func (c *CachedExceptions) Start(ctx context.Context) error {
	if !c.waitForCRDs(ctx) {
		return nil // ctx ended: no exception CRDs is no failure
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(c.client, 0)
	onChange := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.changes.Add(1) },
		UpdateFunc: func(any, any) { c.changes.Add(1) },
		DeleteFunc: func(any) { c.changes.Add(1) },
	}
	var syncs []toolscache.InformerSynced
	for _, gvr := range exceptionResources {
		inf := factory.ForResource(gvr).Informer()
		if _, err := inf.AddEventHandler(onChange); err != nil {
			return err
		}
		c.stores = append(c.stores, inf.GetStore())
		syncs = append(syncs, inf.HasSynced)
	}
	factory.Start(ctx.Done())
	if toolscache.WaitForCacheSync(ctx.Done(), syncs...) {
		c.changes.Add(1)
		c.synced.Store(true)
		c.log.Info("exceptions watched", "exceptions", len(c.entries()))
	}
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// waitForCRDs returns true once both exception resources are served, false
// when ctx ends first; it logs once that nothing is excused meanwhile.
func (c *CachedExceptions) waitForCRDs(ctx context.Context) bool {
	tick := time.NewTicker(crdPoll)
	defer tick.Stop()
	for logged := false; ; logged = true {
		if c.installed() {
			c.absent.Store(false)
			return true
		}
		c.absent.Store(true)
		if !logged {
			c.log.Info("the exception CRDs (exceptions.gatehouse.dev, clusterexceptions.gatehouse.dev) are not installed: no exception excuses anything until they are")
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// installed reports whether the API server serves both exception
// resources.
func (c *CachedExceptions) installed() bool {
	list, err := c.discovery.ServerResourcesForGroupVersion(exceptionsv1alpha1.SchemeGroupVersion.String())
	if err != nil || list == nil {
		return false
	}
	for _, gvr := range exceptionResources {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }) {
			return false
		}
	}
	return true
}

// Synced reports whether the view answers with the cluster's exceptions:
// its informers have synced, or the CRDs are not installed (there are
// none). `gatehouse audit` waits for it before reviewing.
func (c *CachedExceptions) Synced() bool { return c.synced.Load() || c.absent.Load() }

// Exceptions implements route.ExceptionReader: nil until the informers have
// synced.
func (c *CachedExceptions) Exceptions() *exception.Index {
	if !c.synced.Load() {
		return nil
	}
	now := c.changes.Load()
	if ix := c.index.Load(); ix != nil && c.built.Load() == now {
		return ix
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ix := c.index.Load(); ix != nil && c.built.Load() == now {
		return ix
	}
	ix := exception.NewIndex(c.entries(), c.opts)
	c.index.Store(ix)
	c.built.Store(now)
	return ix
}

// Entries returns the cluster's exceptions as the index reads them; none
// until the informers have synced. `gatehouse check --cluster` lays the
// exceptions it is given over them.
func (c *CachedExceptions) Entries() []exception.Entry {
	if !c.synced.Load() {
		return nil
	}
	return c.entries()
}

// entries decodes the cached exceptions; one that does not decode (the API
// server's schema keeps that from happening) is left out, so it excuses
// nothing.
func (c *CachedExceptions) entries() []exception.Entry {
	var out []exception.Entry
	for _, s := range c.stores {
		for _, obj := range s.List() {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			e, err := exception.FromObject(u.Object)
			if err != nil {
				c.log.Info("an exception that does not decode excuses nothing", "namespace", u.GetNamespace(), "name", u.GetName(), "error", err.Error())
				continue
			}
			out = append(out, e)
		}
	}
	return out
}
