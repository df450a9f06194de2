package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/proxy"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// createHarness stores an OperatorHarness (removed when the test ends).
func createHarness(t *testing.T, e *env, manifest string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("OperatorHarness %s: %v", obj.GetName(), err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
}

// namespaceWith creates a namespace with labels and service accounts.
func namespaceWith(t *testing.T, e *env, name string, labels map[string]string, accounts ...string) {
	t.Helper()
	ctx := context.Background()
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	for _, a := range accounts {
		if err := e.client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: a}}); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually retries create until check accepts the stored result: the
// harness reaches gatehouse's cache through a watch, within seconds.
func eventually(t *testing.T, what string, create func() error, done func() bool) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		lastErr = create()
		return lastErr == nil && done(), nil
	})
	if err != nil {
		t.Fatalf("%s: not seen within 30 s (last error: %v)", what, lastErr)
	}
}

// createInjected (re)creates pod until the API server stores it with the
// harness proxy injected (a harness reaches gatehouse's cache a moment after
// it is created) and returns the stored pod.
func createInjected(t *testing.T, e *env, pod *corev1.Pod, what string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	stored := &corev1.Pod{}
	eventually(t, what, func() error {
		_ = e.client.Delete(ctx, pod.DeepCopy())
		_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(e.client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})), nil
		})
		if err := e.client.Create(ctx, pod.DeepCopy()); err != nil {
			return err
		}
		return e.client.Get(ctx, client.ObjectKeyFromObject(pod), stored)
	}, func() bool {
		return stored.Spec.AutomountServiceAccountToken != nil && !*stored.Spec.AutomountServiceAccountToken
	})
	return stored
}

func operatorPod(ns, name, account string) *corev1.Pod {
	image := "registry.example/operator:1.0"
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			ServiceAccountName: account,
			InitContainers:     []corev1.Container{{Name: "setup", Image: image}},
			Containers: []corev1.Container{
				{Name: "manager", Image: image, Env: []corev1.EnvVar{
					{Name: proxy.EnvHost, Value: "10.96.0.1"}, {Name: "LOG_LEVEL", Value: "info"},
				}},
				{Name: "metrics", Image: image},
			},
		},
	}
}

// checkInjected asserts the stored pod is exactly one the API server
// accepted after gatehouse replaced the ServiceAccount plugin's volume.
func checkInjected(t *testing.T, pod *corev1.Pod, want proxy.Config) {
	t.Helper()
	spec := &pod.Spec
	if a := spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("%s: automountServiceAccountToken = %v, want false", pod.Name, a)
	}
	var proxyVolumes int
	for _, v := range spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") {
			t.Errorf("%s: the ServiceAccount plugin's volume %s is still there", pod.Name, v.Name)
		}
		if v.Name != proxy.VolumeName {
			continue
		}
		proxyVolumes++
		p := v.Projected
		if p == nil || len(p.Sources) != 3 || p.Sources[0].ServiceAccountToken == nil ||
			p.Sources[0].ServiceAccountToken.ExpirationSeconds == nil || *p.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
			p.Sources[1].ConfigMap == nil || p.Sources[1].ConfigMap.Name != want.CAConfigMap || p.Sources[2].DownwardAPI == nil {
			t.Errorf("%s: volume %s is not the proxy's projected volume: %+v", pod.Name, v.Name, v.VolumeSource)
		}
	}
	if proxyVolumes != 1 {
		t.Errorf("%s: %d volumes named %s, want 1", pod.Name, proxyVolumes, proxy.VolumeName)
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		var mounts []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if m.MountPath == proxy.MountPath {
				mounts = append(mounts, m)
			}
		}
		if len(mounts) != 1 || mounts[0].Name != proxy.VolumeName || !mounts[0].ReadOnly {
			t.Errorf("%s/%s: mounts at %s: %+v, want exactly the read-only %s", pod.Name, c.Name, proxy.MountPath, mounts, proxy.VolumeName)
		}
		env := map[string][]string{}
		for _, v := range c.Env {
			env[v.Name] = append(env[v.Name], v.Value)
		}
		if got := env[proxy.EnvHost]; len(got) != 1 || got[0] != want.Host {
			t.Errorf("%s/%s: %s = %v, want exactly the proxy host", pod.Name, c.Name, proxy.EnvHost, len(got))
		}
		if got := env[proxy.EnvPort]; len(got) != 1 || got[0] != strconv.Itoa(int(want.Port)) {
			t.Errorf("%s/%s: %s is not the proxy port once", pod.Name, c.Name, proxy.EnvPort)
		}
	}
}

// TestHarnessProxyInjection: with the ServiceAccount admission plugin on,
// the pods of harnessed operators are stored with the proxy's volume, mount
// and environment instead of the plugin's token volume; other pods keep it;
// a pod declaring the reserved volume name is denied.
func TestHarnessProxyInjection(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	cfg := configv1alpha1.Default()
	want := route.OptionsFromConfig(cfg).Proxy
	failClosed := map[string]string{cfg.Harness.FailClosedNamespaceLabel: "true"}
	namespaceWith(t, e, "e2e-proxy-listed", failClosed, "operator", "bystander")
	namespaceWith(t, e, "e2e-proxy-open", nil, "anything")
	createHarness(t, e, `
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: e2e-proxy-listed}
spec:
  scopeToLabel: requires.e2e.gatehouse.dev/proxy-listed
  operator: {namespace: e2e-proxy-listed, serviceAccounts: [operator], injectProxyConfiguration: true}
`)
	createHarness(t, e, `
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: e2e-proxy-open}
spec:
  mode: Report
  operator: {namespace: e2e-proxy-open, injectProxyConfiguration: true}
`)

	for _, tc := range []struct{ ns, name, account string }{
		{"e2e-proxy-listed", "operator", "operator"},
		{"e2e-proxy-open", "any-account", "anything"},
	} {
		stored := createInjected(t, e, operatorPod(tc.ns, tc.name, tc.account), "proxy injection in "+tc.ns)
		checkInjected(t, stored, want)
	}

	// Not harnessed: stored as the ServiceAccount plugin left it.
	bystander := operatorPod("e2e-proxy-listed", "bystander", "bystander")
	if err := e.client.Create(ctx, bystander); err != nil {
		t.Fatal(err)
	}
	var pluginVolume bool
	for _, v := range bystander.Spec.Volumes {
		pluginVolume = pluginVolume || strings.HasPrefix(v.Name, "kube-api-access-")
		if v.Name == proxy.VolumeName {
			t.Errorf("the bystander pod got the proxy volume")
		}
	}
	if !pluginVolume {
		t.Errorf("the bystander pod lacks the ServiceAccount plugin's volume: %+v", bystander.Spec.Volumes)
	}

	// A user volume with the reserved name: denied, naming the field.
	taken := operatorPod("e2e-proxy-listed", "taken", "operator")
	taken.Spec.Volumes = []corev1.Volume{{Name: proxy.VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	err := e.client.Create(ctx, taken, client.DryRunAll)
	if err == nil {
		t.Fatal("a pod declaring volume proxy-api-access was admitted")
	}
	webhook, causes := liveCauses(t, err)
	if got := webhook + " " + strings.Join(causes, " "); got != "harness-proxy ProxyVolumeNameTaken@spec.volumes[0].name" {
		t.Errorf("denial: %s", got)
	}
}

// TestHarnessLabels: objects created in a scoped namespace carry its scope
// label; another value is denied; a cluster-scoped object the harnessed
// service account creates gets the label, which that account cannot remove
// afterwards (a person can); the account can neither strip a pod's label
// through pods/status nor add one with a value its namespace does not have,
// while a cluster admin can change the label through pods/status.
func TestHarnessLabels(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	const key = "requires.e2e.gatehouse.dev/labels"
	namespaceWith(t, e, "e2e-labels-operator", nil, "operator", "default")
	namespaceWith(t, e, "e2e-labels-tenant", map[string]string{key: "tenant-1"}, "default")
	createHarness(t, e, fmt.Sprintf(`
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: e2e-labels}
spec:
  scopeToLabel: %s
  operator: {namespace: e2e-labels-operator, serviceAccounts: [operator]}
`, key))
	// The guard and the cluster-scoped entry are sent the operator's
	// requests once gatehouse lists its account in their condition.
	waitForHarnessedAccount(ctx, t, e, "system:serviceaccount:e2e-labels-operator:operator")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-labels-tenant", Name: "settings"}}
	eventually(t, "scope label on a namespaced create", func() error {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-labels-tenant", Name: "settings"}}
		return e.client.Create(ctx, cm, client.DryRunAll)
	}, func() bool { return cm.Labels[key] == "tenant-1" })

	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e-labels-tenant", Name: "elsewhere", Labels: map[string]string{key: "tenant-2"}}}
	err := e.client.Create(ctx, other, client.DryRunAll)
	if err == nil {
		t.Fatal("an object claiming another scope value was admitted")
	}
	webhook, causes := liveCauses(t, err)
	if got := webhook + " " + strings.Join(causes, " "); got != "harness-labels ScopeLabelMismatch@metadata.labels["+key+"]" {
		t.Errorf("denial: %s", got)
	}

	// The operator's service account may manage PriorityClasses and pods
	// with their status.
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-labels-priorityclasses"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"get", "create", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/status"}, Verbs: []string{"get", "update", "patch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-labels-priorityclasses"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "e2e-labels-operator", Name: "operator"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	}
	asOperator := rest.CopyConfig(e.config)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:e2e-labels-operator:operator"}
	operator, err := client.New(asOperator, client.Options{Scheme: e.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "e2e-labels-operator"}, Value: 1000}
	if err := operator.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), pc) })
	if pc.Labels[key] != "true" {
		t.Fatalf("PriorityClass created by the harnessed account has labels %v, want %s=true", pc.Labels, key)
	}

	stripped := pc.DeepCopy()
	delete(stripped.Labels, key)
	err = operator.Update(ctx, stripped)
	if err == nil {
		t.Fatal("the harnessed account removed its scope label")
	}
	webhook, causes = liveCauses(t, err)
	if got := webhook + " " + strings.Join(causes, " "); got != "harness-labels-guard ScopeLabelChanged@metadata.labels["+key+"]" {
		t.Errorf("denial: %s", got)
	}
	if err := e.client.Update(ctx, stripped); err != nil {
		t.Errorf("a cluster admin could not remove the label: %v", err)
	}

	// Through pods/status, which keeps label changes: a pod created in the
	// scoped namespace carries the label; the harnessed account can neither
	// remove it (UPDATE) nor change it (PATCH) there.
	pod := operatorPod("e2e-labels-tenant", "worker", "default")
	if err := e.client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), pod) })
	if pod.Labels[key] != "tenant-1" {
		t.Fatalf("pod created in the scoped namespace has labels %v", pod.Labels)
	}
	want := "harness-labels-guard ScopeLabelChanged@metadata.labels[" + key + "]"
	strippedPod := pod.DeepCopy()
	delete(strippedPod.Labels, key)
	if err := operator.Status().Update(ctx, strippedPod); err == nil {
		t.Error("the harnessed account removed the scope label through pods/status")
	} else if webhook, causes := liveCauses(t, err); webhook+" "+strings.Join(causes, " ") != want {
		t.Errorf("pods/status UPDATE denial: %s %v, want %s", webhook, causes, want)
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+key+`":"tenant-2"}}}`))
	if err := operator.Status().Patch(ctx, pod.DeepCopy(), patch); err == nil {
		t.Error("the harnessed account changed the scope label through pods/status")
	} else if webhook, causes := liveCauses(t, err); webhook+" "+strings.Join(causes, " ") != want {
		t.Errorf("pods/status PATCH denial: %s %v, want %s", webhook, causes, want)
	}
	stored := &corev1.Pod{}
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(pod), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Labels[key] != "tenant-1" {
		t.Fatalf("after the denied status writes the pod has labels %v", stored.Labels)
	}

	// Adding the label with a value the pod's namespace does not have (this
	// one has no scope label at all) is denied too.
	unscoped := operatorPod("e2e-labels-operator", "worker", "default")
	if err := e.client.Create(ctx, unscoped); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), unscoped) })
	added := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+key+`":"tenant-1"}}}`))
	if err := operator.Patch(ctx, unscoped.DeepCopy(), added); err == nil {
		t.Error("the harnessed account added a scope label with another namespace's value")
	} else if webhook, causes := liveCauses(t, err); webhook+" "+strings.Join(causes, " ") != "harness-labels-guard ScopeLabelAdded@metadata.labels["+key+"]" {
		t.Errorf("added label denial: %s %v", webhook, causes)
	}

	// A cluster admin is not restrained: the status subresource stores the
	// label's removal, which is why the guard must see it.
	if err := e.client.Status().Update(ctx, strippedPod); err != nil {
		t.Fatalf("a cluster admin could not remove the label through pods/status: %v", err)
	}
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(pod), stored); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored.Labels[key]; ok {
		t.Errorf("pods/status did not store the label's removal: %v", stored.Labels)
	}
}

// TestHarnessBindingsReviewed: on the real API server, with the roles it
// bootstraps, a harness binding cluster-admin cluster-wide is denied at the
// binding, as is one binding admin in its scoped namespaces (admin is
// aggregated; no aggregation controller runs here, so its stored rules are
// empty and the review reads what it aggregates); a binding to a role gatehouse has
// not seen yet is not found, and admitted once the role exists and is harmless.
func TestHarnessBindingsReviewed(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	manifest := func(name, binding string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: %[1]s}
spec:
  scopeToLabel: requires.e2e.gatehouse.dev/%[1]s
  operator: {namespace: %[1]s, serviceAccounts: [operator]}
%[2]s
`, name, binding)), &obj.Object); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	denial := func(obj *unstructured.Unstructured) string {
		err := e.client.Create(ctx, obj.DeepCopy(), client.DryRunAll)
		if err == nil {
			return "admitted"
		}
		webhook, causes := liveCauses(t, err)
		return webhook + " " + strings.Join(causes, " ")
	}
	crb := func(role string) string {
		return "  clusterRoleBindings: [{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: " + role + "}]"
	}
	for _, tc := range []struct{ name, binding, want string }{
		{"e2e-binds-cluster-admin", crb("cluster-admin"), "harness HarnessGrantDangerous@spec.clusterRoleBindings[0]"},
		{"e2e-binds-admin", "  roleBindings: {roleRefs: [{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}]}",
			"harness HarnessGrantDangerous@spec.roleBindings.roleRefs[0]"},
		{"e2e-binds-missing", crb("e2e-harness-reader"), "harness HarnessRoleNotFound@spec.clusterRoleBindings[0]"},
	} {
		if got := denial(manifest(tc.name, tc.binding)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-harness-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"k8s.mariadb.com"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if err := e.client.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), role) })
	harmless := manifest("e2e-binds-reader", crb(role.Name))
	eventually(t, "a binding to a harmless role admitted", func() error {
		return e.client.Create(ctx, harmless.DeepCopy(), client.DryRunAll)
	}, func() bool { return true })
}
