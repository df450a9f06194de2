package e2e

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// deleteConfiguration deletes gatehouse's validating or mutating webhook
// configuration (kind is ValidatingWebhookConfiguration or
// MutatingWebhookConfiguration), the break-glass path, and returns a function
// that registers it again, leaving caBundle for cainjector to fill.
func deleteConfiguration(t *testing.T, e *env, kind string) (restore func() error) {
	t.Helper()
	ctx := context.Background()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
	if err := e.client.Get(ctx, types.NamespacedName{Name: localcluster.WebhookConfigName}, live); err != nil {
		t.Fatal(err)
	}
	saved := live.DeepCopy()
	if err := e.client.Delete(ctx, live); err != nil {
		t.Fatalf("break glass: the %s could not be deleted: %v", kind, err)
	}
	return func() error {
		saved.SetResourceVersion("")
		saved.SetUID("")
		hooks, _, _ := unstructured.NestedSlice(saved.Object, "webhooks")
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				unstructured.RemoveNestedField(hook, "clientConfig", "caBundle")
			}
		}
		if err := unstructured.SetNestedSlice(saved.Object, hooks, "webhooks"); err != nil {
			return err
		}
		return e.client.Create(context.Background(), saved)
	}
}
