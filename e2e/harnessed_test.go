package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
)

// TestHarnessedNamespaceFailsClosedOnItsOwn: creating an OperatorHarness
// with injectProxyConfiguration: true is enough for its namespace to fail
// closed (docs/contracts.md §4): nobody labels the namespace, gatehouse's
// leader-elected controller does. The test measures the window from the
// harness's creation to the first pod create in that namespace that the
// API server refuses because harness-proxy's fail-closed entry (the rendered
// namespaceSelector, here on a copy whose endpoint is unreachable) now
// covers the namespace; then deletes the harness and sees the label given
// up again.
func TestHarnessedNamespaceFailsClosedOnItsOwn(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	label := serverOptions().HarnessedNamespaceLabel
	ns := testNamespace(t, e, t.Name(), nil, nil)

	// harness-proxy's fail-closed entry as rendered (separate layout), its
	// selection kept, calling an address where nothing listens, and seeing
	// only this test's pods.
	var selector any
	rendered, err := webhooks.WebhookConfigurations(webhooks.ManifestOptions{
		URL: "https://gatehouse.invalid", Layout: webhooks.LayoutSeparate, Options: serverOptions()})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localcluster.DecodeManifests(rendered)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			if hook := h.(map[string]any); obj.GetKind() == "MutatingWebhookConfiguration" && hook["name"] == "harness-proxy.gatehouse.dev" {
				selector = runtime.DeepCopyJSONValue(hook["namespaceSelector"])
			}
		}
	}
	if selector == nil {
		t.Fatal("the rendered configuration has no harness-proxy entry with a namespaceSelector")
	}
	const instance = "harnessed-window"
	copyName := "gatehouse-e2e-harnessed-window"
	guard := &unstructured.Unstructured{Object: map[string]any{"webhooks": []any{map[string]any{
		"name":                    "harnessed-window.gatehouse.dev",
		"clientConfig":            map[string]any{"url": "https://127.0.0.1:1/unreachable"},
		"rules":                   []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"}}},
		"namespaceSelector":       selector,
		"objectSelector":          map[string]any{"matchLabels": map[string]any{instanceLabel: instance}},
		"failurePolicy":           "Fail",
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"timeoutSeconds":          int64(1),
	}}}}
	guard.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"})
	guard.SetName(copyName)
	if err := e.client.Create(ctx, guard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), guard) })

	pod := plainPod(ns, "probe")
	pod.Labels = map[string]string{instanceLabel: instance}
	refused := func() bool {
		err := e.client.Create(ctx, pod.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "harnessed-window.gatehouse.dev")
	}
	// Before any harness: the namespace is not harnessed, the copy is not
	// called. (The API server may not have seen the copy yet either, which
	// gives the same answer; the poll below waits for it.)
	if refused() {
		t.Fatal("the namespace fails closed before any harness names it")
	}

	h := sampleObject(t, schema.GroupResource{Group: "vshn.net", Resource: "operatorharnesses"}, "", "e2e-harnessed-window")
	if err := unstructured.SetNestedField(h.Object, ns, "spec", "operator", "namespace"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(h.Object, true, "spec", "operator", "injectProxyConfiguration"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), h) })

	var labelled time.Duration
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if labelled == 0 {
			got := &corev1.Namespace{}
			if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
				return false, err
			}
			if _, ok := got.Labels[label]; ok {
				labelled = time.Since(start)
			}
		}
		return labelled > 0 && refused(), nil
	})
	if err != nil {
		t.Fatalf("the namespace named by an injecting harness never failed closed (labelled after %v): %v", labelled, err)
	}
	t.Logf("window from harness created to namespace failing closed: labelled after %v, refused after %v", labelled, time.Since(start))

	got := &corev1.Namespace{}
	if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
		t.Fatal(err)
	}
	owned := false
	for _, f := range got.ManagedFields {
		owned = owned || (f.Manager == controllers.NamespaceLabelsFieldManager && strings.Contains(string(f.FieldsV1.Raw), label))
	}
	if !owned {
		t.Errorf("the label is not owned by field manager %s: %+v", controllers.NamespaceLabelsFieldManager, got.ManagedFields)
	}

	// The harness goes: the controller gives the label up.
	if err := e.client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &corev1.Namespace{}
		if err := e.client.Get(ctx, client.ObjectKey{Name: ns}, got); err != nil {
			return false, err
		}
		_, ok := got.Labels[label]
		return !ok, nil
	})
	if err != nil {
		t.Errorf("the label stayed after the harness was deleted: %v", err)
	}
}
