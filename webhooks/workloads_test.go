package webhooks

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

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

// TestOverrideLimitsNeverRatchet: through the served webhook, an UPDATE that
// keeps a content finding of the old object ratchets to a warning, while one
// that keeps a document past a limit, or unparseable, is denied as a CREATE
// is: those findings are about the review, not a value.
func TestOverrideLimitsNeverRatchet(t *testing.T) {
	ts := startServer(t)
	cmKind, cmResource := [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}
	configMap := func(doc string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "unbounded-component-overrides", "namespace": "unbounded-system"},
			"data":     map[string]any{"o.yaml": "apiVersion: " + overrides.APIVersion + "\n" + doc, "team": "platform"}}
	}
	deep := "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {updateStrategy: " +
		strings.Repeat("{a: ", 120) + "1" + strings.Repeat("}", 120) + "}}}\n"
	for _, tc := range []struct {
		name     string
		doc      string
		code     policies.Code
		ratchets bool
	}{
		{"content finding", "overrides:\n- {component: storage, kind: DaemonSet, patch: {spec: {template: {spec: {hostNetwork: true}}}}}\n",
			overrides.OverridePathProtected, true},
		{"too deep", deep, overrides.OverrideDocumentTooDeep, false},
		{"past the parser's depth", "overrides: " + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + "\n",
			overrides.OverrideDocumentTooDeep, false},
		{"not YAML", "overrides: [\n", overrides.OverrideDocumentInvalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, obj := configMap(tc.doc), configMap(tc.doc)
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"edited": "yes"}
			_, r := ts.post(t, "/validate/component-overrides", "application/json",
				reviewBodyIn(t, "u", admissionv1.Update, cmKind, cmResource, "unbounded-system", "unbounded-component-overrides", obj, old))
			if r.Allowed != tc.ratchets {
				t.Fatalf("allowed %v, want %v: %+v", r.Allowed, tc.ratchets, r.Result)
			}
			if !tc.ratchets && (r.Result == nil || !strings.Contains(fmt.Sprint(r.Result), string(tc.code))) {
				t.Errorf("the denial does not carry %s: %+v", tc.code, r.Result)
			}
		})
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

// TestValidateConfigComponents: the component table of the configuration
// is checked by the policy's rules, each error attributed to its field, and
// the configuration's default names the policy's default preset.
func TestValidateConfigComponents(t *testing.T) {
	if configv1alpha1.DefaultComponentTable != overrides.PresetAny {
		t.Errorf("the configuration's default table %q is not the policy's %q", configv1alpha1.DefaultComponentTable, overrides.PresetAny)
	}
	cfg := configv1alpha1.Default()
	if err := ValidateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range overrides.PresetNames() {
		cfg.Overrides.ComponentTable = name
		if err := ValidateConfig(cfg); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	cfg.Overrides.ComponentTable = "upstream-0000000"
	if errs := ValidateConfig(cfg); len(errs) != 1 || errs[0].Error() != `overrides.componentTable: Unsupported value: "upstream-0000000": supported values: "`+
		strings.Join(overrides.PresetNames(), `", "`)+`"` {
		t.Errorf("unknown preset: %v", errs)
	}
	cfg.Overrides.ComponentTable = ""
	cfg.Overrides.Components = []configv1alpha1.OverrideComponent{
		{Name: "racer", Kinds: []string{"Deployment"}, Scope: configv1alpha1.ScopeSingleton},
		{Name: "Storage", Kinds: []string{"StatefulSet", "DaemonSet", "DaemonSet"}, Scope: configv1alpha1.ScopePerSite},
		{Name: "racer", Kinds: []string{"DaemonSet"}, Scope: configv1alpha1.ScopeSingleton, SiteLabels: []string{"x"}},
	}
	var got []string
	for _, e := range ValidateConfig(cfg) {
		got = append(got, e.Error())
	}
	want := []string{
		"overrides.components[1].name: Invalid value: must be a lowercase RFC 1123 label, as upstream's component names are",
		"overrides.components[1].kinds[0]: Invalid value: must be Deployment or DaemonSet",
		"overrides.components[1].kinds[2]: Invalid value: DaemonSet is listed more than once",
		"overrides.components[1].siteLabels: Invalid value: a per-Site component needs the label that names each workload's Site",
		"overrides.components[2].name: Invalid value: component racer is listed more than once",
		"overrides.components[2].siteLabels: Invalid value: a cluster singleton has no Site; omit siteLabels",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ValidateConfig() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cfg.Overrides.Components = cfg.Overrides.Components[:1]
	if err := ValidateConfig(cfg); err != nil {
		t.Errorf("a valid table: %v", err)
	}
	table := OptionsFromConfig(cfg).OverrideTable
	if findings := overrides.Validate(table, map[string]string{"o.yaml": "apiVersion: " + overrides.APIVersion +
		"\noverrides:\n- {component: net, kind: DaemonSet, extraArgs: {node: [-v]}}\n"}, nil); len(findings) != 1 ||
		findings[0].Code != overrides.OverrideComponentUnknown {
		t.Errorf("net outside the configured table: %v", findings)
	}
}
