package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
)

// ConditionAccepted is the condition the status reconciler sets on every
// DependencyGroup.
const ConditionAccepted = "Accepted"

// DependencyGroupStatus closes the race admission cannot: two groups listing
// the same CRD created at once on different replicas. It runs leader-elected
// and sets status.state of every group from dependencygroup.Decide (older
// creationTimestamp, then name, wins), with a condition naming each clash.
// Any create, update or delete re-decides all groups, so deleting a winner
// promotes the next; a status is written only when it changes.
type DependencyGroupStatus struct {
	Client client.Client
}

// allGroups is the single work item: every event re-decides every group.
var allGroups = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all-dependencygroups"}}

// crdPoll is how often the reconciler looks for the DependencyGroup CRD
// while it is not installed.
const crdPoll = 10 * time.Second

// conflictRetry is how soon a status write that lost a race is tried again.
const conflictRetry = 200 * time.Millisecond

// SetupWithManager registers the reconciler. deploy/default installs no
// DependencyGroup CRD (helmetica owns it), so the controller starts once the
// kind is served: until then there is no group to decide.
func (r *DependencyGroupStatus) SetupWithManager(mgr ctrl.Manager) error {
	gvk := helmeticav1.SchemeGroupVersion.WithKind("DependencyGroup")
	return mgr.Add(waitForKind{mgr: mgr, gvk: gvk, start: func() error { return r.register(mgr) }})
}

// waitForKind is a leader-elected runnable that polls until a kind is
// served, then registers a controller with the running manager.
type waitForKind struct {
	mgr   ctrl.Manager
	gvk   schema.GroupVersionKind
	start func() error
}

// NeedLeaderElection: only the leader decides.
func (waitForKind) NeedLeaderElection() bool { return true }

func (w waitForKind) Start(ctx context.Context) error {
	for {
		if _, err := w.mgr.GetRESTMapper().RESTMapping(w.gvk.GroupKind(), w.gvk.Version); err == nil {
			return w.start()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(crdPoll):
		}
	}
}

func (r *DependencyGroupStatus) register(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("dependencygroup-status").
		Watches(&helmeticav1.DependencyGroup{}, crhandler.EnqueueRequestsFromMapFunc(
			func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{allGroups} })).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *DependencyGroupStatus) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var list helmeticav1.DependencyGroupList
	if err := r.Client.List(ctx, &list); err != nil {
		return reconcile.Result{}, err
	}
	objs := make([]map[string]any, len(list.Items))
	for i := range list.Items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&list.Items[i])
		if err != nil {
			return reconcile.Result{}, err
		}
		objs[i] = m
	}
	verdicts := dependencygroup.Decide(objs)
	for i := range list.Items {
		g := &list.Items[i]
		v, ok := verdicts[g.Name]
		if !ok {
			continue
		}
		if !setStatus(g, v) {
			continue
		}
		if err := r.Client.Status().Update(ctx, g); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return reconcile.Result{RequeueAfter: conflictRetry}, nil // a newer event re-decides anyway
			}
			return reconcile.Result{}, fmt.Errorf("status of DependencyGroup %s: %w", g.Name, err)
		}
	}
	return reconcile.Result{}, nil
}

// setStatus writes verdict v into g's status and reports whether it changed.
func setStatus(g *helmeticav1.DependencyGroup, v dependencygroup.Verdict) bool {
	cond := metav1.Condition{
		Type:               ConditionAccepted,
		Status:             metav1.ConditionTrue,
		Reason:             "NoClash",
		Message:            v.Message,
		ObservedGeneration: g.Generation,
	}
	if v.State == dependencygroup.Rejected {
		cond.Status, cond.Reason = metav1.ConditionFalse, "CRDClaimed"
	}
	state := helmeticav1.DependencyGroupState(v.State)
	old := meta.FindStatusCondition(g.Status.Conditions, ConditionAccepted)
	if g.Status.State == state && old != nil &&
		old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
		return false
	}
	g.Status.State = state
	meta.SetStatusCondition(&g.Status.Conditions, cond)
	return true
}
