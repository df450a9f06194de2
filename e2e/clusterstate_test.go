package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// TestClusterStateContracts applies the DependencyGroup and OperatorHarness
// examples through the API server: gatehouse reads the objects admitted
// before from its informer caches, so the group that lists an owned CRD and
// the harness with an unacknowledged cluster-wide Secret grant are denied,
// naming what they clash with.
func TestClusterStateContracts(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	want := map[string]string{
		"mariadb-fork":    "dependency-group DependencyGroupCRDClaimed@spec.crds[0].name",
		"greedy-operator": "harness HarnessGrantDangerous@spec.clusterRoles.rules[0]",
	}
	for _, file := range []string{"dependencygroups.yaml", "operatorharness.yaml"} {
		objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			t.Cleanup(func() { _ = e.client.Delete(context.Background(), obj.DeepCopy()) })
			expect, denied := want[obj.GetName()]
			if !denied {
				if err := e.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				continue
			}
			// The earlier objects reach gatehouse's caches through a watch:
			// retry until the clash is seen (it must be, within seconds).
			var lastErr error
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				lastErr = e.client.Create(ctx, obj.DeepCopy(), client.DryRunAll)
				return lastErr != nil, nil
			})
			if err != nil {
				t.Fatalf("%s was admitted: %v", obj.GetName(), lastErr)
			}
			webhook, causes := liveCauses(t, lastErr)
			if got := webhook + " " + strings.Join(causes, " "); got != expect {
				t.Errorf("%s: %s, want %s", obj.GetName(), got, expect)
			}
			if strings.HasPrefix(expect, "dependency-group") && !strings.Contains(lastErr.Error(), "DependencyGroup mariadb") {
				t.Errorf("the denial does not name the owning group: %v", lastErr)
			}
		}
	}
}

// TestDependencyGroupRaceResolvedByTheReconciler stores two groups listing
// the same CRD back to back with the validating configuration deleted (what
// two replicas admitting simultaneous creates amounts to): the leader-elected
// reconciler accepts the older and rejects the younger, naming the clash;
// deleting the winner promotes the other.
func TestDependencyGroupRaceResolvedByTheReconciler(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("needs the local control plane: it deletes and restores the webhook configuration")
	}
	ctx := context.Background()
	restore := deleteConfiguration(t, e, "ValidatingWebhookConfiguration")
	groupOf := func(name string) *helmeticav1.DependencyGroup {
		return &helmeticav1.DependencyGroup{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       helmeticav1.DependencyGroupSpec{CRDs: []helmeticav1.CRDRef{{Name: "widgets.race.example.com"}}},
		}
	}
	first, second := groupOf("race-a"), groupOf("race-b")
	for _, g := range []*helmeticav1.DependencyGroup{first, second} {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := e.client.Create(ctx, g)
			return err == nil || apierrors.IsAlreadyExists(err), nil
		})
		if err != nil {
			t.Fatalf("storing %s with the configuration deleted: %v", g.Name, err)
		}
		t.Cleanup(func() { _ = e.client.Delete(context.Background(), g) })
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	states := func() (string, string, string) {
		var a, b helmeticav1.DependencyGroup
		_ = e.client.Get(ctx, client.ObjectKey{Name: "race-a"}, &a)
		_ = e.client.Get(ctx, client.ObjectKey{Name: "race-b"}, &b)
		msg := ""
		for _, c := range b.Status.Conditions {
			msg = c.Message
		}
		return string(a.Status.State), string(b.Status.State), msg
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		a, b, _ := states()
		return a == "Accepted" && b == "Rejected", nil
	})
	a, b, msg := states()
	if err != nil {
		t.Fatalf("after the race: race-a %q, race-b %q; want Accepted and Rejected", a, b)
	}
	if !strings.Contains(msg, "widgets.race.example.com") || !strings.Contains(msg, "race-a") {
		t.Errorf("the Rejected condition does not name the CRD and the winner: %q", msg)
	}
	if err := e.client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, b, _ := states()
		return b == "Accepted", nil
	})
	if err != nil {
		t.Errorf("deleting the winner did not promote race-b")
	}
}
