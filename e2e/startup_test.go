package e2e

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// stateWebhooks are the webhooks that judge against other objects read from
// informer caches, with the resource of an object that makes each look.
var stateWebhooks = map[string]schema.GroupResource{
	"dependency-group": {Group: "helmetica.io", Resource: "dependencygroups"},
	"crd-source":       {Group: "helmetica.io", Resource: "customresourcedefinitionsources"},
	"harness":          {Group: "vshn.net", Resource: "operatorharnesses"},
}

// instanceLabel routes objects to the second gatehouse of the startup test.
const instanceLabel = "e2e.gatehouse.dev/instance"

// TestStateWebhooksRefuseUntilTheirCachesSync starts a second gatehouse as a
// user RBAC grants nothing, so its informer caches cannot sync, and sends it
// labelled objects through the API server with a copy of the validating
// configuration in each layout: it serves TLS, but /readyz fails on
// cluster-state and every review that needs state is denied with
// StateUnavailable, while a review that needs none is answered by the
// webhook's own entry. Binding deploy/default's ClusterRole to the
// user lets the caches sync; /readyz then passes and the same reviews are
// judged with the state in view.
func TestStateWebhooksRefuseUntilTheirCachesSync(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it starts a second gatehouse")
	}
	ctx := context.Background()
	for name := range stateWebhooks {
		if _, ok := route.Lookup(name); !ok {
			t.Fatalf("%s is not in the registry", name)
		}
	}
	const user = "gatehouse-e2e-unsynced"
	kubeconfig, err := e.local.UserKubeconfig(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
		CertDir: e.local.CertDir, WorkDir: e.local.WorkDir(), Kubeconfig: kubeconfig, LogName: "gatehouse-unsynced.log",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := g.Stop(30 * time.Second); err != nil {
			t.Error(err)
		}
	})
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return g.Check("certificate") == 200 && g.Check("webhook-server") == 200, nil
	})
	if err != nil {
		t.Fatalf("the second gatehouse never loaded its certificate and started serving; see %s", g.Log)
	}
	if g.Check("cluster-state") == 200 || g.Ready() {
		t.Fatal("ready although its user may not list the state it reads")
	}
	ns := testNamespace(t, e, t.Name(), nil, nil)
	scope, _ := route.Lookup("secret-scope")
	plain := actedOn(t, scope, sampleObject(t, schema.GroupResource{Resource: "persistentvolumeclaims"}, ns, "no-state-needed"))
	plain.SetLabels(map[string]string{instanceLabel: "unsynced"})
	stateful := map[string]*unstructured.Unstructured{}
	for name, gr := range stateWebhooks {
		objNS := ns
		if clusterScoped[gr] {
			objNS = ""
		}
		obj := sampleObject(t, gr, objNS, "e2e-unsynced-"+name)
		obj.SetLabels(map[string]string{instanceLabel: "unsynced"})
		stateful[name] = obj
	}

	// Both layouts: one entry per webhook, and the combined groups.
	for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined} {
		hooks := renderedWebhooks(t, e, layout)["ValidatingWebhookConfiguration"]
		remove := registerCopy(t, e, "gatehouse-e2e-unsynced-"+layout, g.URL, hooks, map[string]string{instanceLabel: "unsynced"})
		for name, obj := range stateful {
			// The API server learns of the new configuration through an
			// informer: poll until the second gatehouse answers.
			var lastErr error
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				lastErr = e.client.Create(ctx, obj.DeepCopy(), client.DryRunAll)
				return lastErr != nil, nil
			})
			if err != nil {
				t.Fatalf("%s layout: %s admitted by a gatehouse whose caches have not synced", layout, obj.GetKind())
			}
			webhook, causes := liveCauses(t, lastErr)
			if webhook != name || !strings.Contains(strings.Join(causes, " "), "StateUnavailable@") {
				t.Errorf("%s layout: %s denied by %s with %v, want %s with StateUnavailable", layout, obj.GetKind(), webhook, causes, name)
			}
		}
		// The combined entry also needs the namespace cache to place its
		// members, so there only the separate layout answers this one.
		if layout == route.LayoutSeparate {
			if err := e.client.Create(ctx, plain.DeepCopy(), client.DryRunAll); err != nil {
				t.Errorf("a review that needs no state was refused by the unsynced gatehouse: %v", err)
			}
			remove()
		}
	}

	grantDeployRBAC(t, e, user)
	if err := g.WaitReady(time.Minute); err != nil {
		t.Fatalf("with deploy/default's RBAC the caches should sync: %v", err)
	}
	for _, obj := range append(slices.Collect(maps.Values(stateful)), plain) {
		err := e.client.Create(ctx, obj.DeepCopy(), client.DryRunAll)
		if err == nil {
			continue
		}
		if webhook, causes := liveCauses(t, err); strings.Contains(strings.Join(causes, " "), "StateUnavailable@") {
			t.Errorf("%s: still StateUnavailable from %s after readiness: %v", obj.GetKind(), webhook, causes)
		}
	}
}

// registerCopy registers hooks (rendered to call the suite's gatehouse) as
// a validating configuration named name that calls base instead and sees
// only objects with the labels; it returns a function that removes it.
func registerCopy(t *testing.T, e *env, name, base string, hooks []any, labels map[string]string) (remove func()) {
	t.Helper()
	oldBase := e.local.Gatehouse.URL
	var out []any
	for _, h := range hooks {
		hook := runtime.DeepCopyJSONValue(h).(map[string]any)
		url, _, _ := unstructured.NestedString(hook, "clientConfig", "url")
		if !strings.HasPrefix(url, oldBase) {
			t.Fatalf("webhook %v calls %q, not gatehouse at %s", hook["name"], url, oldBase)
		}
		if err := unstructured.SetNestedField(hook, base+strings.TrimPrefix(url, oldBase), "clientConfig", "url"); err != nil {
			t.Fatal(err)
		}
		selector := map[string]any{}
		for k, v := range labels {
			selector[k] = v
		}
		hook["objectSelector"] = map[string]any{"matchLabels": selector}
		out = append(out, hook)
	}
	wc := &unstructured.Unstructured{Object: map[string]any{"webhooks": out}}
	wc.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"})
	wc.SetName(name)
	if err := e.client.Create(context.Background(), wc); err != nil {
		t.Fatal(err)
	}
	remove = func() { _ = e.client.Delete(context.Background(), wc) }
	t.Cleanup(remove)
	return remove
}

// grantDeployRBAC binds the ClusterRole of deploy/default to user, as the
// ClusterRoleBinding there binds it to gatehouse's ServiceAccount.
func grantDeployRBAC(t *testing.T, e *env, user string) {
	t.Helper()
	ctx := context.Background()
	objs, err := localcluster.Render(filepath.Join(repo, "deploy", "default"))
	if err != nil {
		t.Fatal(err)
	}
	var role *unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "ClusterRole" && obj.GetName() == "gatehouse" {
			role = obj
		}
	}
	if role == nil {
		t.Fatal("deploy/default has no ClusterRole gatehouse")
	}
	if err := e.client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gatehouse"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := e.client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), binding) })
}
