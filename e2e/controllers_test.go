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
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
//   - A kubedoop product's StatefulSet, created by the operator's service
//     account as hdfs-operator 0.3.0 renders it: its pods run as the
//     ServiceAccount (SA). An overridden ServiceAccount is refused at the
//     StatefulSet's own admission (the operator's create call); its pods
//     would be controlled by the StatefulSet, not the product, so no
//     FailedCreate event is where SA speaks. The override in the CR's
//     podOverrides is refused at the CR's admission.
//   - CronJobs firing every minute: the pod of the Job the CronJob
//     controller creates gets the defaults; for a CronJob whose pods would
//     run as uid 0 with runAsNonRoot defaulted, the guard refuses the Job
//     itself (its template, as its pods would look), so the FailedCreate
//     event is on the CronJob.
func TestContractsThroughControllers(t *testing.T) {
	e := requireCluster(t)
	// Not deferred: the CronJob case runs in parallel, after this function
	// returns and before the cleanups.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	startControllers(ctx, t, e)
	opts := serverOptions()

	t.Run("a harnessed operator's Deployment gets injected pods", func(t *testing.T) {
		ns := testNamespace(t, e, t.Name(), nil, nil)
		if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "operator"}}); err != nil {
			t.Fatal(err)
		}
		h := operatorHarness(t, "e2e-controllers-operator", "e2e.gatehouse.dev/controllers", ns, []any{"operator"}, true)
		// The namespace fails closed once it is labelled; harnessNamespace
		// waits for that, so the pod is injected by the entry a real
		// operator pod meets.
		harnessNamespace(ctx, t, e, h, ns)
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
		message := ownerEvent(ctx, t, e, ns, "ReplicaSet", "FailedCreate")
		t.Logf("FailedCreate: %s", message)
		if !strings.Contains(message, "pod-security") || !strings.Contains(message, "RunAsRootConflict") {
			t.Errorf("the FailedCreate event does not name the webhook and code: %s", message)
		}
	})

	t.Run("a kubedoop product's StatefulSet runs as its operator's account, and an override is refused at its owner's admission", func(t *testing.T) {
		ns := testNamespace(t, e, t.Name(), nil, nil)
		// The product CR itself: the StatefulSets' ownerReference must name
		// a live owner, or the garbage collector deletes them.
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster",
			"metadata": map[string]any{"namespace": ns, "name": "prod"},
			"spec": map[string]any{"nameNode": map[string]any{
				"roleGroups": map[string]any{"default": map[string]any{"replicas": int64(1)}},
			}},
		}}
		if err := e.client.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
		derived := hdfsServiceAccount
		operator := productOperator(t, e, ns)
		for _, name := range []string{derived, "admin"} {
			if err := operator.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		// As hdfs-operator 0.3.0 renders a role group: controlled by the CR
		// (operator-go v0.12 SetOwnerReference), run as its
		// account.
		owner := metav1.OwnerReference{APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(), Name: cr.GetName(), UID: cr.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		sts := ownedStatefulSet(ns, "prod-namenode-default", derived)
		sts.OwnerReferences = []metav1.OwnerReference{owner}
		sts.Spec.ServiceName = sts.Name
		if err := operator.Create(ctx, sts); err != nil {
			t.Fatalf("the operator's StatefulSet with its own ServiceAccount was refused: %v", err)
		}
		pod := ownedPod(ctx, t, e, ns, "StatefulSet")
		if pod.Spec.ServiceAccountName != derived {
			t.Errorf("the StatefulSet's pod %s runs as %q, want %q", pod.Name, pod.Spec.ServiceAccountName, derived)
		}

		// An overridden account is refused where it is written: at the
		// StatefulSet's own admission, the operator's create call (which
		// its reconcile reports). Nothing is stored, so the StatefulSet
		// controller never sees it and no FailedCreate event can follow;
		// the pods it creates are controlled by the StatefulSet, not by the
		// product, and SA judges them by their owner.
		overridden := ownedStatefulSet(ns, "prod-datanode-default", "admin")
		overridden.OwnerReferences = []metav1.OwnerReference{owner}
		overridden.Spec.ServiceName = overridden.Name
		webhook, causes := liveCauses(t, operator.Create(ctx, overridden))
		if got := webhook + " " + strings.Join(causes, " "); got != "service-account ServiceAccountMismatch@spec.template.spec.serviceAccountName" {
			t.Errorf("the operator's StatefulSet with an overridden ServiceAccount: %s", got)
		}
		err := e.client.Get(ctx, client.ObjectKeyFromObject(overridden), &appsv1.StatefulSet{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the refused StatefulSet was stored: %v", err)
		}
		// One step earlier, the override in the CR's podOverrides is
		// refused at the CR's admission.
		stored := cr.DeepCopy()
		if err := e.client.Get(ctx, client.ObjectKeyFromObject(cr), stored); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(stored.Object, map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}},
			"spec", "nameNode", "podOverrides"); err != nil {
			t.Fatal(err)
		}
		webhook, causes = liveCauses(t, e.client.Update(ctx, stored))
		if got := webhook + " " + strings.Join(causes, " "); got != "service-account ServiceAccountOverridden@spec.nameNode.podOverrides.spec.serviceAccountName" {
			t.Errorf("the HdfsCluster's podOverrides with another ServiceAccount: %s", got)
		}
	})

	t.Run("a CronJob's Job's pods get the defaults, and the guard's denial is the CronJob's FailedCreate event", func(t *testing.T) {
		// The schedule fires at the next full minute: wait for it while
		// the other cases run.
		t.Parallel()
		ns := testNamespace(t, e, t.Name(), nil, nil)
		// Both stored before the namespace opts in: once it has, the
		// pod-security guard judges a template as its pods will look,
		// and refuses the as-root one at its own admission.
		for _, c := range []struct {
			name string
			sc   *corev1.SecurityContext
		}{{"nightly", nil}, {"as-root", &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}}} {
			if err := e.client.Create(ctx, everyMinute(ns, c.name, c.sc)); err != nil {
				t.Fatal(err)
			}
		}
		setNamespaceLabels(t, e, ns, optIn)

		pod := ownedPod(ctx, t, e, ns, "Job")
		sc := pod.Spec.SecurityContext
		if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != opts.PodDefaults.RunAsUser || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("the CronJob's Job's pod %s lacks the pod security defaults: %+v", pod.Name, sc)
		}
		job := &batchv1.Job{}
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: metav1.GetControllerOf(pod).Name}, job); err != nil {
			t.Fatal(err)
		}
		if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "CronJob" || ref.Name != "nightly" {
			t.Errorf("the pod's Job %s was not created by the CronJob nightly: %+v", job.Name, ref)
		}
		// The as-root CronJob's Job never exists: the CronJob controller's
		// create of it is refused (its template as its pods would look),
		// and the event is on the CronJob.
		message := ownerEvent(ctx, t, e, ns, "CronJob", "FailedCreate")
		t.Logf("FailedCreate: %s", message)
		if !strings.Contains(message, "pod-security") || !strings.Contains(message, "RunAsRootConflict") {
			t.Errorf("the CronJob's FailedCreate event does not name the webhook and code: %s", message)
		}
	})
}

// startControllers starts kube-controller-manager on the local control plane
// for the rest of t (on kind the cluster's own controllers run). Only tests
// that need controllers start it: its garbage collector deletes objects
// whose owner does not exist, as many other tests' samples are.
func startControllers(ctx context.Context, t *testing.T, e *env) {
	t.Helper()
	if e.local == nil {
		return
	}
	m, err := e.local.StartControllerManager(ctx)
	if errors.Is(err, localcluster.ErrNoControllerManager) {
		// make e2e-matrix runs other kube-apiserver minors, built
		// without it; make test always builds it (tools/controlplane/build.sh).
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
}

// ownerEvent waits for an event with reason on an object of kind in ns and
// returns its message.
func ownerEvent(ctx context.Context, t *testing.T, e *env, ns, kind, reason string) string {
	t.Helper()
	var message string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		events := &corev1.EventList{}
		if err := e.client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, ev := range events.Items {
			if ev.InvolvedObject.Kind == kind && ev.Reason == reason {
				message = ev.Message
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no %s event on a %s in %s: %v", reason, kind, ns, err)
	}
	return message
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

// everyMinute is a CronJob that runs one container every minute, with the
// container's security context.
func everyMinute(ns, name string, sc *corev1.SecurityContext) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "run", Image: "registry.example/" + name + ":1", SecurityContext: sc}},
			}}}},
		},
	}
}

// productOperator returns a client that writes as a kubedoop operator's
// service account, with the rights its ClusterRole gives it in ns.
func productOperator(t *testing.T, e *env, ns string) client.Client {
	t.Helper()
	const user = "system:serviceaccount:kubedoop-operators:hdfs-operator"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hdfs-operator"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"get", "create"}},
			{APIGroups: []string{"hdfs.kubedoop.dev"}, Resources: []string{"hdfsclusters/finalizers"}, Verbs: []string{"update"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hdfs-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kubedoop-operators", Name: "hdfs-operator"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(e.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: e.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
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
