package e2e

import (
	"context"
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
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
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
// A claim of a secret-operator volume is not among the contents, because it
// does not go: the PVC protection controller removes the claim's finalizer
// with an UPDATE, which validating-fail takes (the claim carries
// secrets.kubedoop.dev/ annotations) and, with gatehouse down, refuses; the
// namespace stays Terminating until gatehouse answers again (an UPDATE is
// admission too, docs/contracts.md §0.7, also of an object being deleted;
// docs/operations.md tells operators).
func TestNamespaceDeletionWhileGatehouseIsDown(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it stops and restarts gatehouse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	startControllers(ctx, t, e)
	opts := serverOptions()
	ns := testNamespace(t, e, t.Name(), nil, optInLabel)

	h := operatorHarness(t, "e2e-namespace-deletion", "e2e.gatehouse.dev/namespace-deletion", ns, nil, true)
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &corev1.Namespace{}
		err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got)
		_, ok := got.Labels[opts.HarnessedNamespaceLabel]
		return ok, err
	}); err != nil {
		t.Fatalf("namespace %s was never labelled harnessed: %v", ns, err)
	}

	// The contents: a Deployment's pod (PROXY and PSC), a product CR with
	// its StatefulSet's pod (SA).
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster",
		"metadata": map[string]any{"namespace": ns, "name": "prod"},
	}}
	if err := e.client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	derived := serviceaccount.DerivedServiceAccountName("HdfsCluster", "prod")
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

	binary, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.local.StopGatehouse(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.local.RestartGatehouse(binary); err != nil {
			t.Errorf("restarting gatehouse: %v", err)
		} else if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Error(err)
		}
	})
	// The configurations are the rendered ones, and gatehouse is down:
	// a pod in the namespace is refused for a failed call.
	checkExclusions(t, e)
	if err := e.client.Create(ctx, plainPod(ns, "probe"), client.DryRunAll); failedWebhook(err) == "" {
		t.Fatalf("with gatehouse down a pod in %s was not refused for a failed webhook call: %v", ns, err)
	}

	if err := e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Namespace{}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		var conditions []string
		for _, c := range got.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				conditions = append(conditions, string(c.Type)+": "+c.Message)
			}
		}
		t.Fatalf("namespace %s was not deleted while gatehouse was down (%v): %s", ns, err, strings.Join(conditions, "; "))
	}
}
