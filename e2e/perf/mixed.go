package perf

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The mixed workload is the write traffic of a cluster as an admission
// webhook sees it: mostly objects no gatehouse contract is about (Events,
// Lease renewals, EndpointSlices, ConfigMaps, Secrets, ReplicaSets and their
// Pods), in a namespace that opts in to nothing, and about one request in
// ten that a contract applies to. No controllers run on the local control
// plane, so every object is created directly, and an owner reference may
// name an object that does not exist.

// MixedKind is one kind of request of the mixed workload.
type MixedKind struct {
	// Name is what the report calls it.
	Name string
	// Operation is the admission operation: CREATE, or UPDATE for the
	// Lease renewals.
	Operation string
	// Weight is the kind's share, in requests per hundred.
	Weight int
	// Contract says that a gatehouse contract applies to the request.
	Contract bool
	// Fixture is the golden fixture (from the corpus, relative to the
	// repository root) that a contract kind creates; the other kinds are
	// built by build, except the Lease renewal.
	Fixture string
	build   func(namespace, name string, i int) map[string]any
}

// LeaseRenewal is the name of the one kind that updates: each worker renews
// a Lease of its own, as the service account of a leader-elected controller.
const LeaseRenewal = "Lease renewal"

// MixedKinds are the kinds of the mixed workload, in the order reported.
var MixedKinds = []MixedKind{
	{Name: "Event", Operation: "CREATE", Weight: 30, build: mixedEvent},
	{Name: LeaseRenewal, Operation: "UPDATE", Weight: 20},
	{Name: "EndpointSlice", Operation: "CREATE", Weight: 10, build: mixedEndpointSlice},
	{Name: "ConfigMap", Operation: "CREATE", Weight: 8, build: mixedConfigMap},
	{Name: "Secret", Operation: "CREATE", Weight: 6, build: mixedSecret},
	{Name: "ReplicaSet", Operation: "CREATE", Weight: 4, build: mixedReplicaSet},
	{Name: "Pod of a ReplicaSet", Operation: "CREATE", Weight: 12, build: mixedPod},
	{Name: "Pod with a secret volume", Operation: "CREATE", Weight: 4, Contract: true,
		Fixture: "policies/scope/testdata/pass/pod-secret-volume.yaml"},
	{Name: "PVC with secret annotations", Operation: "CREATE", Weight: 2, Contract: true,
		Fixture: "policies/scope/testdata/pass/pvc-secret-annotations.yaml"},
	{Name: "product-owned StatefulSet", Operation: "CREATE", Weight: 2, Contract: true,
		Fixture: "policies/serviceaccount/testdata/pass/statefulset-owned-derived.yaml"},
	{Name: "HdfsCluster", Operation: "CREATE", Weight: 2, Contract: true,
		Fixture: "policies/scope/testdata/pass/hdfscluster-scope-valid.yaml"},
}

// MixedPlan returns the kinds (indexes into kinds) of n requests, each kind
// as often as its weight says and spread evenly: smooth weighted round
// robin, so every run of as many requests as the weights sum to holds each
// kind exactly its weight times.
func MixedPlan(kinds []MixedKind, n int) []int {
	total := 0
	for _, k := range kinds {
		total += k.Weight
	}
	if total == 0 {
		return nil
	}
	plan := make([]int, n)
	current := make([]int, len(kinds))
	for i := range plan {
		best := 0
		for k := range kinds {
			current[k] += kinds[k].Weight
			if current[k] > current[best] {
				best = k
			}
		}
		current[best] -= total
		plan[i] = best
	}
	return plan
}

// Mixed sends the mixed workload through the API server.
type Mixed struct {
	// Client is the admin; LeaseClient impersonates the lease holder's
	// service account.
	Client, LeaseClient client.Client
	Namespace           string
	Kinds               []MixedKind
	fixtures            map[string]map[string]any
	leases              []*coordinationv1.Lease
}

// leaseHolder is the service account that renews the Leases.
const leaseHolder = "lease-holder"

// NewMixed returns the mixed workload in namespace, with the contract kinds'
// objects taken from fixtures (the corpus).
func NewMixed(cfg *rest.Config, scheme *runtime.Scheme, namespace string, fixtures []Fixture) (*Mixed, error) {
	m := &Mixed{Namespace: namespace, Kinds: MixedKinds}
	var err error
	if m.fixtures, err = contractFixtures(m.Kinds, fixtures); err != nil {
		return nil, err
	}
	if m.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.Impersonate = rest.ImpersonationConfig{UserName: serviceaccount.MakeUsername(namespace, leaseHolder)}
	if m.LeaseClient, err = client.New(leaseCfg, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	return m, nil
}

// contractFixtures picks the objects of the kinds' fixtures from the corpus.
func contractFixtures(kinds []MixedKind, fixtures []Fixture) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, k := range kinds {
		if k.Fixture == "" {
			continue
		}
		for _, fx := range fixtures {
			if fx.File == k.Fixture {
				out[k.Fixture] = fx.Object
			}
		}
		if out[k.Fixture] == nil {
			return nil, fmt.Errorf("the corpus has no fixture %s (%s)", k.Fixture, k.Name)
		}
	}
	return out, nil
}

// Prepare creates the namespace (no labels: it opts in to nothing), the
// lease holder's ServiceAccount with a Role to renew Leases, and one Lease
// per worker.
func (m *Mixed) Prepare(ctx context.Context, workers int) error {
	if err := EnsureNamespace(ctx, m.Client, m.Namespace, nil); err != nil {
		return err
	}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: leaseHolder}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: leaseHolder},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: leaseHolder},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: leaseHolder},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: m.Namespace, Name: leaseHolder}}},
	}
	for _, obj := range objs {
		if err := m.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	for w := len(m.leases); w < workers; w++ {
		holder, seconds, now := fmt.Sprintf("perf-controller-%d", w), int32(15), metav1.NewMicroTime(time.Now())
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: fmt.Sprintf("perf-controller-%d", w)},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now},
		}
		if err := m.Client.Create(ctx, lease); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating Lease %s: %w", lease.Name, err)
			}
			if err := m.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
				return err
			}
		}
		m.leases = append(m.leases, lease)
	}
	return nil
}

// MixedResult is what one run of the mixed workload saw: latency from when
// each request was due to its answer, over all and by kind, the requests
// sent by kind, and failures by kind and reason.
type MixedResult struct {
	All     *Latencies
	ByKind  map[string]*Latencies
	Sent    map[string]int
	Errors  map[string]int
	Elapsed time.Duration
}

// Run sends the requests of plan (indexes into m.Kinds), paced by o's rate
// and duration (o.Requests is the plan's length), with at most o.Concurrency
// in flight (Prepare made a Lease for each); names start with prefix, which
// must differ from run to run.
func (m *Mixed) Run(ctx context.Context, plan []int, prefix string, o LoadOptions) (*MixedResult, error) {
	if len(plan) == 0 || o.Concurrency < 1 || o.Concurrency > len(m.leases) || o.Duration <= 0 {
		return nil, fmt.Errorf("a mixed run needs a plan, a duration and 1 to %d workers (one Lease each)", len(m.leases))
	}
	o.Requests = len(plan)
	res := &MixedResult{All: &Latencies{}, ByKind: map[string]*Latencies{}, Sent: map[string]int{}, Errors: map[string]int{}}
	var mu sync.Mutex
	res.Elapsed = drive(ctx, o, func(ctx context.Context, w, i int, due time.Time) {
		kind := m.Kinds[plan[i]]
		var err error
		if kind.Name == LeaseRenewal {
			err = m.renew(ctx, m.leases[w])
		} else {
			err = m.Client.Create(ctx, m.object(kind, fmt.Sprintf("%s-%d", prefix, i), i))
		}
		d := time.Since(due)
		if err != nil && ctx.Err() != nil {
			return // the run ended while this request was in flight
		}
		mu.Lock()
		defer mu.Unlock()
		res.Sent[kind.Name]++
		if err != nil {
			res.Errors[kind.Name+": "+errorKind(err)]++
			return
		}
		res.All.Add(d)
		if res.ByKind[kind.Name] == nil {
			res.ByKind[kind.Name] = &Latencies{}
		}
		res.ByKind[kind.Name].Add(d)
	})
	return res, nil
}

// renew updates lease's renewTime as its holder, from the copy the last
// renewal returned (as a leader-elected controller does); after a failure
// the copy is read again.
func (m *Mixed) renew(ctx context.Context, lease *coordinationv1.Lease) error {
	now := metav1.NewMicroTime(time.Now())
	lease.Spec.RenewTime = &now
	err := m.LeaseClient.Update(ctx, lease)
	if err != nil {
		if getErr := m.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease); getErr != nil {
			return getErr
		}
	}
	return err
}

// object is request i of kind, named name, in the namespace.
func (m *Mixed) object(kind MixedKind, name string, i int) *unstructured.Unstructured {
	if kind.Fixture == "" {
		return u(kind.build(m.Namespace, name, i))
	}
	obj, err := deepCopy(m.fixtures[kind.Fixture])
	if err != nil {
		panic(err) // the fixture was read from YAML into JSON types
	}
	md := meta0(obj)
	md["name"], md["namespace"] = name, m.Namespace
	return u(obj)
}

// mixedUID is a made-up uid for owner references and event subjects.
func mixedUID(i int) string { return fmt.Sprintf("7e1d0c3b-%04x-4a2b-8c9d-%012x", i&0xffff, i) }

func mixedEvent(namespace, name string, i int) map[string]any {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	pod := fmt.Sprintf("web-%d", i/10)
	return map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"involvedObject": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": namespace,
			"uid": mixedUID(i / 10), "fieldPath": "spec.containers{app}"},
		"reason": "Pulled", "type": "Normal",
		"message":        `Container image "registry.example/app:1.2.3" already present on machine`,
		"source":         map[string]any{"component": "kubelet", "host": "node-1"},
		"firstTimestamp": at, "lastTimestamp": at, "count": int64(1),
		"reportingComponent": "kubelet", "reportingInstance": "node-1",
	}
}

func mixedEndpointSlice(namespace, name string, i int) map[string]any {
	var endpoints []any
	for e := range 3 {
		endpoints = append(endpoints, map[string]any{
			"addresses":  []any{fmt.Sprintf("10.244.%d.%d", e, i%250+2)},
			"conditions": map[string]any{"ready": true, "serving": true, "terminating": false},
			"nodeName":   fmt.Sprintf("node-%d", e),
			"targetRef":  map[string]any{"kind": "Pod", "name": fmt.Sprintf("web-%d-%d", i, e), "namespace": namespace, "uid": mixedUID(i*3 + e)},
		})
	}
	return map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{
			"kubernetes.io/service-name":             "web",
			"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
		}},
		"addressType": "IPv4",
		"endpoints":   endpoints,
		"ports":       []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"}},
	}
}

func mixedConfigMap(namespace, name string, _ int) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"data": map[string]any{
			"log-level": "info",
			"application.properties": "server.port=8080\nserver.shutdown=graceful\nmanagement.endpoints.web.exposure.include=health,info,prometheus\n" +
				"spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.hikari.maximum-pool-size=10\n",
		},
	}
}

func mixedSecret(namespace, name string, _ int) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"type":     "Opaque",
		"data": map[string]any{
			"username": "YXBw",
			"password": "c2VjcmV0LXBhc3N3b3JkLTEyMzQ1Njc4OTA=",
			"token":    "ZXlKaGJHY2lPaUpTVXpJMU5pSXNJbXRwWkNJNklqRXlNelExTmpjNE9UQWlmUS5leUp6ZFdJaU9pSmhjSEFpZlE=",
		},
	}
}

// mixedPodTemplateLabels are the labels of the ReplicaSets and their Pods.
func mixedPodTemplateLabels(i int) map[string]any {
	return map[string]any{"app.kubernetes.io/name": "web", "pod-template-hash": fmt.Sprintf("7f9c%05d", i%100000)}
}

// plainPodSpec is the end-to-end runs' pod without the secret volume: three
// containers, nothing a contract reads.
func plainPodSpec() map[string]any {
	var containers []any
	for _, name := range []string{"app", "sidecar", "metrics"} {
		c := perfContainer(name)
		delete(c, "volumeMounts")
		containers = append(containers, c)
	}
	return map[string]any{"containers": containers}
}

func mixedReplicaSet(namespace, name string, i int) map[string]any {
	labels := mixedPodTemplateLabels(i)
	return map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labels,
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
				"uid": mixedUID(0), "controller": true, "blockOwnerDeletion": true}}},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": plainPodSpec()},
		},
	}
}

func mixedPod(namespace, name string, i int) map[string]any {
	// Three Pods per ReplicaSet, by name; the ReplicaSet need not exist.
	owner := i / 3
	return map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": mixedPodTemplateLabels(owner),
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": fmt.Sprintf("web-%d", owner),
				"uid": mixedUID(owner), "controller": true, "blockOwnerDeletion": true}}},
		"spec": plainPodSpec(),
	}
}
