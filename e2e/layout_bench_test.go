package e2e

import (
	"context"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks"
)

var configurationKinds = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

// installLayout replaces gatehouse's webhook configurations on the local
// control plane with the given layout (keeping the CA bundle cainjector
// wrote), or removes them for "none". It returns a function restoring the
// configurations the suite installed.
func installLayout(b *testing.B, e *env, layout string) (restore func()) {
	b.Helper()
	ctx := context.Background()
	saved := map[string]*unstructured.Unstructured{}
	var caBundle any
	for _, kind := range configurationKinds {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		if err := e.client.Get(ctx, types.NamespacedName{Name: localcluster.WebhookConfigName}, live); err != nil {
			b.Fatal(err)
		}
		saved[kind] = live.DeepCopy()
		hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
		caBundle, _, _ = unstructured.NestedFieldNoCopy(hooks[0].(map[string]any), "clientConfig", "caBundle")
	}
	apply := func(objs map[string]*unstructured.Unstructured) {
		for _, kind := range configurationKinds {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
			if err := e.client.Get(ctx, types.NamespacedName{Name: localcluster.WebhookConfigName}, live); err == nil {
				if err := e.client.Delete(ctx, live); err != nil {
					b.Fatal(err)
				}
			}
			if obj, ok := objs[kind]; ok {
				obj = obj.DeepCopy()
				obj.SetResourceVersion("")
				obj.SetUID("")
				if err := e.client.Create(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		}
		time.Sleep(time.Second) // the API server's webhook configuration informer
	}
	want := map[string]*unstructured.Unstructured{}
	if layout != "none" {
		cfg := configv1alpha1.Default()
		rendered, err := webhooks.WebhookConfigurations(webhooks.ManifestOptions{
			URL: e.local.Gatehouse.URL, Layout: layout, Options: webhooks.OptionsFromConfig(cfg),
		})
		if err != nil {
			b.Fatal(err)
		}
		objs, err := localcluster.DecodeManifests(rendered)
		if err != nil {
			b.Fatal(err)
		}
		for _, obj := range objs {
			hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
			for _, h := range hooks {
				_ = unstructured.SetNestedField(h.(map[string]any), caBundle, "clientConfig", "caBundle")
			}
			_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
			want[obj.GetKind()] = obj
		}
	}
	apply(want)
	return func() { apply(saved) }
}

// BenchmarkPodCreateByLayout creates pods one after another in a namespace
// every pod webhook covers (opted in to the pod security defaults, labelled
// harnessed), through the API server, with no gatehouse configuration, the
// separate layout and the combined layout. It reports the latency
// distribution of the creates. Run it with
//
//	make e2e-bin && cd e2e && KUBEBUILDER_ASSETS=... go test -run '^$' -bench PodCreateByLayout -benchtime 300x
func BenchmarkPodCreateByLayout(b *testing.B) {
	e := requireCluster(b)
	if e.local == nil {
		b.Skip("needs the local control plane")
	}
	ctx := context.Background()
	// client-go's default client-side rate limit (5 requests/s) would
	// measure itself.
	fast := rest.CopyConfig(e.config)
	fast.QPS, fast.Burst = -1, 0
	cl, err := client.New(fast, client.Options{Scheme: e.client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	ns := "e2e-layout-bench"
	labels := map[string]string{"gatehouse.dev/security-defaults": "enabled", "gatehouse.dev/harnessed": "true"}
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	for _, layout := range []string{"none", webhooks.LayoutSeparate, webhooks.LayoutCombined} {
		b.Run(layout, func(b *testing.B) {
			restore := installLayout(b, e, layout)
			defer restore()
			var lat []time.Duration
			for b.Loop() {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: layout + "-"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
				}
				start := time.Now()
				if err := cl.Create(ctx, pod); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		})
	}
}
