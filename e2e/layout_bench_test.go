package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// BenchmarkPodCreateByLayout creates pods one after another through the API
// server, with no gatehouse configuration, the separate layout, the combined
// layout, and the in-process layout without and with PSC's defaults as a
// MutatingAdmissionPolicy (e2e/perf's Switch moves between them and
// confirms each with a dry run of a denied pod), in two namespaces:
// "harnessed", which every pod webhook covers (opted in to the pod security
// defaults, labelled harnessed: a one-container Pod), and "opted-in", which
// only the pod security webhooks select (the end-to-end corpus's Pod: three
// containers and a secret volume). It reports the latency distribution of
// the creates. Run it with
//
//	make e2e-bin && cd e2e && KUBEBUILDER_ASSETS=... go test -run '^$' -bench PodCreateByLayout -benchtime 300x
func BenchmarkPodCreateByLayout(b *testing.B) {
	const inProcessWithPolicy = "in-process-defaults-policy"
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
	namespaces := []struct {
		kind, name string
		labels     map[string]string
		pod        func(layout string) client.Object
	}{
		{"harnessed", ns, map[string]string{"gatehouse.dev/security-defaults": "enabled", "gatehouse.dev/harnessed": "true"}, func(layout string) client.Object {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: layout + "-"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
			}
		}},
		{"opted-in", ns + "-opted-in", map[string]string{"gatehouse.dev/security-defaults": "enabled"}, func(layout string) client.Object {
			pod := perf.LifecycleObject(ns+"-opted-in", 0)
			pod.SetName("")
			pod.SetGenerateName(layout + "-")
			return pod
		}},
	}
	for _, n := range namespaces {
		if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels}}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
		if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: n.name, Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}

	installed, err := perf.LiveWebhookConfigs(ctx, e.client, localcluster.WebhookConfigName, e.local.Gatehouse.URL)
	if err != nil {
		b.Fatal(err)
	}
	probes, err := localcluster.ReadManifests(filepath.Join(repo, "policies", "scope", "testdata", "fail", "pod-scope-empty-entry.yaml"))
	if err != nil || len(probes) != 1 {
		b.Fatalf("reading the probe fixture: %v", err)
	}
	probes[0].SetNamespace(ns)
	caBundle := installedCABundle(installed)
	layouts := map[string]*perf.Switch{
		route.LayoutCombined: {Client: e.client, Webhooks: installed, Probe: probes[0]},
		route.LayoutSeparate: {Client: e.client, Webhooks: renderLayout(b, e, route.LayoutSeparate, caBundle), Probe: probes[0]},
	}
	layouts[route.LayoutInProcess] = &perf.Switch{Client: e.client, Webhooks: renderLayout(b, e, route.LayoutInProcess, caBundle), Probe: probes[0]}
	layouts[inProcessWithPolicy] = &perf.Switch{Client: e.client, Probe: probes[0],
		Webhooks: renderManifests(b, e, route.ManifestOptions{Layout: route.LayoutInProcess, DefaultsPolicy: true}, caBundle)}
	// The suite installs the default layout; put it back.
	defer func() {
		if err := layouts[route.DefaultLayout].Set(ctx, perf.Gatehouse); err != nil {
			b.Error(err)
		}
	}()

	for _, layout := range []string{"none", route.LayoutSeparate, route.LayoutCombined, route.LayoutInProcess, inProcessWithPolicy} {
		sw, setup := layouts[layout], perf.Gatehouse
		if layout == "none" {
			sw, setup = layouts[route.DefaultLayout], perf.NoWebhooks
		}
		// Each switch deletes what the others installed.
		for name, other := range layouts {
			if name != layout {
				if err := other.Set(ctx, perf.NoWebhooks); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := sw.Set(ctx, setup); err != nil {
			b.Fatal(err)
		}
		for _, n := range namespaces {
			b.Run(layout+"/"+n.kind, func(b *testing.B) {
				var lat []time.Duration
				for b.Loop() {
					pod := n.pod(layout)
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
}
