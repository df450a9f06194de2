package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
)

func group(name string, created time.Time, crds ...string) *helmeticav1.DependencyGroup {
	g := &helmeticav1.DependencyGroup{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Generation: 1}}
	for _, c := range crds {
		g.Spec.CRDs = append(g.Spec.CRDs, helmeticav1.CRDRef{Name: c})
	}
	return g
}

// TestDependencyGroupStatus uses a fake client (a pure unit test of the
// reconciler; the race itself is replayed against a real API server in e2e).
func TestDependencyGroupStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := helmeticav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&helmeticav1.DependencyGroup{}).
		WithObjects(
			group("mariadb", t0, "backups.k8s.mariadb.com", "mariadbs.k8s.mariadb.com"),
			group("mariadb-fork", t0.Add(time.Second), "mariadbs.k8s.mariadb.com"),
			group("strimzi", t0.Add(2*time.Second), "kafkas.kafka.strimzi.io"),
		).Build()
	r := &DependencyGroupStatus{Client: c}
	ctx := context.Background()
	status := func(name string) helmeticav1.DependencyGroupStatus {
		var g helmeticav1.DependencyGroup
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &g); err != nil {
			t.Fatal(err)
		}
		return g.Status
	}
	if _, err := r.Reconcile(ctx, allGroups); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]helmeticav1.DependencyGroupState{"mariadb": "Accepted", "mariadb-fork": "Rejected", "strimzi": "Accepted"} {
		if got := status(name).State; got != want {
			t.Errorf("%s: state %q, want %q", name, got, want)
		}
	}
	cond := meta.FindStatusCondition(status("mariadb-fork").Conditions, ConditionAccepted)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "CRDClaimed" ||
		!strings.Contains(cond.Message, "mariadbs.k8s.mariadb.com") || !strings.Contains(cond.Message, "mariadb") {
		t.Errorf("the Rejected condition does not name the clash: %+v", cond)
	}

	// A second pass writes nothing: statuses are written only on change.
	var before helmeticav1.DependencyGroupList
	if err := c.List(ctx, &before); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, allGroups); err != nil {
		t.Fatal(err)
	}
	var after helmeticav1.DependencyGroupList
	if err := c.List(ctx, &after); err != nil {
		t.Fatal(err)
	}
	for i := range before.Items {
		if before.Items[i].ResourceVersion != after.Items[i].ResourceVersion {
			t.Errorf("%s was written although nothing changed", before.Items[i].Name)
		}
	}

	// Deleting the winner promotes the next.
	if err := c.Delete(ctx, &helmeticav1.DependencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "mariadb"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, allGroups); err != nil {
		t.Fatal(err)
	}
	if got := status("mariadb-fork").State; got != "Accepted" {
		t.Errorf("after the winner was deleted, mariadb-fork is %q, want Accepted", got)
	}
}
