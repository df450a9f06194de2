package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// readObject reads one YAML object.
func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// deniedEventually retries a dry-run create until it is denied (the objects
// it clashes with reach gatehouse's caches through a watch) and returns the
// denial as "<webhook> <code>@<field> ...".
func deniedEventually(t *testing.T, e *env, obj *unstructured.Unstructured) string {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lastErr = e.client.Create(ctx, obj.DeepCopy(), client.DryRunAll)
		return lastErr != nil, nil
	})
	if err != nil {
		t.Fatalf("%s/%s was admitted", obj.GetNamespace(), obj.GetName())
	}
	webhook, causes := liveCauses(t, lastErr)
	return webhook + " " + strings.Join(causes, " ")
}

// TestHelmeticaSamples applies helmetica's own samples on helmetica's CRDs
// (deploy/helmetica-crds): the mariadb DependencyGroup and chrysopoeia's four
// sample sources are admitted without a warning, also when applied again
// unchanged (an UPDATE reviewed against a view holding the source itself);
// a second provider of mariadb in another namespace is denied; and a
// source being deleted (held by a finalizer) claims nothing, so its
// successor is admitted.
func TestHelmeticaSamples(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	c, warnings := clientWithWarnings(t, e)
	namespaceWith(t, e, "e2e-helmetica-a", nil)
	namespaceWith(t, e, "e2e-helmetica-b", nil)

	group := readObject(t, filepath.Join(repo, "e2e", "testdata", "helmetica", "dependencygroup-mariadb.yaml"))
	if err := c.Create(ctx, group); err != nil {
		t.Fatalf("helmetica's DependencyGroup sample: %v", err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), group) })

	files, err := filepath.Glob(filepath.Join(repo, "policies", "dependencygroup", "testdata", "pass", "source-chrysopoeia-*.yaml"))
	if err != nil || len(files) != 4 {
		t.Fatalf("want chrysopoeia's four sample sources, found %d (%v)", len(files), err)
	}
	for _, f := range files {
		src := readObject(t, f)
		src.SetNamespace("e2e-helmetica-a")
		if err := c.Create(ctx, src); err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), src) })
	}
	if w := warnings.all(); len(w) > 0 {
		t.Errorf("warnings on creating the samples: %q", w)
	}

	// The provider reaches gatehouse's cache through a watch: a second
	// provider of mariadb, elsewhere, is denied once it has.
	clash := readObject(t, filepath.Join(repo, "policies", "dependencygroup", "testdata", "pass", "source-chrysopoeia-mariadb-crds.yaml"))
	clash.SetNamespace("e2e-helmetica-b")
	if got, want := deniedEventually(t, e, clash), "crd-source CRDSourceProvidesClaimed@spec.provides[0].dependencyGroup.name"; got != want {
		t.Errorf("second provider: %s, want %s", got, want)
	}

	// Re-applying every sample unchanged (the cache now holds each):
	// admitted, no warning.
	for _, f := range files {
		src := readObject(t, f)
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(src.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKey{Namespace: "e2e-helmetica-a", Name: src.GetName()}, stored); err != nil {
			t.Fatal(err)
		}
		stored.SetLabels(map[string]string{"e2e.gatehouse.dev/touched": "true"})
		if err := c.Update(ctx, stored); err != nil {
			t.Errorf("updating %s: %v", src.GetName(), err)
		}
	}
	if w := warnings.all(); len(w) > 0 {
		t.Errorf("warnings on updating the unchanged samples: %q", w)
	}

	// A provider being deleted claims nothing.
	held := readObject(t, filepath.Join(repo, "policies", "dependencygroup", "testdata", "pass", "source-chrysopoeia-mariadb-crds.yaml"))
	held.SetNamespace("e2e-helmetica-a")
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(held.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), stored); err != nil {
		t.Fatal(err)
	}
	stored.SetFinalizers([]string{"e2e.gatehouse.dev/hold"})
	if err := c.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.Patch(context.Background(), stored, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
	if err := c.Delete(ctx, stored); err != nil {
		t.Fatal(err)
	}
	successor := clash.DeepCopy()
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.client.Create(ctx, successor.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	})
	if err != nil {
		t.Fatal("the successor of a provider being deleted was not admitted within 30 s")
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), successor) })
}

// TestHelmeticaHarnessProxyInjection: a helmetica.io/v1 OperatorHarness
// harnesses its operator's pods exactly as a vshn.net/v1 one does, and a
// helmetica harness reusing a vshn.net harness's scope label is denied.
func TestHelmeticaHarnessProxyInjection(t *testing.T) {
	e := requireCluster(t)
	cfg := configv1alpha1.Default()
	failClosed := map[string]string{cfg.Harness.FailClosedNamespaceLabel: "true"}
	namespaceWith(t, e, "e2e-helmetica-operator", failClosed, "operator-mariadb-operator")
	createHarness(t, e, `
apiVersion: helmetica.io/v1
kind: OperatorHarness
metadata: {name: e2e-helmetica-mariadb}
spec:
  scopeToLabel: requires.helmetica.io/e2e-operator-mariadb
  operator:
    namespace: e2e-helmetica-operator
    serviceAccounts: [operator-mariadb-operator]
    injectProxyConfiguration: true
`)
	stored := createInjected(t, e, operatorPod("e2e-helmetica-operator", "operator", "operator-mariadb-operator"), "proxy injection by a helmetica harness")
	checkInjected(t, stored, route.OptionsFromConfig(cfg).Proxy)

	createHarness(t, e, `
apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: e2e-helmetica-vshn}
spec:
  scopeToLabel: requires.helmetica.io/e2e-shared
  operator: {namespace: e2e-helmetica-vshn, serviceAccounts: [operator]}
`)
	twin := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: helmetica.io/v1
kind: OperatorHarness
metadata: {name: e2e-helmetica-vshn}
spec:
  scopeToLabel: requires.helmetica.io/e2e-shared
  operator: {namespace: e2e-helmetica-other, serviceAccounts: [operator]}
`), &twin.Object); err != nil {
		t.Fatal(err)
	}
	if got, want := deniedEventually(t, e, twin), "harness HarnessScopeLabelClaimed@spec.scopeToLabel"; got != want {
		t.Errorf("helmetica harness of the same name reusing the vshn.net harness's label: %s, want %s", got, want)
	}
}

// TestGatehouseWithoutHelmeticaCRDs: deploy/default installs none of
// helmetica's CRDs. Restarted on a cluster without them (as a new process,
// with the DependencyGroup reconciler on), gatehouse becomes ready and
// admits pods; once the CRDs are installed, a helmetica OperatorHarness
// created afterwards is seen and its operator's pods get the proxy.
func TestGatehouseWithoutHelmeticaCRDs(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it restarts gatehouse")
	}
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(repo, "deploy", "helmetica-crds", "helmetica.io_*.yaml"))
	if err != nil || len(files) != 3 {
		t.Fatalf("helmetica's CRDs: %v %v", files, err)
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		crds = append(crds, readObject(t, f))
	}
	install := func() {
		for _, crd := range crds {
			if err := e.client.Create(ctx, crd.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("CRD %s: %v", crd.GetName(), err)
			}
		}
		for _, crd := range crds {
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(crd.GroupVersionKind())
				if err := e.client.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
					return false, nil
				}
				conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
				for _, c := range conds {
					m, _ := c.(map[string]any)
					if m["type"] == "Established" && m["status"] == "True" {
						return true, nil
					}
				}
				return false, nil
			})
			if err != nil {
				t.Errorf("CRD %s not established", crd.GetName())
			}
		}
	}
	binary, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.local.StopGatehouse(); err != nil {
		t.Fatal(err)
	}
	// Later tests need helmetica's CRDs and gatehouse back whatever fails.
	t.Cleanup(func() {
		install()
		if !e.local.Gatehouse.Ready() {
			if err := e.local.RestartGatehouse(binary); err != nil {
				t.Errorf("restarting gatehouse: %v", err)
			}
		}
		if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Error(err)
		}
	})
	for _, crd := range crds {
		if err := e.client.Delete(ctx, crd.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(crd.GroupVersionKind())
			return apierrors.IsNotFound(e.client.Get(ctx, client.ObjectKeyFromObject(crd), got)), nil
		})
		if err != nil {
			t.Fatalf("CRD %s not deleted", crd.GetName())
		}
	}
	if err := e.local.RestartGatehouse(binary); err != nil {
		t.Fatal(err)
	}
	if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
		t.Fatalf("gatehouse is not ready on a cluster without helmetica's CRDs: %v", err)
	}

	cfg := configv1alpha1.Default()
	namespaceWith(t, e, "e2e-helmetica-later", map[string]string{cfg.Harness.FailClosedNamespaceLabel: "true"}, "operator")
	plain := operatorPod("e2e-helmetica-later", "before", "operator")
	if err := e.client.Create(ctx, plain); err != nil {
		t.Fatalf("a pod was refused without helmetica's CRDs: %v", err)
	}
	for _, v := range plain.Spec.Volumes {
		if v.Name == "proxy-api-access" {
			t.Error("a pod got the proxy with no harness")
		}
	}

	install()
	harness := `
apiVersion: helmetica.io/v1
kind: OperatorHarness
metadata: {name: e2e-helmetica-later}
spec:
  scopeToLabel: requires.helmetica.io/e2e-later
  operator: {namespace: e2e-helmetica-later, serviceAccounts: [operator], injectProxyConfiguration: true}
`
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(harness), &obj.Object); err != nil {
		t.Fatal(err)
	}
	// The harness webhook denies (StateUnavailable) until gatehouse has
	// started the new kind's informer: retry.
	eventually(t, "a helmetica harness after its CRD appeared", func() error {
		err := e.client.Create(ctx, obj.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}, func() bool { return true })
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj) })
	stored := createInjected(t, e, operatorPod("e2e-helmetica-later", "after", "operator"), "proxy injection by a harness whose CRD appeared late")
	checkInjected(t, stored, route.OptionsFromConfig(cfg).Proxy)
}
