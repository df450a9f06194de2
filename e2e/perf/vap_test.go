package perf

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// vapDenies are the failing golden fixtures of SCOPE and SA whose finding CEL
// can express: the ValidatingAdmissionPolicies must deny each of them.
var vapDenies = []string{
	"policies/scope/testdata/fail/deployment-template.yaml",
	"policies/scope/testdata/fail/pod-class-missing.yaml",
	"policies/scope/testdata/fail/pod-scope-empty-entry.yaml",
	"policies/scope/testdata/fail/pod-scope-node-with-value.yaml",
	"policies/scope/testdata/fail/pod-scope-service-bare.yaml",
	"policies/scope/testdata/fail/pod-scope-trailing-comma.yaml",
	"policies/scope/testdata/fail/pod-scope-value-has-delimiter.yaml",
	"policies/scope/testdata/fail/statefulset-volumeclaimtemplate.yaml",
	"policies/serviceaccount/testdata/fail/hdfscluster-generatename-podoverrides.yaml",
	"policies/serviceaccount/testdata/fail/hdfscluster-role-podoverrides-serviceaccountname.yaml",
	"policies/serviceaccount/testdata/fail/hdfscluster-rolegroup-podoverrides-deprecated-serviceaccount.yaml",
	"policies/serviceaccount/testdata/fail/hdfscluster-rolegroup-podoverrides-serviceaccountname.yaml",
}

// vapFalseDenials are passing fixtures the policies deny: gatehouse hashes a
// derived ServiceAccount name past 253 bytes, CEL has no hash to do the same.
var vapFalseDenials = map[string]bool{
	"policies/serviceaccount/testdata/pass/examplecluster-long-name-podoverrides-hashed-redundant.yaml": true,
}

// TestVAPsDenyWhatTheyCover runs the policies of vap/ in a real API server:
// they must deny the failing fixtures listed in vapDenies and admit every
// passing fixture of SCOPE and SA (but vapFalseDenials), so the in-process comparison of `make
// bench` does real work and no less than it claims.
func TestVAPsDenyWhatTheyCover(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make e2e sets it)")
	}
	repo := repoRoot(t)
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(repo, "e2e", "testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	policies, err := localcluster.ReadManifests(filepath.Join(repo, "e2e", "perf", "vap", "scope-sa.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range policies {
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("creating %s %s: %v", p.GetKind(), p.GetName(), err)
		}
	}

	fixtures, err := ReadFixtures(repo)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]Fixture{}
	for _, fx := range fixtures {
		byFile[fx.File] = fx
	}
	admit := func(fx Fixture) error {
		obj := &unstructured.Unstructured{Object: fx.Object}
		obj = obj.DeepCopy()
		if obj.GetNamespace() == "" && !clusterScoped[obj.GetKind()] {
			obj.SetNamespace("default")
		}
		return c.Create(ctx, obj, client.DryRunAll)
	}
	// The policies take effect once the API server's informers have them.
	probe := "policies/scope/testdata/fail/pod-scope-empty-entry.yaml"
	first := byFile[probe]
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return apierrors.IsInvalid(admit(first)), nil
	}); err != nil {
		t.Fatalf("the policies never denied %s: %v", probe, err)
	}

	for _, file := range vapDenies {
		fx, ok := byFile[file]
		if !ok {
			t.Errorf("fixture %s is gone; update vapDenies", file)
			continue
		}
		err := admit(fx)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			t.Errorf("%s: want a denial by a ValidatingAdmissionPolicy, got %v", file, err)
		}
	}
	var notCovered []string
	for _, fx := range fixtures {
		if !strings.HasPrefix(fx.File, "policies/scope/") && !strings.HasPrefix(fx.File, "policies/serviceaccount/") {
			continue
		}
		err := admit(fx)
		switch {
		case vapFalseDenials[fx.File]:
			if !apierrors.IsInvalid(err) {
				t.Errorf("%s: the policies were expected to deny it (a known false denial), got %v", fx.File, err)
			}
		case fx.Outcome == "pass" && err != nil:
			t.Errorf("%s passes gatehouse, but the policies or the API server refuse it: %v", fx.File, err)
		case fx.Outcome == "fail" && err == nil:
			notCovered = append(notCovered, fx.File)
		}
	}
	sort.Strings(notCovered)
	t.Logf("failing fixtures CEL does not cover (gatehouse-only): %d\n%s", len(notCovered), strings.Join(notCovered, "\n"))
}

func repoRoot(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
