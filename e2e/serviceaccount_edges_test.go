package e2e

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deepHdfsCluster is an HdfsCluster whose deepest map, the spec of a
// podOverrides that sets another ServiceAccount, sits at depth deepest below
// the object (the object is depth 0), under a chain of maps keyed "n" in
// spec. It returns the field path of that ServiceAccount.
func deepHdfsCluster(ns, name string, deepest int) (*unstructured.Unstructured, string) {
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
// nested as deep as the API server accepts, with a podOverrides
// ServiceAccount at the bottom (docs/service-account.md, "Depth"). The
// deepest one an admission review can carry is denied for its
// ServiceAccount at the exact path; the two levels beyond, which the API
// server accepts but whose review no webhook can decode, are rejected too
// (the test logs by whom).
func TestServiceAccountPodOverridesAtAnyDepth(t *testing.T) {
	e := requireCluster(t)
	ns := testNamespace(t, e, "serviceaccount-depth", nil, nil)
	ctx := context.Background()

	obj, field := deepHdfsCluster(ns, "deep-9997", 9997)
	err := e.client.Create(ctx, obj, client.DryRunAll)
	if err == nil {
		t.Fatal("a podOverrides ServiceAccount 9997 levels deep was admitted")
	}
	webhook, causes := liveCauses(t, err)
	if webhook != "service-account" || len(causes) != 1 || causes[0] != "ServiceAccountOverridden@"+field {
		t.Errorf("denied by %s with %d causes, want one ServiceAccountOverridden at the deepest path from service-account", webhook, len(causes))
	}

	for _, deepest := range []int{9998, 9999} {
		obj, _ := deepHdfsCluster(ns, "deep-beyond", deepest)
		err := e.client.Create(ctx, obj, client.DryRunAll)
		if err == nil {
			t.Fatalf("a podOverrides ServiceAccount %d levels deep was admitted", deepest)
		}
		msg := err.Error()
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		t.Logf("depth %d: rejected (invalid: %v): %s", deepest, apierrors.IsInvalid(err), msg)
	}
}
