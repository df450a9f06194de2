package adapters

import (
	"context"
	"reflect"
	"slices"
	"testing"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// listedWorkloads is a WorkloadReader answering fixed objects in a fixed
// order, as a cache might list them.
type listedWorkloads []map[string]any

func (l listedWorkloads) ListWorkloads(context.Context, string, string, map[string]string) ([]map[string]any, error) {
	return l, nil
}

// siteLabel is the Site label of metalman's workloads (upstream
// metalmanDeployment).
const siteLabel = "unbounded-cloud.io/site"

// anyTable is the default component table.
var anyTable = overrides.MustPreset(overrides.PresetAny)

// metalmanOf is the metalman Deployment of one Site.
func metalmanOf(site string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "metalman-" + site, "namespace": "unbounded-system",
			"labels": map[string]any{"app.kubernetes.io/component": "metalman", siteLabel: site}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "metalman", "site": site}},
			"template": map[string]any{"spec": map[string]any{
				"nodeSelector": map[string]any{siteLabel: site},
				"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
					"nodeSelectorTerms": []any{map[string]any{}, map[string]any{}},
				}}},
				"volumes": []any{map[string]any{"name": "tftp"}},
				"containers": []any{map[string]any{"name": "metalman", "volumeMounts": []any{
					map[string]any{"name": "tftp", "mountPath": "/srv/tftp"},
				}}},
			}},
		},
	}
}

// TestLiveWorkloadsPerSite: resolution sees each Site's workload on its own,
// so a per-Site entry that changes its own Site's selector label is denied
// whatever order the reader lists the workloads in. The merge this replaced
// kept the last listed Site's selector value, so the verdict followed list
// order.
func TestLiveWorkloadsPerSite(t *testing.T) {
	opts := route.Options{Overrides: configv1alpha1.Overrides{Namespace: "unbounded-system", ComponentLabel: "app.kubernetes.io/component"}}
	data := map[string]string{"o.yaml": "apiVersion: " + overrides.APIVersion + `
overrides:
- component: metalman
  kind: Deployment
  sites: [edge-west]
  patch: {spec: {template: {metadata: {labels: {site: edge-east}}, spec: {nodeSelector: {unbounded-cloud.io/site: edge-east}}}}}
`}
	orders := [][]map[string]any{
		{metalmanOf("edge-west"), metalmanOf("edge-east")},
		{metalmanOf("edge-east"), metalmanOf("edge-west")},
	}
	var first []policies.Finding
	for i, order := range orders {
		opts.Workloads = listedWorkloads(order)
		findings := overrides.Validate(anyTable, data, &liveWorkloads{ctx: context.Background(), opts: opts, table: anyTable})
		var codes []policies.Code
		for _, f := range findings {
			codes = append(codes, f.Code)
		}
		want := []policies.Code{overrides.OverrideSelectorLabel, overrides.OverrideNodeSelectorOwned}
		if !slices.Equal(codes, want) {
			t.Errorf("order %d: codes %v, want %v", i, codes, want)
		}
		if i == 0 {
			first = findings
		} else if !reflect.DeepEqual(findings, first) {
			t.Errorf("the verdict depends on list order:\n%v\n%v", first, findings)
		}
	}
}

// TestWorkloadOf reads what resolution needs of one workload.
func TestWorkloadOf(t *testing.T) {
	got := workloadOf(metalmanOf("edge-west"), "Deployment", anyTable.SiteLabels("metalman"))
	want := overrides.Workload{
		Site: "edge-west", Kind: "Deployment",
		SelectorLabels:    map[string]string{"app": "metalman", "site": "edge-west"},
		Volumes:           []string{"tftp"},
		Containers:        []string{"metalman"},
		Mounts:            map[string]map[string]string{"metalman": {"/srv/tftp": "tftp"}},
		Env:               map[string]map[string]overrides.EnvSource{},
		NodeSelector:      map[string]string{siteLabel: "edge-west"},
		RequiredNodeTerms: 2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestWorkloadSite: a workload's Site is the first of its component's Site
// labels it carries, on itself or else on its pod template: the storage
// supervisor of releases before the component packages carries only
// net.unbounded-cloud.io/site (upstream reconciler.go
// scopeStorageDaemonSetToSite), racer's dataplane carries the Site as its
// pod template's universe label (components/racer/resources.go @ 605ff923
// dataplaneDaemonSet). Init containers and the operator's env sources are
// read apart from the containers.
func TestWorkloadSite(t *testing.T) {
	storage := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/component": "storage",
			"net.unbounded-cloud.io/site": "edge-west"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "init-perms"}},
			"containers": []any{map[string]any{"name": "run", "env": []any{
				map[string]any{"name": "NODE_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "spec.nodeName"}}},
				map[string]any{"name": "ROOT", "value": "/srv"},
				map[string]any{"name": "EMPTY", "value": ""},
			}}},
		}}},
	}
	got := workloadOf(storage, "DaemonSet", anyTable.SiteLabels("storage"))
	if got.Site != "edge-west" || !slices.Equal(got.Containers, []string{"run"}) || !slices.Equal(got.InitContainers, []string{"init-perms"}) {
		t.Errorf("storage: %+v", got)
	}
	if env := got.Env["run"]; env["NODE_NAME"] != overrides.EnvValueFrom || env["ROOT"] != overrides.EnvValue || len(env) != 2 {
		t.Errorf("storage env: %v", got.Env)
	}
	dataplane := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"racer.unbounded-cloud.io/component": "racer-dataplane"}},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"racer.unbounded-cloud.io/universe": "rack-a"}}}},
	}
	if got := workloadOf(dataplane, "DaemonSet", anyTable.SiteLabels("racer-dataplane")); got.Site != "rack-a" {
		t.Errorf("racer-dataplane Site %q", got.Site)
	}
	if got := workloadOf(storage, "DaemonSet", anyTable.SiteLabels("net")); got.Site != "" {
		t.Errorf("a singleton has a Site: %q", got.Site)
	}
}
