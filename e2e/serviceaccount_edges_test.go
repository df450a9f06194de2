package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deepPodOverridesHdfsCluster is an HdfsCluster whose deepest map, the spec of a
// podOverrides that sets another ServiceAccount, sits at depth deepest below
// the object (the object is depth 0), under a chain of maps keyed "n" in
// spec. It returns the field path of that ServiceAccount.
func deepPodOverridesHdfsCluster(ns, name string, deepest int) (*unstructured.Unstructured, string) {
	inner := map[string]any{"podOverrides": map[string]any{"spec": map[string]any{"serviceAccountName": "admin"}}}
	// spec is depth 1 and the chain follows, then podOverrides and its spec.
	chain := deepest - 3
	for range chain {
		inner = map[string]any{"n": inner}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1",
		"kind":       "HdfsCluster",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       inner,
	}}
	return obj, "spec" + strings.Repeat(".n", chain) + ".podOverrides.spec.serviceAccountName"
}

// TestServiceAccountPodOverridesAtAnyDepth creates product custom resources
// nested deeper and deeper, up to the deepest the API server's decoder
// accepts, with a podOverrides ServiceAccount at the bottom
// (docs/service-account.md, "Depth"). None may be admitted. Those whose
// review reaches gatehouse are denied for the ServiceAccount at the exact
// path, and that must include an object thousands of levels past the walk
// limit of the first release (64); the deepest ones are rejected by the API
// server before any webhook sees them (the test logs how).
func TestServiceAccountPodOverridesAtAnyDepth(t *testing.T) {
	e := requireCluster(t)
	ns := testNamespace(t, e, "serviceaccount-depth", nil, nil)
	ctx := context.Background()

	judged := 0
	for _, deepest := range []int{100, 1000, 9000, 9990, 9994, 9995, 9996, 9997, 9999} {
		obj, field := deepPodOverridesHdfsCluster(ns, fmt.Sprintf("deep-%d", deepest), deepest)
		err := e.client.Create(ctx, obj, client.DryRunAll)
		if err == nil {
			t.Fatalf("a podOverrides ServiceAccount %d levels deep was admitted", deepest)
		}
		if !apierrors.IsInvalid(err) {
			msg := err.Error()
			if len(msg) > 300 {
				msg = msg[:300] + "..."
			}
			t.Logf("depth %d: rejected before gatehouse could judge it: %s", deepest, msg)
			continue
		}
		webhook, causes := liveCauses(t, err)
		if webhook != "service-account" || len(causes) != 1 || causes[0] != "ServiceAccountOverridden@"+field {
			t.Errorf("depth %d: denied by %s with %d causes, want one ServiceAccountOverridden at the deepest path from service-account",
				deepest, webhook, len(causes))
			continue
		}
		t.Logf("depth %d: denied by gatehouse at the exact path", deepest)
		judged = deepest
	}
	if judged < 9000 {
		t.Errorf("the deepest object gatehouse judged is %d levels deep; the API server sends deeper ones", judged)
	}
}
