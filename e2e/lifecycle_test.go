package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

func pvc(ns, name, scope string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			"secrets.kubedoop.dev/class": "tls",
			"secrets.kubedoop.dev/scope": scope,
		}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Mi")}},
		},
	}
}

// TestUpdateIsAdmissionToo: an UPDATE that introduces an offending value is
// denied, per contract.
func TestUpdateIsAdmissionToo(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)

	claim := pvc(ns, "tls", "pod")
	if err := e.client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Annotations["secrets.kubedoop.dev/scope"] = "pod,,node"
	webhook, causes := liveCauses(t, e.client.Update(ctx, claim))
	if webhook != "secret-scope" || strings.Join(causes, " ") != "ScopeEntryEmpty@metadata.annotations[secrets.kubedoop.dev/scope]" {
		t.Errorf("SCOPE update: %s %v", webhook, causes)
	}

	sts := ownedStatefulSet(ns, "prod-namenode", hdfsServiceAccount)
	if err := e.client.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	sts.Spec.Template.Spec.ServiceAccountName = "cluster-admin-sa"
	webhook, causes = liveCauses(t, e.client.Update(ctx, sts))
	if webhook != "service-account" || strings.Join(causes, " ") != "ServiceAccountMismatch@spec.template.spec.serviceAccountName" {
		t.Errorf("SA update: %s %v", webhook, causes)
	}

	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "unbounded-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "unbounded-system", Name: "unbounded-component-overrides"},
		Data: map[string]string{"o.yaml": "apiVersion: overrides.unbounded-cloud.io/v1alpha1\noverrides:\n- component: machina\n  kind: Deployment\n" +
			"  patch: {spec: {replicas: 2}}\n"},
	}
	_ = e.client.Delete(ctx, cm) // a fixture case may have left it
	if err := e.client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), cm) })
	cm.Data["o.yaml"] += "- component: machina\n  kind: Deployment\n  patch: {spec: {template: {spec: {hostPID: true}}}}\n"
	webhook, causes = liveCauses(t, e.client.Update(ctx, cm))
	if webhook != "component-overrides" || strings.Join(causes, " ") != "OverridePathProtected@data[o.yaml].overrides[1].patch.spec.template.spec.hostPID" {
		t.Errorf("OVR update: %s %v", webhook, causes)
	}
}

// TestRatchetingObjectsStoredBeforeTheRule stores offending objects while
// gatehouse's validating configuration is deleted (the break-glass path, and
// how objects that predate a rule exist), registers it again, and shows that
// unrelated edits pass (with a warning where SCOPE is sent them) while edits
// of the offending field are denied.
func TestRatchetingObjectsStoredBeforeTheRule(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it deletes and restores the webhook configuration")
	}
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)

	restore := deleteConfiguration(t, e, "ValidatingWebhookConfiguration")
	legacy := pvc(ns, "legacy", "pod,,node")
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.client.Create(ctx, legacy.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	}); err != nil {
		t.Fatalf("with the configuration deleted the offending PVC should be stored: %v", err)
	}

	if err := restore(); err != nil {
		t.Fatal(err)
	}
	probe := pvc(ns, "probe", "node=x")
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return e.client.Create(ctx, probe.DeepCopy(), client.DryRunAll) != nil, nil
	}); err != nil {
		t.Fatalf("gatehouse did not come back after re-registration: %v", err)
	}

	c, warnings := clientWithWarnings(t, e)
	var stored corev1.PersistentVolumeClaim
	if err := c.Get(ctx, client.ObjectKeyFromObject(legacy), &stored); err != nil {
		t.Fatal(err)
	}
	stored.Labels = map[string]string{"team": "a"}
	if err := c.Update(ctx, &stored); err != nil {
		t.Fatalf("a label edit of an object stored before the rule must pass: %v", err)
	}
	// A label edit changes nothing SCOPE reads, so it is never sent; an
	// edit of another secret-operator annotation is, and the unchanged
	// offending value is relayed as a warning.
	if err := c.Get(ctx, client.ObjectKeyFromObject(legacy), &stored); err != nil {
		t.Fatal(err)
	}
	stored.Annotations["secrets.kubedoop.dev/format"] = "tls-pem"
	if err := c.Update(ctx, &stored); err != nil {
		t.Fatalf("an edit beside the offending value of an object stored before the rule must pass: %v", err)
	}
	found := false
	for _, w := range warnings.all() {
		found = found || strings.HasPrefix(w, "gatehouse secret-scope: ScopeEntryEmpty at metadata.annotations[secrets.kubedoop.dev/scope]: unchanged since it was stored")
	}
	if !found {
		t.Errorf("the ratcheted finding was not relayed as a warning: %q", warnings.all())
	}
	stored.Annotations["secrets.kubedoop.dev/scope"] = "node,,pod"
	if webhook, _ := liveCauses(t, c.Update(ctx, &stored)); webhook != "secret-scope" {
		t.Errorf("changing the offending value must be denied by secret-scope, was %s", webhook)
	}
}

// TestServingCertRotation has cert-manager reissue the serving certificate
// while reviews flow: gatehouse picks up the new certificate without a
// restart and no review fails.
func TestServingCertRotation(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it reads the served certificate on the host")
	}
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)
	before := servedCert(t, e.local.Gatehouse.Port)

	var reviews, failures atomic.Int64
	var failMu sync.Mutex
	var failList []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				good, bad := i%2 == 0, pvc(ns, fmt.Sprintf("r-%d-%d", w, i), "node=x")
				if good {
					bad.Annotations["secrets.kubedoop.dev/scope"] = "node"
				}
				err := e.client.Create(ctx, bad, client.DryRunAll)
				reviews.Add(1)
				ok := (good && err == nil) || (!good && apierrors.IsInvalid(err))
				if !ok {
					failures.Add(1)
					failMu.Lock()
					failList = append(failList, fmt.Sprint(err))
					failMu.Unlock()
				}
			}
		}()
	}

	var crt cmapi.Certificate
	if err := e.client.Get(ctx, types.NamespacedName{Namespace: localcluster.Namespace, Name: localcluster.ServingCert}, &crt); err != nil {
		t.Fatal(err)
	}
	// What `cmctl renew` does: mark the Certificate as Issuing.
	crt.Status.Conditions = append(crt.Status.Conditions, cmapi.CertificateCondition{
		Type: cmapi.CertificateConditionIssuing, Status: cmmeta.ConditionTrue,
		Reason: "ManuallyTriggered", Message: "rotation test", ObservedGeneration: crt.Generation,
		LastTransitionTime: &metav1.Time{Time: time.Now()},
	})
	if err := e.client.Status().Update(ctx, &crt); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return !bytes.Equal(servedCert(t, e.local.Gatehouse.Port), before), nil
	})
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("gatehouse never served a reissued certificate: %v", err)
	}
	secret, err := e.local.ServingSecret(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(secret.Data[corev1.TLSCertKey])
	if block == nil || !bytes.Equal(servedCert(t, e.local.Gatehouse.Port), block.Bytes) {
		t.Error("the served certificate is not the one in the reissued Secret")
	}
	time.Sleep(2 * time.Second) // reviews keep flowing on the new certificate
	close(stop)
	wg.Wait()
	t.Logf("%d reviews during rotation, %d failed", reviews.Load(), failures.Load())
	if reviews.Load() < 10 {
		t.Errorf("only %d reviews ran during rotation; the test proves little", reviews.Load())
	}
	if failures.Load() != 0 {
		t.Errorf("%d reviews failed during rotation, e.g. %v", failures.Load(), failList[:min(3, len(failList))])
	}
}

func servedCert(t *testing.T, port int) []byte {
	t.Helper()
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("dialling gatehouse: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Raw
}
