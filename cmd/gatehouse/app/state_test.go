package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

func obj(apiVersion, kind, namespace, name string, extra map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

func group(name string, crds ...string) map[string]any {
	var list []any
	for _, c := range crds {
		list = append(list, map[string]any{"name": c})
	}
	return obj("helmetica.io/v1", "DependencyGroup", "", name, map[string]any{"spec": map[string]any{"crds": list}})
}

func notGivenWhat(err error) string {
	var e *route.StateNotGiven
	if errors.As(err, &e) {
		return e.What
	}
	return ""
}

// TestStateNotGiven: without --cluster, what a review needs by name and
// check was not given is answered StateNotGiven and remembered: a
// Namespace, a role, a DependencyGroup, and the harness a namespace's
// harnessed label says exists; lookups for other objects that would clash
// answer from what was given.
func TestStateNotGiven(t *testing.T) {
	s := newClusterState(nil)
	s.harnessedLabel = "gatehouse.dev/harnessed"
	s.add(obj("v1", "Namespace", "", "given", map[string]any{"metadata": map[string]any{"name": "given", "labels": map[string]any{"a": "b"}}}))
	s.add(obj("v1", "Namespace", "", "operators", map[string]any{"metadata": map[string]any{"name": "operators", "labels": map[string]any{"gatehouse.dev/harnessed": "true"}}}))
	s.add(group("mariadb", "mariadbs.k8s.mariadb.com"))

	if l, err := s.NamespaceLabels("given"); err != nil || l["a"] != "b" || l["kubernetes.io/metadata.name"] != "given" {
		t.Errorf("a given namespace: %v, %v", l, err)
	}
	if _, err := s.NamespaceLabels("elsewhere"); notGivenWhat(err) != "Namespace elsewhere" {
		t.Errorf("a namespace not given: %v", err)
	}
	if _, err := s.Objects(harness.ClusterRoleGVK, harness.IndexName, "admin"); notGivenWhat(err) != "ClusterRole admin" {
		t.Errorf("a role not given: %v", err)
	}
	if ok, err := s.Exists(dependencygroup.GroupGVK, "mariadb"); !ok || err != nil {
		t.Errorf("a given group: %v, %v", ok, err)
	}
	if _, err := s.Exists(dependencygroup.GroupGVK, "strimzi"); notGivenWhat(err) != "DependencyGroup strimzi" {
		t.Errorf("a group not given: %v", err)
	}
	if _, err := s.Objects(harness.GVK, harness.IndexClaimNamespace, "operators"); !strings.HasPrefix(notGivenWhat(err), "the OperatorHarness naming namespace operators") {
		t.Errorf("a harnessed namespace's harness not given: %v", err)
	}
	if names, err := s.Lookup(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, "kafkas.kafka.strimzi.io"); err != nil || len(names) != 0 {
		t.Errorf("a clash lookup answers from what was given: %v, %v", names, err)
	}
	if names, err := s.Lookup(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, "mariadbs.k8s.mariadb.com"); err != nil || !slices.Equal(names, []string{"mariadb"}) {
		t.Errorf("a clash with a given group: %v, %v", names, err)
	}
	_, _ = s.NamespaceLabels("elsewhere") // asked twice: remembered once
	want := []string{"ClusterRole admin", "DependencyGroup strimzi", "Namespace elsewhere",
		"the OperatorHarness naming namespace operators (labelled gatehouse.dev/harnessed)"}
	if got := s.TakeGaps(); !slices.Equal(got, want) {
		t.Errorf("gaps %q, want %q", got, want)
	}
	if got := s.TakeGaps(); len(got) != 0 {
		t.Errorf("gaps taken twice: %q", got)
	}

	s.add(obj("helmetica.io/v1", "OperatorHarness", "", "mariadb", map[string]any{"spec": map[string]any{"operator": map[string]any{"namespace": "operators"}}}))
	if _, err := s.Objects(harness.GVK, harness.IndexClaimNamespace, "operators"); err != nil {
		t.Errorf("the harness of the other group names the namespace: %v", err)
	}
}

// fakeCluster is a cluster view with one namespace, two DependencyGroups and
// one workload.
type fakeCluster struct{}

func (fakeCluster) NamespaceLabels(name string) (map[string]string, error) {
	if name == "live" {
		return map[string]string{"from": "cluster"}, nil
	}
	return nil, nil
}

func (fakeCluster) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	if gvk == dependencygroup.GroupGVK && index == dependencygroup.IndexListedCRD && value == "mariadbs.k8s.mariadb.com" {
		return []map[string]any{group("mariadb", value), group("mariadb-fork", value)}, nil
	}
	return nil, nil
}

func (c fakeCluster) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs, _ := c.Objects(gvk, index, value)
	var out []string
	for _, o := range objs {
		out = append(out, route.ObjectKey(o))
	}
	return out, nil
}

func (fakeCluster) Exists(_ schema.GroupVersionKind, name string) (bool, error) {
	return name == "mariadb", nil
}

func (fakeCluster) ListWorkloads(_ context.Context, namespace, kind string, _ map[string]string) ([]map[string]any, error) {
	return []map[string]any{obj("apps/v1", kind, namespace, "live", nil), obj("apps/v1", kind, namespace, "replaced", map[string]any{"from": "cluster"})}, nil
}

// TestStateOverACluster: with --cluster the cluster answers what check was
// not given (nothing is missing), the objects given or admitted replace the
// cluster's of the same key, and a cluster without the object says so.
func TestStateOverACluster(t *testing.T) {
	s := newClusterState(nil)
	s.cluster = &clusterView{state: fakeCluster{}, workloads: fakeCluster{}}
	s.add(group("mariadb-fork")) // admitted: no longer lists the CRD
	s.add(obj("apps/v1", "Deployment", "ops", "replaced", map[string]any{"from": "given"}))
	if l, err := s.NamespaceLabels("live"); err != nil || l["from"] != "cluster" {
		t.Errorf("a namespace of the cluster: %v, %v", l, err)
	}
	if l, err := s.NamespaceLabels("absent"); err != nil || l != nil {
		t.Errorf("a namespace the cluster lacks: %v, %v", l, err)
	}
	if names, err := s.Lookup(dependencygroup.GroupGVK, dependencygroup.IndexListedCRD, "mariadbs.k8s.mariadb.com"); err != nil || !slices.Equal(names, []string{"mariadb"}) {
		t.Errorf("the cluster's groups less the one replaced: %v, %v", names, err)
	}
	if ok, err := s.Exists(dependencygroup.GroupGVK, "strimzi"); ok || err != nil {
		t.Errorf("a group the cluster lacks: %v, %v", ok, err)
	}
	if _, err := s.Objects(harness.ClusterRoleGVK, harness.IndexName, "admin"); err != nil {
		t.Errorf("a role the cluster lacks is not found, not missing: %v", err)
	}
	workloads, err := s.ListWorkloads(context.Background(), "ops", "Deployment", nil)
	var from []string
	for _, w := range workloads {
		f, _ := w["from"].(string)
		from = append(from, objectRef(w).Name+"="+f)
	}
	if err != nil || !slices.Equal(from, []string{"replaced=given", "live="}) {
		t.Errorf("workloads %v, %v", from, err)
	}
	if gaps := s.TakeGaps(); len(gaps) != 0 {
		t.Errorf("gaps over a cluster: %q", gaps)
	}
}
