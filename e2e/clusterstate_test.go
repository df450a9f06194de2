package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
