package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// hollowTaint keeps every pod but this test's off the hollow node: pods
// other tests left behind stay unbound.
const hollowTaint = "e2e.gatehouse.dev/hollow"

// TestKubeletAgreesWithThePodSecurityGuard: PSC's guard exists because the
// kubelet refuses, far from the cause, a pod that runs as uid 0 while its
// runAsNonRoot is true. Here the kubelet is Kubernetes' own code, run by
// kubemark's hollow node with a fake container runtime, and kube-scheduler
// binds the pods to it:
//   - the pod the guard denies in an opted-in namespace (RunAsRootConflict)
//     is admitted in a namespace that has not opted in, bound, and refused by
//     the kubelet: CreateContainerConfigError, "container's runAsUser breaks
//     non-root policy";
//   - the fix the guard's message names (runAsNonRoot: false stated on the
//     container) is admitted in the opted-in namespace and starts;
//   - a Deployment's pod in the opted-in namespace, with the defaults
//     gatehouse filled in, starts.
func TestKubeletAgreesWithThePodSecurityGuard(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane's hollow node: a kind node's kubelet would pull images that do not exist")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	// The controllers publish the root CA ConfigMap that every pod's token
	// volume reads, and create the Deployment's pod.
	startControllers(ctx, t, e)
	scheduler, err := e.local.StartScheduler(ctx)
	if errors.Is(err, localcluster.ErrNoNode) {
		t.Skip(err) // make e2e-matrix's binary directories
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = scheduler.Stop() })
	const nodeName = "hollow-0"
	node, err := e.local.StartHollowNode(ctx, nodeName, hollowTaint+"=true:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = node.Stop()
		_ = e.client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}})
	})
	off := testNamespace(t, e, t.Name()+"/off", nil, nil)
	on := testNamespace(t, e, t.Name()+"/on", nil, optInLabel)

	root := &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
	nonRoot := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	webhook, causes := liveCauses(t, e.client.Create(ctx, hollowPod(on, "conflict", nonRoot, root), client.DryRunAll))
	if got := webhook + " " + strings.Join(causes, " "); got != "pod-security RunAsRootConflict@spec.containers[0].securityContext.runAsUser" {
		t.Fatalf("the guard on a pod running as uid 0 with runAsNonRoot: %s", got)
	}
	if err := e.client.Create(ctx, hollowPod(off, "conflict", nonRoot, root)); err != nil {
		t.Fatal(err)
	}
	refused := waitPod(ctx, t, e, off, "conflict", "refused by the kubelet", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "CreateContainerConfigError"
	})
	waiting := refused.Status.ContainerStatuses[0].State.Waiting
	t.Logf("kubelet on %s: %s: %s", refused.Spec.NodeName, waiting.Reason, waiting.Message)
	if !strings.Contains(waiting.Message, "runAsUser breaks non-root policy") {
		t.Errorf("the kubelet refused the pod for another reason: %s", waiting.Message)
	}

	fixed := &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false)}
	if err := e.client.Create(ctx, hollowPod(on, "fixed", nonRoot, fixed)); err != nil {
		t.Fatalf("the guard's fix was refused: %v", err)
	}
	waitPod(ctx, t, e, on, "fixed", "Running", running)

	d := deployment(on, "web", "", nil)
	d.Spec.Template.Spec.Tolerations = hollowPod(on, "", nil, nil).Spec.Tolerations
	if err := e.client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, e, on, ownedPod(ctx, t, e, on, "ReplicaSet").Name, "Running", running)
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil {
		t.Errorf("the Deployment's pod %s runs without the defaults: %+v", pod.Name, sc)
	}
}

// hollowPod is a pod of one container that tolerates the hollow node's
// taint, with the given pod and container security contexts.
func hollowPod(ns, name string, podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metadata(ns, name),
		Spec: corev1.PodSpec{
			SecurityContext: podSC,
			Containers:      []corev1.Container{{Name: "main", Image: "registry.example/app:1", SecurityContext: sc}},
			Tolerations:     []corev1.Toleration{{Key: hollowTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }

// waitPod waits until the pod ns/name satisfies done and returns it.
func waitPod(ctx context.Context, t *testing.T, e *env, ns, name, what string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return false, err
		}
		return done(pod), nil
	}); err != nil {
		t.Fatalf("pod %s/%s never %s (node %q, phase %s, statuses %+v): %v", ns, name, what, pod.Spec.NodeName, pod.Status.Phase, pod.Status.ContainerStatuses, err)
	}
	return pod
}
