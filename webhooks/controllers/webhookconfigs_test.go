package controllers

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// TestWrittenEntriesCarryTheCA: every entry of both configurations the
// leader writes carries the CA given, and no cainjector annotation; a
// Certificate (cainjector's) or the in-process layout is refused.
func TestWrittenEntriesCarryTheCA(t *testing.T) {
	cfg := configv1alpha1.Default()
	cfg.Harness.ManageSelections = true
	w := &WebhookConfigurations{Manifests: webhooks.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: webhooks.OptionsFromConfig(cfg)}}
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	objs, err := w.Objects(ca)
	if err != nil {
		t.Fatal(err)
	}
	kinds, entries := map[string]bool{}, 0
	for _, obj := range objs {
		kinds[obj.GetKind()] = true
		if len(obj.GetAnnotations()) != 0 {
			t.Errorf("%s carries annotations %v", obj.GetKind(), obj.GetAnnotations())
		}
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, h := range hooks {
			entries++
			got, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
			if got != base64.StdEncoding.EncodeToString(ca) {
				t.Errorf("%s %v: caBundle %q", obj.GetKind(), h.(map[string]any)["name"], got)
			}
		}
	}
	for _, k := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if !kinds[k] {
			t.Errorf("no %s rendered", k)
		}
	}
	if entries < 5 {
		t.Errorf("only %d entries", entries)
	}
	for name, tc := range map[string]struct {
		o    webhooks.ManifestOptions
		says string
	}{
		"a Certificate":     {webhooks.ManifestOptions{Certificate: "gatehouse-system/gatehouse-serving", Options: w.Manifests.Options}, "caBundle"},
		"in-process layout": {webhooks.ManifestOptions{Layout: webhooks.LayoutInProcess, Options: w.Manifests.Options}, "layout in-process"},
	} {
		if _, err := (&WebhookConfigurations{Manifests: tc.o}).Objects(ca); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want a refusal naming %s", name, err, tc.says)
		}
	}
}
