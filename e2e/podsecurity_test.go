package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func plainPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metadata(ns, name),
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

// TestPodSecurityOnlyInOptedInNamespaces: a pod in a namespace without the
// label is stored as written; the same pod in an opted-in namespace is
// defaulted.
func TestPodSecurityOnlyInOptedInNamespaces(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	plain := plainPod(testNamespace(t, e, t.Name()+"/plain", nil, nil), "p")
	secure := plainPod(testNamespace(t, e, t.Name()+"/secure", nil, optInLabel), "p")
	for _, p := range []*corev1.Pod{plain, secure} {
		if err := e.client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if sc := plain.Spec.SecurityContext; sc != nil && (sc.RunAsUser != nil || sc.RunAsNonRoot != nil) {
		t.Errorf("a pod outside opted-in namespaces was changed: %+v", sc)
	}
	if plain.Spec.Containers[0].SecurityContext != nil {
		t.Errorf("a container outside opted-in namespaces was changed: %+v", plain.Spec.Containers[0].SecurityContext)
	}
	sc := secure.Spec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1001 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("the opted-in pod was not defaulted: %+v", sc)
	}
}

// TestPodSecurityGuardHoldsWhenTheMutatorIsGone removes the fail-open
// mutating configuration: pods in opted-in namespaces are then denied by the
// fail-closed guard, naming what the mutating webhook would have set.
func TestPodSecurityGuardHoldsWhenTheMutatorIsGone(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it deletes and restores the mutating configuration")
	}
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, optInLabel)

	restore := deleteConfiguration(t, e, "MutatingWebhookConfiguration")
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Errorf("restoring the mutating configuration: %v", err)
		}
		// Wait until pods are defaulted again, so later tests see the full chain.
		err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return e.client.Create(ctx, plainPod(ns, "after"), client.DryRunAll) == nil, nil
		})
		if err != nil {
			t.Errorf("the mutating webhook did not come back: %v", err)
		}
	})

	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lastErr = e.client.Create(ctx, plainPod(ns, "unmutated"), client.DryRunAll)
		return lastErr != nil, nil
	})
	if err != nil {
		t.Fatalf("with the mutator gone a bare pod was still admitted: %v", err)
	}
	webhook, causes := liveCauses(t, lastErr)
	if webhook != "pod-security" || len(causes) == 0 {
		t.Fatalf("denied by %s with %v", webhook, causes)
	}
	for _, c := range causes {
		if !strings.HasPrefix(c, "SecurityDefaultsMissing@") {
			t.Errorf("unexpected cause %s", c)
		}
	}
}
