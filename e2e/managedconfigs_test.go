package e2e

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestServerWritesItsWebhookConfigurations is the chart's install path on
// the local control plane, as a user granted only what deploy/default with
// deploy/managed-webhooks grants gatehouse: `serve --manage-webhook-configurations` (what the
// chart runs) fills the webhook configurations with what `gatehouse
// manifests` renders for its own configuration, so one value changes the
// entries:
//   - in Audit, every entry fails open, and a violating pod is admitted;
//   - restarted in Enforce with a namespace exempt and the selections
//     managed, the entries fail closed, the pod is denied with its code and
//     the same pod in the exempt namespace is admitted, and the
//     managed-labels policy is created, owned by gatehouse's ClusterRole;
//   - an entry edited by hand is written back;
//   - deleted (break glass), the configurations stay deleted and the
//     policy stays.
//
// Each state is compared, after the API server's own defaulting (a dry
// run), with the rendering of `gatehouse manifests` for the same flags.
func TestServerWritesItsWebhookConfigurations(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("starts its own gatehouse that rewrites the webhook configurations: local control plane only")
	}
	ctx := context.Background()
	_, restore := saveWebhooks(t, e)
	restorePolicy := savePolicy(t, e)
	ensureNamespace(t, e, rolloutNamespace, nil)
	const exempt, leases = "e2e-managed-exempt", "e2e-managed-leases"
	ensureNamespace(t, e, exempt, nil)
	ensureNamespace(t, e, leases, nil)

	// As deploy/default with deploy/managed-webhooks (the chart's RBAC)
	// grants: the least privilege must be enough to write.
	const user = "gatehouse-e2e-managed"
	kubeconfig, err := e.local.UserKubeconfig(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	grantRBACOf(t, e, user, leases, "managed-webhooks")

	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	url := "https://127.0.0.1:" + portText
	var current *localcluster.Gatehouse
	t.Cleanup(func() { // registered last, so it runs before the restores
		if current != nil {
			current.Stop(30 * time.Second)
		}
		restore()
		restorePolicy()
	})
	launch := func(flags ...string) {
		t.Helper()
		if current != nil {
			current.Stop(30 * time.Second) // releases the Lease
		}
		metrics, err := localcluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--manage-webhook-configurations", "--webhook-url", url, "--leader-election-namespace", leases,
			"--webhook-configurations-interval", "1s", "--policy-owner", user}, flags...)
		if current, err = localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
			CertDir: e.local.CertDir, WorkDir: e.local.WorkDir(), Kubeconfig: kubeconfig, Binary: bin, Port: port,
			MetricsAddr: metrics, LogName: "gatehouse-managed.log", Args: args,
		}); err != nil {
			t.Fatal(err)
		}
		if err := current.WaitReady(time.Minute); err != nil {
			t.Fatalf("gatehouse %v: %v (log %s)", flags, err, current.Log)
		}
	}
	ca, err := os.ReadFile(filepath.Join(e.local.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}

	// Audit: every entry fails open; a violation is admitted.
	launch("--default-mode", "Audit")
	cfg := configv1alpha1.Default()
	applyModeFlags(t, &cfg, []string{"--default-mode", "Audit"})
	waitForWritten(t, e, route.ManifestOptions{URL: url, Namespace: route.DefaultNamespace, Options: route.OptionsFromConfig(cfg)}, ca)
	for _, kind := range configurationKinds {
		hooks, _, _ := unstructured.NestedSlice(getConfiguration(t, e, kind).Object, "webhooks")
		for _, h := range hooks {
			if p := h.(map[string]any)["failurePolicy"]; p != "Ignore" {
				t.Errorf("Audit: %s %v has failurePolicy %v", kind, h.(map[string]any)["name"], p)
			}
		}
	}
	if err := e.client.Create(ctx, scopePod("managed-audit"), client.DryRunAll); err != nil {
		t.Errorf("Audit: a scope violation is refused: %v", err)
	}

	// Enforce, a namespace exempt, the selections managed.
	file := filepath.Join(t.TempDir(), "config.yaml")
	text := "apiVersion: " + configv1alpha1.APIVersion + "\nkind: " + configv1alpha1.Kind +
		"\nharness:\n  manageSelections: true\nexemptions:\n  namespaces: [kube-system, kube-node-lease, " + exempt + "]\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	launch("--config", file)
	cfg = configv1alpha1.Default()
	applyModeFlags(t, &cfg, []string{"--config", file})
	enforce := route.ManifestOptions{URL: url, Namespace: route.DefaultNamespace, Options: route.OptionsFromConfig(cfg)}
	waitForWritten(t, e, enforce, ca)
	// Written once, then left alone: three more intervals write nothing.
	writes := func() float64 {
		raw, err := current.Metrics()
		if err != nil {
			t.Fatal(err)
		}
		families := parseMetrics(t, raw)
		return sampleValue(families, "gatehouse_webhook_configuration_writes_total", map[string]string{"kind": "ValidatingWebhookConfiguration", "result": "updated"}) +
			sampleValue(families, "gatehouse_webhook_configuration_writes_total", map[string]string{"kind": "MutatingWebhookConfiguration", "result": "updated"})
	}
	before := writes()
	time.Sleep(3 * time.Second)
	if after := writes(); after != before || before == 0 {
		t.Errorf("the leader wrote the configurations %v times, then %v: want at least one write, then none while nothing changes", before, after)
	}
	err = e.client.Create(ctx, scopePod("managed-enforce"), client.DryRunAll)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ScopeEntryEmpty") {
		t.Errorf("Enforce: a scope violation: %v, want ScopeEntryEmpty", err)
	}
	elsewhere := scopePod("managed-exempt")
	elsewhere.Namespace = exempt
	if err := e.client.Create(ctx, elsewhere, client.DryRunAll); err != nil {
		t.Errorf("Enforce: the violation in exempt namespace %s is refused: %v", exempt, err)
	}
	policy := &unstructured.Unstructured{}
	policy.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"})
	if err := e.client.Get(ctx, types.NamespacedName{Name: render.ManagedLabelsPolicyName}, policy); err != nil {
		t.Fatalf("the managed-labels policy: %v", err)
	}
	role := &rbacv1.ClusterRole{}
	if err := e.client.Get(ctx, types.NamespacedName{Name: user}, role); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(policy.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == role.UID && r.Kind == "ClusterRole" }) {
		t.Errorf("the managed-labels policy is owned by %v, not gatehouse's ClusterRole", policy.GetOwnerReferences())
	}
	validating := getConfiguration(t, e, "ValidatingWebhookConfiguration")

	// A hand edit is written back.
	hooks, _, _ := unstructured.NestedSlice(validating.Object, "webhooks")
	for _, h := range hooks {
		h.(map[string]any)["failurePolicy"] = "Ignore"
	}
	setWebhooks(t, e, "ValidatingWebhookConfiguration", hooks)
	waitForWritten(t, e, enforce, ca)

	// Break glass: the configurations deleted while gatehouse runs stay
	// deleted (the leader fills them, it never creates them), and the
	// managed-labels policy stays in force.
	var deleted []*unstructured.Unstructured
	for _, kind := range configurationKinds {
		live := getConfiguration(t, e, kind)
		if err := e.client.Delete(ctx, live); err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, live)
	}
	t.Cleanup(func() { // before restore, which updates them
		for _, old := range deleted {
			if err := e.client.Create(context.Background(), recreation(old)); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("recreating %s: %v", old.GetKind(), err)
			}
		}
	})
	time.Sleep(5 * time.Second) // five of the leader's intervals
	for _, old := range deleted {
		again := &unstructured.Unstructured{}
		again.SetGroupVersionKind(old.GroupVersionKind())
		if err := e.client.Get(ctx, types.NamespacedName{Name: old.GetName()}, again); !apierrors.IsNotFound(err) {
			t.Errorf("%s deleted while gatehouse runs: %v, want it to stay deleted", old.GetKind(), err)
		}
	}
	if err := e.client.Get(ctx, types.NamespacedName{Name: render.ManagedLabelsPolicyName}, policy); err != nil {
		t.Errorf("the managed-labels policy after break glass: %v, want it in force", err)
	}
}

// waitForWritten waits until both stored configurations hold what o renders
// (with caBundle ca), compared after the API server's defaulting: a dry-run
// update of the stored object with the rendered entries. The
// harnessed-accounts condition, which the selections controller adds, is
// left out of both sides.
func waitForWritten(t *testing.T, e *env, o route.ManifestOptions, ca []byte) {
	t.Helper()
	want := renderedWebhooksFor(t, o, base64.StdEncoding.EncodeToString(ca))
	deadline := time.Now().Add(90 * time.Second)
	var diff string
	for time.Now().Before(deadline) {
		diff = ""
		for _, kind := range configurationKinds {
			live := getConfiguration(t, e, kind)
			dry := live.DeepCopy()
			if hooks := want[kind]; len(hooks) == 0 {
				unstructured.RemoveNestedField(dry.Object, "webhooks")
			} else if err := unstructured.SetNestedSlice(dry.Object, hooks, "webhooks"); err != nil {
				t.Fatal(err)
			}
			if err := e.client.Update(context.Background(), dry, client.DryRunAll); apierrors.IsConflict(err) {
				diff += kind + " changed while it was compared\n" // the leader (or cainjector) wrote it: look again
				continue
			} else if err != nil {
				t.Fatalf("dry run of the rendered %s: %v", kind, err)
			}
			got, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
			rendered, _, _ := unstructured.NestedSlice(dry.Object, "webhooks")
			diff += cmp.Diff(withoutAccountsCondition(rendered), withoutAccountsCondition(got))
		}
		if diff == "" {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("the stored webhook configurations are not what gatehouse manifests renders (-rendered +stored):\n%s", diff)
}

func withoutAccountsCondition(hooks []any) []any {
	out := make([]any, 0, len(hooks))
	for _, h := range hooks {
		hook := (&unstructured.Unstructured{Object: h.(map[string]any)}).DeepCopy().Object
		conditions, _ := hook["matchConditions"].([]any)
		hook["matchConditions"] = slices.DeleteFunc(slices.Clone(conditions), func(c any) bool {
			return c.(map[string]any)["name"] == route.HarnessedAccountsCondition
		})
		out = append(out, hook)
	}
	return out
}

// savePolicy saves the managed-labels policy and binding, and returns a
// function that puts their specs back, or deletes them when there were none.
func savePolicy(t *testing.T, e *env) func() {
	t.Helper()
	ctx := context.Background()
	var saved []*unstructured.Unstructured
	var absent []schema.GroupVersionKind
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		gvk := schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		switch err := e.client.Get(ctx, types.NamespacedName{Name: render.ManagedLabelsPolicyName}, obj); {
		case apierrors.IsNotFound(err):
			absent = append(absent, gvk)
		case err != nil:
			t.Fatal(err)
		default:
			saved = append(saved, obj)
		}
	}
	return func() {
		for _, gvk := range absent {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(gvk)
			obj.SetName(render.ManagedLabelsPolicyName)
			if err := e.client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s: %v", gvk.Kind, err)
			}
		}
		for _, old := range saved {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(old.GroupVersionKind())
			switch err := e.client.Get(ctx, types.NamespacedName{Name: old.GetName()}, live); {
			case apierrors.IsNotFound(err): // collected with the validating configuration it was given to
				if err := e.client.Create(ctx, recreation(old)); err != nil {
					t.Errorf("restoring %s: %v", old.GetKind(), err)
				}
				continue
			case err != nil:
				t.Errorf("restoring %s: %v", old.GetKind(), err)
				continue
			}
			live.Object["spec"] = old.Object["spec"]
			live.SetOwnerReferences(old.GetOwnerReferences())
			if err := e.client.Update(ctx, live); err != nil {
				t.Errorf("restoring %s: %v", old.GetKind(), err)
			}
		}
	}
}

// recreation is old as it can be created again: its kind, name, labels,
// annotations and spec (a webhook configuration's entries are left out,
// for saveWebhooks' restore to put back).
func recreation(old *unstructured.Unstructured) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(old.GetAPIVersion())
	obj.SetKind(old.GetKind())
	obj.SetName(old.GetName())
	obj.SetLabels(old.GetLabels())
	obj.SetAnnotations(old.GetAnnotations())
	if spec, ok := old.Object["spec"]; ok {
		obj.Object["spec"] = spec
	}
	return obj
}

// grantRBACOf grants user what deploy/default with the named components
// grants gatehouse's ServiceAccount: its ClusterRole, copied under the
// user's name, and its leader-election Role in leases.
func grantRBACOf(t *testing.T, e *env, user, leases string, components ...string) {
	t.Helper()
	ctx := context.Background()
	objs := renderDefaultWith(t, components...)
	rules := func(kind, name string) []rbacv1.PolicyRule {
		var role rbacv1.ClusterRole // a Role's rules decode the same
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(findObject(t, objs, kind, name).Object, &role); err != nil {
			t.Fatal(err)
		}
		return role.Rules
	}
	cluster, leader := rules("ClusterRole", "gatehouse"), rules("Role", "gatehouse-leader-election")
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	for _, obj := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: cluster},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: leases}, Rules: leader},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: leases}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user}},
	} {
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	}
}
