package perf

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Admission is what the API server runs on the objects of an end-to-end run.
type Admission string

const (
	// NoWebhooks: gatehouse's webhook configurations are deleted.
	NoWebhooks Admission = "none"
	// Gatehouse: every gatehouse webhook is registered.
	Gatehouse Admission = "gatehouse"
	// VAP: the ValidatingAdmissionPolicies of vap/ instead of gatehouse.
	VAP Admission = "vap"
	// InProcess: gatehouse's in-process layout (webhooks/render/inprocess.go):
	// its webhook configurations, narrowed away from what CEL proves they
	// allow, pointed at the gatehouse under test.
	InProcess Admission = "in-process"
	// Floor: gatehouse's webhook configurations pointed at the floor, which
	// allows everything: what calling the webhooks costs, without
	// gatehouse's work.
	Floor Admission = "floor"
)

// FloorProbeAnnotation is the annotation key the floor denies, so a dry run
// shows whether the API server calls it; FloorProbeMessage is its answer.
const (
	FloorProbeAnnotation = "perf.gatehouse.dev/floor-probe"
	FloorProbeMessage    = "denied by the floor (a perf probe)"
)

// Switch moves the API server between admission setups: it holds
// gatehouse's webhook configurations (pointed at the gatehouse under test)
// and the policies of vap/, and creates or deletes them.
type Switch struct {
	Client   client.Client
	Webhooks []*unstructured.Unstructured
	Policies []*unstructured.Unstructured
	// InProcess is the in-process layout's webhook configurations (same
	// names as Webhooks).
	InProcess []*unstructured.Unstructured
	// FloorWebhooks are Webhooks pointed at the floor (same names).
	FloorWebhooks []*unstructured.Unstructured
	// Probe is an object gatehouse and the policies deny, and that carries
	// FloorProbeAnnotation, created with a dry run to see that a switch
	// took effect.
	Probe *unstructured.Unstructured
}

// LiveWebhookConfigs reads gatehouse's webhook configurations from the
// cluster and points every webhook at base (keeping the URL's path and the CA
// bundle cainjector filled in), ready to be deleted and created again.
func LiveWebhookConfigs(ctx context.Context, c client.Client, name, base string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		if err := c.Get(ctx, types.NamespacedName{Name: name}, live); err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		hooks, _, err := unstructured.NestedSlice(live.Object, "webhooks")
		if err != nil {
			return nil, err
		}
		for i, h := range hooks {
			hook, _ := h.(map[string]any)
			raw, _, _ := unstructured.NestedString(hook, "clientConfig", "url")
			u, err := url.Parse(raw)
			if err != nil || u.Path == "" {
				return nil, fmt.Errorf("%s %s: webhook %d has no URL with a path", kind, name, i)
			}
			if err := unstructured.SetNestedField(hook, base+u.Path, "clientConfig", "url"); err != nil {
				return nil, err
			}
			hooks[i] = hook
		}
		wc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": live.GetAPIVersion(), "kind": kind}}
		wc.SetName(name)
		wc.SetLabels(live.GetLabels())
		wc.SetAnnotations(live.GetAnnotations())
		if err := unstructured.SetNestedSlice(wc.Object, hooks, "webhooks"); err != nil {
			return nil, err
		}
		out = append(out, wc)
	}
	return out, nil
}

// InProcessLayout renders gatehouse's in-process layout for opts pointed at
// base, with the CA bundle of installed (LiveWebhookConfigs) in every
// webhook.
func InProcessLayout(base, namespace string, opts route.Options, installed []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var caBundle any
	for _, wc := range installed {
		hooks, _, _ := unstructured.NestedSlice(wc.Object, "webhooks")
		for _, h := range hooks {
			if ca, ok, _ := unstructured.NestedFieldNoCopy(h.(map[string]any), "clientConfig", "caBundle"); ok && caBundle == nil {
				caBundle = ca
			}
		}
	}
	rendered, err := render.WebhookConfigurations(route.ManifestOptions{
		URL: base, Namespace: namespace, Layout: route.LayoutInProcess, Options: opts,
	})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &obj.Object); err != nil {
			return nil, err
		}
		if len(obj.Object) == 0 {
			continue
		}
		hooks, ok, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		if ok && caBundle != nil {
			for _, h := range hooks {
				_ = unstructured.SetNestedField(h.(map[string]any), caBundle, "clientConfig", "caBundle")
			}
			_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
		}
		out = append(out, obj)
	}
	return out, nil
}

// Set makes the API server run a; it returns once a dry run of Probe shows
// the setup in effect.
func (s *Switch) Set(ctx context.Context, a Admission) error {
	install := map[Admission][]*unstructured.Unstructured{Gatehouse: s.Webhooks, Floor: s.FloorWebhooks, VAP: s.Policies, InProcess: s.InProcess}
	// Delete everything first (gatehouse's and the floor's configurations
	// share names), then create the setup's objects.
	for _, setup := range []Admission{Gatehouse, Floor, VAP, InProcess} {
		for _, obj := range install[setup] {
			if err := s.Client.Delete(ctx, obj.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	// The in-process layout denies the probe as gatehouse's combined one
	// does, so each switch first waits until no setup denies it: what
	// answers next is the new setup.
	if err := s.probe(ctx, a, ""); err != nil || a == NoWebhooks {
		return err
	}
	for _, obj := range install[a] {
		if err := s.Client.Create(ctx, obj.DeepCopy()); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	want := map[Admission]string{Gatehouse: "gatehouse secret-scope", VAP: "ValidatingAdmissionPolicy",
		InProcess: "gatehouse secret-scope", Floor: FloorProbeMessage}[a]
	return s.probe(ctx, a, want)
}

// probe waits until a dry run of Probe is admitted (want "") or denied
// with want in the message.
func (s *Switch) probe(ctx context.Context, a Admission, want string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = s.Client.Create(ctx, s.Probe.DeepCopy(), client.DryRunAll)
		if want == "" {
			return last == nil, nil
		}
		return last != nil && strings.Contains(last.Error(), want), nil
	})
	if err != nil {
		return fmt.Errorf("admission setup %s not in effect after a minute (last probe: %v)", a, last)
	}
	return nil
}

// Lifecycle creates and deletes objects through the API server.
type Lifecycle struct {
	Client    client.Client
	Namespace string
	// Objects returns object i of the run; Singleton, if set, is created
	// and deleted in turn by one extra worker (an object that exists only
	// once, like the overrides ConfigMap), SingletonCount times.
	Objects        func(i int) *unstructured.Unstructured
	Singleton      *unstructured.Unstructured
	SingletonCount int
}

// LifecycleResult holds the create and delete latencies, by kind for
// creates.
type LifecycleResult struct {
	Create, Delete *Latencies
	CreateByKind   map[string]*Latencies
	Errors         map[string]int
	Elapsed        time.Duration
}

// Run creates and deletes n objects with concurrency workers, stopping
// early when ctx ends.
func (l *Lifecycle) Run(ctx context.Context, n, concurrency int) *LifecycleResult {
	res := &LifecycleResult{Create: &Latencies{}, Delete: &Latencies{}, CreateByKind: map[string]*Latencies{}, Errors: map[string]int{}}
	var mu sync.Mutex
	record := func(obj *unstructured.Unstructured, create, del time.Duration, err error, what string) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.Errors[obj.GetKind()+" "+what+": "+errorKind(err)]++
			return
		}
		if create > 0 {
			res.Create.Add(create)
			if res.CreateByKind[obj.GetKind()] == nil {
				res.CreateByKind[obj.GetKind()] = &Latencies{}
			}
			res.CreateByKind[obj.GetKind()].Add(create)
		}
		if del > 0 {
			res.Delete.Add(del)
		}
	}
	cycle := func(obj *unstructured.Unstructured) {
		t0 := time.Now()
		err := l.Client.Create(ctx, obj)
		created := time.Since(t0)
		if err != nil {
			record(obj, 0, 0, err, "create")
			return
		}
		record(obj, created, 0, nil, "")
		t0 = time.Now()
		err = l.Client.Delete(ctx, obj, client.GracePeriodSeconds(0))
		record(obj, 0, time.Since(t0), err, "delete")
	}
	start := time.Now()
	var next int
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				cycle(l.Objects(i))
			}
		}()
	}
	if l.Singleton != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < l.SingletonCount && ctx.Err() == nil; i++ {
				cycle(l.Singleton.DeepCopy())
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// errorKind names an API error by its reason, never by its message (which
// may quote the object).
func errorKind(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	if apierrors.IsTimeout(err) {
		return "Timeout"
	}
	return "other"
}

// CreateMany creates objects with concurrency workers and returns how many
// failed; already existing objects count as created.
func CreateMany(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, concurrency int) int {
	work := make(chan *unstructured.Unstructured)
	var failed int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range work {
				if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	for _, obj := range objs {
		if ctx.Err() != nil {
			break
		}
		work <- obj
	}
	close(work)
	wg.Wait()
	return failed
}

// EnsureNamespace creates a namespace with labels and its default
// ServiceAccount (no controller manager runs to create it, and the
// ServiceAccount admission plugin needs it for pods).
func EnsureNamespace(ctx context.Context, c client.Client, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
