package webhooks

import (
	"context"
	"reflect"
	"slices"
	"testing"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
)

// listedWorkloads is a WorkloadReader answering fixed objects in a fixed
// order, as a cache might list them.
type listedWorkloads []map[string]any

func (l listedWorkloads) ListWorkloads(context.Context, string, string, map[string]string) ([]map[string]any, error) {
	return l, nil
}

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
	opts := Options{Overrides: configv1alpha1.Overrides{Namespace: "unbounded-system", ComponentLabel: "app.kubernetes.io/component"}}
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
		findings := overrides.Validate(data, &liveWorkloads{ctx: context.Background(), opts: opts})
		var codes []policies.Code
		for _, f := range findings {
			codes = append(codes, f.Code)
		}
		want := []policies.Code{overrides.CodeSelectorLabel, overrides.CodeNodeSelectorOwned}
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
	got := workloadOf(metalmanOf("edge-west"), "Deployment")
	want := overrides.Workload{
		Site: "edge-west", Kind: "Deployment",
		SelectorLabels:    map[string]string{"app": "metalman", "site": "edge-west"},
		Volumes:           []string{"tftp"},
		Containers:        []string{"metalman"},
		Mounts:            map[string]map[string]string{"metalman": {"/srv/tftp": "tftp"}},
		NodeSelector:      map[string]string{siteLabel: "edge-west"},
		RequiredNodeTerms: 2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
