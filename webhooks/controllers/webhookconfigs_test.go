package controllers

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestWrittenEntriesCarryTheCA: every entry of both configurations the
// leader writes carries the CA given, and no cainjector annotation; a
// Certificate (cainjector's) or the in-process layout is refused.
func TestWrittenEntriesCarryTheCA(t *testing.T) {
	cfg := configv1alpha1.Default()
	cfg.Harness.ManageSelections = true
	w := &WebhookConfigurations{Manifests: route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: route.OptionsFromConfig(cfg)}}
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
		o    route.ManifestOptions
		says string
	}{
		"a Certificate":     {route.ManifestOptions{Certificate: "gatehouse-system/gatehouse-serving", Options: w.Manifests.Options}, "caBundle"},
		"in-process layout": {route.ManifestOptions{Layout: route.LayoutInProcess, Options: w.Manifests.Options}, "layout in-process"},
	} {
		if _, err := (&WebhookConfigurations{Manifests: tc.o}).Objects(ca); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want a refusal naming %s", name, err, tc.says)
		}
	}
}

// TestSyncWritesTheEntriesFirst (a fake client: what it proves is the
// order and idempotence, the API server's own behaviour is the e2e's): the
// two configurations are filled and a second Sync writes nothing; with the
// managed-labels policy rendered but its owner ClusterRole missing, Sync
// fails naming the ClusterRole, after the entries are written.
func TestSyncWritesTheEntriesFirst(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := rbacv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, manage := range []bool{false, true} {
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: render.ConfigurationName}},
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: render.ConfigurationName}},
		).Build()
		cfg := configv1alpha1.Default()
		cfg.Harness.ManageSelections = manage
		w := &WebhookConfigurations{Client: c, Reader: c, CAFile: ca, PolicyOwner: "gatehouse",
			Manifests: route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: route.OptionsFromConfig(cfg)}}
		written, err := w.Sync(context.Background())
		if manage {
			if err == nil || !strings.Contains(err.Error(), "ClusterRole gatehouse") {
				t.Errorf("manageSelections without the owner ClusterRole: %v, want an error naming it", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if len(written) != 2 {
			t.Errorf("manageSelections=%v: wrote %v, want both configurations", manage, written)
		}
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := c.Get(context.Background(), client.ObjectKey{Name: render.ConfigurationName}, &vwc); err != nil {
			t.Fatal(err)
		}
		if len(vwc.Webhooks) < 3 || len(vwc.Webhooks[0].ClientConfig.CABundle) == 0 {
			t.Errorf("manageSelections=%v: %d entries written, caBundle %q", manage, len(vwc.Webhooks), vwc.Webhooks[0].ClientConfig.CABundle)
		}
		if manage {
			continue
		}
		if again, err := w.Sync(context.Background()); err != nil || len(again) != 0 {
			t.Errorf("a second Sync wrote %v (%v), want nothing", again, err)
		}
	}
}
