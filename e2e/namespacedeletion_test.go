package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// TestNamespaceDeletionWhileGatehouseIsDown: a namespace that fail-closed
// entries cover (opted in to the pod security defaults, harnessed, holding a
// product CR and the StatefulSet it controls) is deleted while gatehouse is
// stopped and its webhook configurations stay as rendered. The namespace
// controller and the garbage collector delete everything in it and the
// namespace goes: deletions are never intercepted, and the pods the
// ReplicaSet and StatefulSet controllers try to create meanwhile are refused
// by the API server's NamespaceLifecycle plugin before any webhook.
//
// A second namespace holds a claim of a secret-operator volume (SCOPE),
// which the API server gives the PVC protection finalizer. The PVC
// protection controller removes it with an UPDATE that changes nothing SCOPE
// reads, which the API server therefore never sends to gatehouse
// (policies/scope UnchangedCEL): that namespace goes while gatehouse
// is down too. An UPDATE that changes the claim's secret-operator
// annotations is still refused for the failed call.
func TestNamespaceDeletionWhileGatehouseIsDown(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it stops and restarts gatehouse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	startControllers(ctx, t, e)
	ns := testNamespace(t, e, t.Name(), nil, optInLabel)

	h := operatorHarness(t, "e2e-namespace-deletion", "e2e.gatehouse.dev/namespace-deletion", ns, nil, true)
	harnessNamespace(ctx, t, e, h, ns)

	// The contents: a Deployment's pod (PROXY and PSC), a product CR with
	// its StatefulSet's pod (SA).
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster",
		"metadata": map[string]any{"namespace": ns, "name": "prod"},
	}}
	if err := e.client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	derived := hdfsServiceAccount
	if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: derived}}); err != nil {
		t.Fatal(err)
	}
	sts := ownedStatefulSet(ns, "prod-namenode-default", derived)
	sts.OwnerReferences = []metav1.OwnerReference{{APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(), Controller: ptr.To(true)}}
	for _, obj := range []client.Object{deployment(ns, "web", "", nil), sts} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	ownedPod(ctx, t, e, ns, "ReplicaSet")
	ownedPod(ctx, t, e, ns, "StatefulSet")
	withClaim := testNamespace(t, e, t.Name()+"/claim", nil, nil)
	claim := pvc(withClaim, "tls", "pod")
	if err := e.client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if len(claim.Finalizers) == 0 {
		t.Fatal("the claim got no PVC protection finalizer")
	}

	restart := stopGatehouse(t, e)
	// The configurations are the rendered ones, and gatehouse is down:
	// a pod in the namespace is refused for a failed call.
	checkExclusions(t, e)
	if err := e.client.Create(ctx, plainPod(ns, "probe"), client.DryRunAll); failedWebhook(err) == "" {
		t.Fatalf("with gatehouse down a pod in %s was not refused for a failed webhook call: %v", ns, err)
	}

	// The claim: a label edit is never sent; a change of its scope is, and
	// fails closed.
	labelled := claim.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	if err := e.client.Update(ctx, labelled, client.DryRunAll); err != nil {
		t.Errorf("with gatehouse down, a label edit of the claim was refused: %v", err)
	}
	rescoped := claim.DeepCopy()
	rescoped.Annotations["secrets.kubedoop.dev/scope"] = "node"
	if err := e.client.Update(ctx, rescoped, client.DryRunAll); failedWebhook(err) == "" {
		t.Errorf("with gatehouse down, a change of the claim's scope was not refused for a failed webhook call: %v", err)
	}

	for _, name := range []string{ns, withClaim} {
		if err := e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{ns, withClaim} {
		if err := namespaceGone(ctx, e, name); err != nil {
			t.Errorf("namespace %s was not deleted while gatehouse was down: %v", name, err)
		}
	}
	restart()
}

// stopGatehouse stops the local gatehouse and returns what starts it again,
// from a freshly built binary as a restarted pod runs one, and waits until
// it is ready. Whatever fails, the test's cleanup starts it again for the
// tests after it.
func stopGatehouse(t *testing.T, e *env) (restart func()) {
	t.Helper()
	binary, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.local.StopGatehouse(); err != nil {
		t.Fatal(err)
	}
	running := false
	restart = func() {
		if err := e.local.RestartGatehouse(binary); err != nil {
			t.Errorf("restarting gatehouse: %v", err)
		} else if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Error(err)
		}
		running = true
	}
	t.Cleanup(func() {
		if !running {
			restart()
		}
	})
	return restart
}

// namespaceGone waits until the namespace name no longer exists, or says why
// it is still there.
func namespaceGone(ctx context.Context, e *env, name string) error {
	got := &corev1.Namespace{}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKey{Name: name}, got)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err == nil {
		return nil
	}
	var conditions []string
	for _, c := range got.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			conditions = append(conditions, string(c.Type)+": "+c.Message)
		}
	}
	return fmt.Errorf("%w: %s", err, strings.Join(conditions, "; "))
}
