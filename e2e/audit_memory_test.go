package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/certs"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
)

// The stored objects of TestAuditKeepsTheServingReplicasBounded: admissible
// Pods (deploy/examples/pod-allowed.yaml) of about 1 MiB each, a
// container's environment value making up the size.
const (
	largePodsNamespace = "audit-memory"
	largePods          = 64
	largePodBytes      = 1 << 20
)

// TestAuditKeepsTheServingReplicasBounded (docs/audit.md, "Isolation"): with
// 64 admissible Pods of 1 MiB stored, `gatehouse serve` as deploy/default
// runs it (the binary; the webhook role, which serves admission, and the
// audit role, each in a process of its own) answers every review sent to
// it while the audit runs a pass over them; the serving process never
// audits and its peak RSS stays under the webhook Deployment's memory
// limit, whatever the cluster stores, and the audit process's stays under
// the audit Deployment's, since it holds one listed object at a time. The
// peaks are logged (docs/performance.md, "Audit").
func TestAuditKeepsTheServingReplicasBounded(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	deployed := renderDeploy(t, deployDefaultDir)
	limit := func(name string) int64 {
		t.Helper()
		d := deployed.deploymentNamed(t, name)
		if d == nil {
			t.FailNow()
		}
		q, ok := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		if !ok {
			t.Fatalf("Deployment %s sets no memory limit", name)
		}
		return q.Value()
	}
	servingLimit, auditLimit := limit("gatehouse"), limit("gatehouse-audit")
	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storeLargePods(ctx, t, b)

	work := t.TempDir()
	bundle, err := certs.Dev(filepath.Join(work, "tls"), certs.DevHosts(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	servingMetrics, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	auditMetrics, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	serving, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{CertDir: bundle.Dir, WorkDir: work, Kubeconfig: b.adminKubeconfig,
		Binary: bin, MetricsAddr: servingMetrics, LogName: "webhook.log"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = serving.Stop(30 * time.Second) }()
	if err := serving.WaitReady(time.Minute); err != nil {
		t.Fatal(err)
	}

	// Reviews through the serving process, as the API server sends them,
	// from before the audit starts until its pass is done.
	review := newPodReviewer(t, bundle.CAFile, serving.URL)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reviews int
	var failures []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := review(ctx)
			time.Sleep(10 * time.Millisecond) // pacing, not a deadline: the machine is shared
			mu.Lock()
			reviews++
			if err != nil && len(failures) < 10 {
				failures = append(failures, err.Error())
			}
			mu.Unlock()
		}
	}()
	stopReviews := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	defer stopReviews()

	auditor, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{Role: "audit", WorkDir: work, Kubeconfig: b.adminKubeconfig,
		Binary: bin, MetricsAddr: auditMetrics, LogName: "audit.log", LeaderElectionNamespace: localcluster.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = auditor.Stop(30 * time.Second) }()
	if err := auditor.WaitReady(time.Minute); err != nil {
		t.Fatal(err)
	}
	for {
		raw, err := auditor.Metrics() // the listener may still be starting
		if err != nil {
			select {
			case <-ctx.Done():
				t.Fatalf("the audit's metrics: %v; see %s", err, auditor.Log)
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		fams := parseMetrics(t, raw)
		if metricValue(fams, "gatehouse_audit_passes_total", "result", "failed") > 0 {
			t.Fatalf("the audit pass failed; see %s", auditor.Log)
		}
		if metricValue(fams, "gatehouse_audit_passes_total", "result", "completed") > 0 {
			if n := metricValue(fams, "gatehouse_audit_objects_total", "", ""); n < largePods {
				t.Errorf("the audit pass reviewed %v objects, fewer than the %d Pods stored", n, largePods)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no audit pass completed; see %s", auditor.Log)
		case <-time.After(200 * time.Millisecond):
		}
	}
	stopReviews()

	servingProc, err := perf.ReadProc(serving.Pid)
	if err != nil {
		t.Fatal(err)
	}
	auditProc, err := perf.ReadProc(auditor.Pid)
	if err != nil {
		t.Fatal(err)
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	t.Logf("%d Pods of %d KiB stored; peak RSS: serving (webhook role) %.1f MiB, audit role %.1f MiB; %d reviews during the pass",
		largePods, largePodBytes>>10, mib(servingProc.PeakRSS), mib(auditProc.PeakRSS), reviews)
	if reviews == 0 {
		t.Fatal("no review was sent during the audit pass")
	}
	if len(failures) > 0 {
		t.Errorf("reviews failed during the audit pass: %v", failures)
	}
	if servingProc.PeakRSS >= servingLimit {
		t.Errorf("the serving process peaked at %.1f MiB, at or above deploy/default's limit of %.0f MiB for the webhook replicas", mib(servingProc.PeakRSS), mib(servingLimit))
	}
	if auditProc.PeakRSS >= auditLimit {
		t.Errorf("the audit process peaked at %.1f MiB, at or above deploy/default's limit of %.0f MiB for the audit", mib(auditProc.PeakRSS), mib(auditLimit))
	}
	fams := scrape(t, serving)
	if n := metricValue(fams, "gatehouse_audit_passes_total", "result", "completed") + metricValue(fams, "gatehouse_audit_objects_total", "", ""); n != 0 {
		t.Errorf("the serving process audited (gatehouse_audit_passes_total and objects_total add up to %v): the webhook role must never audit", n)
	}
}

// storeLargePods stores the large admissible Pods on the bare cluster and
// deletes them when the test ends (unscheduled Pods go at once).
func storeLargePods(ctx context.Context, t *testing.T, b *bareCluster) {
	t.Helper()
	if err := b.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: largePodsNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.admin.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(largePodsNamespace)); err != nil {
			t.Errorf("deleting the large Pods: %v", err)
		}
	})
	template := examplePod(t)
	blob := strings.Repeat("x", largePodBytes-4<<10)
	for i := range largePods {
		pod := template.DeepCopy()
		pod.Name, pod.Namespace = fmt.Sprintf("large-%02d", i), largePodsNamespace
		pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PAYLOAD", Value: blob}}
		if err := b.admin.Create(ctx, pod); err != nil {
			t.Fatalf("storing Pod %s: %v", pod.Name, err)
		}
	}
}

// examplePod is deploy/examples/pod-allowed.yaml, which every webhook
// admits.
func examplePod(t *testing.T) *corev1.Pod {
	t.Helper()
	objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", "pod-allowed.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("deploy/examples/pod-allowed.yaml: %d objects, %v", len(objs), err)
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
}

// newPodReviewer returns a function that sends the validating combined
// endpoint of the gatehouse at base a CREATE review of the example Pod, as
// the API server does, and says why the answer is not a well-formed allow.
func newPodReviewer(t *testing.T, caFile, base string) func(context.Context) error {
	t.Helper()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}
	pod := examplePod(t)
	pod.APIVersion, pod.Kind = "v1", "Pod"
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	return func(ctx context.Context) error {
		n++
		uid := types.UID(fmt.Sprintf("audit-memory-%d", n))
		body, _ := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: uid, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: pod.Namespace, Name: pod.Name,
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}},
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/validate/combined-fail", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var answer admissionv1.AdmissionReview
		if err := json.Unmarshal(out, &answer); err != nil || resp.StatusCode != http.StatusOK || answer.Response == nil || answer.Response.UID != uid {
			return fmt.Errorf("review %s: HTTP %d, %.200s", uid, resp.StatusCode, out)
		}
		if !answer.Response.Allowed {
			return fmt.Errorf("review %s: the admissible Pod was denied: %v", uid, answer.Response.Result)
		}
		return nil
	}
}

// scrape reads the metrics of a running gatehouse.
func scrape(t *testing.T, g *localcluster.Gatehouse) map[string]*dto.MetricFamily {
	t.Helper()
	raw, err := g.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return parseMetrics(t, raw)
}

// metricValue sums the counter or gauge name over the series whose label
// has value (every series when label is "").
func metricValue(fams map[string]*dto.MetricFamily, name, label, value string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if label != "" {
			match := false
			for _, l := range m.GetLabel() {
				match = match || (l.GetName() == label && l.GetValue() == value)
			}
			if !match {
				continue
			}
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}
