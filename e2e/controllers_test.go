package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
)

// TestContractsThroughControllers: in a cluster, pods come from controllers,
// each writing as its own service account, and a denial surfaces as a
// FailedCreate event on the owner. The local control plane runs
// kube-controller-manager (built from the pinned sources) for this test; on
// kind the cluster's own runs.
//   - A harnessed operator's Deployment: the pod its ReplicaSet creates is
//     injected with the harness proxy (PROXY).
//   - A Deployment and a Job in an opted-in namespace: their pods come out
//     with the pod security defaults (PSC).
//   - A Deployment stored before its namespace opted in, whose pod runs as
//     uid 0 with runAsNonRoot defaulted: scaled up, its ReplicaSet's pod is
//     refused by the PSC guard, and the ReplicaSet's FailedCreate event
//     carries gatehouse's code, as kubectl describe shows it.
func TestContractsThroughControllers(t *testing.T) {
	e := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if e.local != nil {
		m, err := e.local.StartControllerManager(ctx)
		if errors.Is(err, localcluster.ErrNoControllerManager) {
			// make e2e-matrix runs other kube-apiserver minors, built
			// without it; make test always builds it (e2e/tools/build.sh).
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Stop() })
	}
	opts := serverOptions()

	t.Run("a harnessed operator's Deployment gets injected pods", func(t *testing.T) {
		ns := testNamespace(t, e, t.Name(), nil, nil)
		if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator"}}); err != nil {
			t.Fatal(err)
		}
		h := operatorHarness(t, "e2e-controllers-operator", "e2e.gatehouse.dev/controllers", ns, []any{"operator"}, true)
		if err := e.client.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })
		// The namespace fails closed once it is labelled; wait for that, so
		// the pod is injected by the entry a real operator pod meets.
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &corev1.Namespace{}
			err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got)
			_, ok := got.Labels[opts.HarnessedNamespaceLabel]
			return ok, err
		}); err != nil {
			t.Fatalf("namespace %s was never labelled harnessed: %v", ns, err)
		}
		d := deployment(ns, "operator", "operator", nil)
		if err := e.client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		pod := ownedPod(ctx, t, e, ns, "ReplicaSet")
		c := pod.Spec.Containers[0]
		host := slices.IndexFunc(c.Env, func(v corev1.EnvVar) bool {
			return v.Name == "KUBERNETES_SERVICE_HOST" && v.Value == proxy.BuiltinConfig().Host
		})
		mounted := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "proxy-api-access" && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount"
		})
		if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken || host < 0 || mounted < 0 {
			t.Errorf("the ReplicaSet's pod %s is not injected: automount %v, env %v, mounts %v",
				pod.Name, pod.Spec.AutomountServiceAccountToken, c.Env, c.VolumeMounts)
		}
	})

	optIn := map[string]string{opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value}
	t.Run("controller-created pods in an opted-in namespace get the defaults", func(t *testing.T) {
		ns := testNamespace(t, e, t.Name(), nil, optIn)
		if err := e.client.Create(ctx, deployment(ns, "web", "", nil)); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "batch"},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "run", Image: "registry.example/batch:1"}},
			}}}}
		if err := e.client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		for _, owner := range []string{"ReplicaSet", "Job"} {
			pod := ownedPod(ctx, t, e, ns, owner)
			sc := pod.Spec.SecurityContext
			if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != opts.PodDefaults.RunAsUser || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Errorf("the %s's pod %s lacks the pod security defaults: %+v", owner, pod.Name, sc)
			}
		}
	})

	t.Run("the guard's denial of a controller's pod is the owner's FailedCreate event", func(t *testing.T) {
		ns := testNamespace(t, e, t.Name(), nil, nil)
		root := &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
		d := deployment(ns, "runs-as-root", "", root)
		d.Spec.Replicas = ptr.To[int32](0)
		if err := e.client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		// The namespace opts in after the Deployment was stored; scaling it
		// (its scale subresource, which no webhook intercepts) makes the
		// ReplicaSet controller create a pod that the defaults make
		// runAsNonRoot while it runs as uid 0.
		setNamespaceLabels(t, e, ns, optIn)
		cs, err := kubernetes.NewForConfig(e.config)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		var message string
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			events := &corev1.EventList{}
			if err := e.client.List(ctx, events, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, ev := range events.Items {
				if ev.InvolvedObject.Kind == "ReplicaSet" && ev.Reason == "FailedCreate" {
					message = ev.Message
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			t.Fatalf("no FailedCreate event on the ReplicaSet: %v", err)
		}
		t.Logf("FailedCreate: %s", message)
		if !strings.Contains(message, "pod-security") || !strings.Contains(message, "RunAsRootConflict") {
			t.Errorf("the FailedCreate event does not name the webhook and code: %s", message)
		}
	})
}

// deployment is a one-replica Deployment of one container, run as
// serviceAccount ("" for default), with the container's security context.
func deployment(ns, name, serviceAccount string, sc *corev1.SecurityContext) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: serviceAccount,
					Containers:         []corev1.Container{{Name: "main", Image: "registry.example/" + name + ":1", SecurityContext: sc}},
				},
			},
		},
	}
}

// ownedPod waits for a pod in ns whose controller is of kind owner.
func ownedPod(ctx context.Context, t *testing.T, e *env, ns, owner string) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := e.client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range pods.Items {
			if ref := metav1.GetControllerOf(&pods.Items[i]); ref != nil && ref.Kind == owner {
				found = &pods.Items[i]
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no pod created by a %s in %s: %v", owner, ns, err)
	}
	return found
}
