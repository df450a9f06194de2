package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// refusedByManagedLabels reports whether err is the API server's refusal
// by the admission policy that keeps the managed namespace labels
// gatehouse's, naming each of keys.
func refusedByManagedLabels(err error, keys ...string) bool {
	if !apierrors.IsInvalid(err) || failedWebhook(err) != "" {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "ValidatingAdmissionPolicy '"+webhooks.ManagedLabelsPolicyName+"'") {
		return false
	}
	for _, k := range keys {
		if !strings.Contains(msg, "metadata.labels["+k+"]: "+webhooks.ManagedLabelChanged+": ") {
			return false
		}
	}
	return true
}

// TestManagedLabelsHold: the labels gatehouse keeps on a harnessed and
// scoped namespace (docs/contracts.md §11) cannot be stripped by anyone
// else, admin included: through namespaces/status and namespaces/finalize
// the API server's own admission policy refuses it, and a plain UPDATE that
// drops them gets them back from harness-labels while gatehouse answers.
// With gatehouse stopped, the same UPDATE (which the failing-open entry
// lets through) and the status strip are refused by the policy, while
// another label of the namespace can still be changed. gatehouse itself
// gives the labels up when the harness goes.
func TestManagedLabelsHold(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it stops and restarts gatehouse")
	}
	ctx := context.Background()
	opts := serverOptions()
	harnessed, scoped := opts.HarnessedNamespaceLabel, opts.ScopedNamespaceLabel
	const key = "e2e.gatehouse.dev/managed-labels"
	ns := testNamespace(t, e, t.Name(), nil, map[string]string{key: "team"})
	h := operatorHarness(t, "e2e-managed-labels", key, ns, nil, true)
	harnessNamespace(ctx, t, e, h, ns)
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	current := func() *corev1.Namespace {
		t.Helper()
		got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, ok := current().Labels[scoped]
		return ok, nil
	}); err != nil {
		t.Fatalf("namespace %s was never labelled scoped: %v", ns, err)
	}
	without := func(keys ...string) *corev1.Namespace {
		got := current()
		for _, k := range keys {
			delete(got.Labels, k)
		}
		return got
	}
	dryRun := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}

	_, err = cs.CoreV1().Namespaces().UpdateStatus(ctx, without(harnessed, scoped), dryRun)
	if !refusedByManagedLabels(err, harnessed, scoped) {
		t.Errorf("both labels stripped through namespaces/status: want the policy's refusal naming both, got %v", err)
	}
	t.Logf("the refusal: %v", err)
	_, err = cs.CoreV1().Namespaces().Finalize(ctx, without(harnessed), dryRun)
	if !refusedByManagedLabels(err, harnessed) {
		t.Errorf("the harnessed label stripped through namespaces/finalize: want the policy's refusal, got %v", err)
	}
	got, err := cs.CoreV1().Namespaces().Update(ctx, without(harnessed, scoped), dryRun)
	if err != nil {
		t.Errorf("an UPDATE dropping the labels while gatehouse answers: %v", err)
	} else if _, ok := got.Labels[harnessed]; !ok {
		t.Errorf("an UPDATE dropping the labels while gatehouse answers would store %v: harness-labels gives a namespace the labels it should carry", got.Labels)
	}

	binary, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.local.StopGatehouse(); err != nil {
		t.Fatal(err)
	}
	running := false
	restart := func() {
		if err := e.local.RestartGatehouse(binary); err != nil {
			t.Errorf("restarting gatehouse: %v", err)
		} else if err := e.local.Gatehouse.WaitReady(time.Minute); err != nil {
			t.Error(err)
		}
		running = true
	}
	t.Cleanup(func() {
		if !running {
			restart() // later tests need gatehouse back whatever failed here
		}
	})
	// gatehouse is down: the failing-open entry lets the UPDATE through to
	// the policy, which refuses it.
	_, err = cs.CoreV1().Namespaces().Update(ctx, without(harnessed), metav1.UpdateOptions{})
	if !refusedByManagedLabels(err, harnessed) {
		t.Errorf("with gatehouse down, an UPDATE dropping the harnessed label: want the policy's refusal, got %v", err)
	}
	_, err = cs.CoreV1().Namespaces().UpdateStatus(ctx, without(scoped), metav1.UpdateOptions{})
	if !refusedByManagedLabels(err, scoped) {
		t.Errorf("with gatehouse down, the scoped label stripped through namespaces/status: want the policy's refusal, got %v", err)
	}
	relabelled := current()
	relabelled.Labels["team"] = "other"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, relabelled, dryRun); err != nil {
		t.Errorf("with gatehouse down, an UPDATE of another label of the namespace: %v", err)
	}
	for _, k := range []string{harnessed, scoped} {
		if _, ok := current().Labels[k]; !ok {
			t.Errorf("namespace %s lost %s while gatehouse was down", ns, k)
		}
	}
	restart()

	// gatehouse's own requests go through: with the harness gone it gives
	// both labels up.
	if err := e.client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		l := current().Labels
		_, h := l[harnessed]
		_, s := l[scoped]
		return !h && !s, nil
	}); err != nil {
		t.Errorf("gatehouse did not give the labels up once the harness was deleted (labels %v): %v", current().Labels, err)
	}
}
