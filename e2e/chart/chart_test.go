// Package chart tests the Helm chart in charts/gatehouse with Helm's own Go
// library: rendered with its default values it is deploy/default, object by
// object; with monitoring on it is deploy/default with deploy/monitoring;
// it lints clean; and non-default values render what they say. It is a
// module of its own (like e2e/rbacdiff) so that Helm's dependencies stay out
// of the product module and of the e2e suite's.
package chart

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const (
	repo      = "../.."
	chartDir  = repo + "/charts/gatehouse"
	namespace = "gatehouse-system" // deploy/default's
)

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading %s: %v", chartDir, err)
	}
	return c
}

// renderChart is `helm template --include-crds --namespace gatehouse-system`:
// the values are checked against values.schema.json, the templates
// rendered, and the CRDs of crds/ added.
func renderChart(t *testing.T, values map[string]any) (map[string]map[string]any, error) {
	t.Helper()
	return renderChartIn(t, namespace, values)
}

// renderChartIn is renderChart for a release in namespace ns.
func renderChartIn(t *testing.T, ns string, values map[string]any) (map[string]map[string]any, error) {
	t.Helper()
	c := loadChart(t)
	files, err := renderFilesIn(t, ns, values)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var docs []byte
	for _, crd := range c.CRDObjects() {
		docs = append(docs, "\n---\n"...)
		docs = append(docs, crd.File.Data...)
	}
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") {
			docs = append(docs, "\n---\n"...)
			docs = append(docs, files[name]...)
		}
	}
	return objectsByKey(t, docs), nil
}

// renderFiles renders the chart's templates, by file name, as renderChart
// does.
func renderFiles(t *testing.T, values map[string]any) (map[string]string, error) {
	t.Helper()
	return renderFilesIn(t, namespace, values)
}

// renderFilesIn is renderFiles for a release in namespace ns.
func renderFilesIn(t *testing.T, ns string, values map[string]any) (map[string]string, error) {
	t.Helper()
	c := loadChart(t)
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "gatehouse", Namespace: ns, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, vals)
}

// deploymentKey is the chart's Deployment in objects of renderChart.
const deploymentKey = "apps/v1 Deployment gatehouse-system/gatehouse"

// auditDeploymentKey is the chart's audit Deployment in objects of
// renderChart.
const auditDeploymentKey = "apps/v1 Deployment gatehouse-system/gatehouse-audit"

// configChecksum is the pod template's checksum/config annotation, the same
// on the webhooks' Deployment and the audit's (when rendered).
func configChecksum(t *testing.T, objs map[string]map[string]any) string {
	t.Helper()
	sum := ""
	for _, key := range []string{deploymentKey, auditDeploymentKey} {
		if objs[key] == nil && key == auditDeploymentKey {
			continue
		}
		annotations, _ := objs[key]["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
		s, _ := annotations["checksum/config"].(string)
		if len(s) != 64 {
			t.Fatalf("%s: the pod template's checksum/config is %q, want a sha256", key, s)
		}
		if sum != "" && s != sum {
			t.Fatalf("%s: checksum/config %s differs from the webhooks' %s", key, s, sum)
		}
		sum = s
	}
	return sum
}

// withoutConfigChecksum removes the pod template's checksum/config, which
// the chart adds to what deploy/default applies (kustomize renders no
// checksum; there, roll the pods after changing the configuration).
func withoutConfigChecksum(t *testing.T, objs map[string]map[string]any) map[string]map[string]any {
	t.Helper()
	configChecksum(t, objs)
	for _, key := range []string{deploymentKey, auditDeploymentKey} {
		if objs[key] == nil {
			continue
		}
		meta := objs[key]["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)
		annotations := meta["annotations"].(map[string]any)
		delete(annotations, "checksum/config")
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
	}
	return objs
}

// renderKustomize renders dir as deploy_test.go does (krusty, default
// options).
func renderKustomize(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return objectsByKey(t, out)
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// clusterScopedUnknownToKustomize are cluster-scoped kinds that kustomize's
// built-in schema (Kubernetes 1.21, as in kubectl's) does not know, so its
// namespace transformer stamps deploy/default's namespace on them; the API
// server drops a namespace sent with a cluster-scoped object, so it is not
// compared.
var clusterScopedUnknownToKustomize = map[string]bool{
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding": true,
}

// objectsByKey decodes a YAML stream into objects keyed
// "apiVersion Kind namespace/name", normalised: the server configuration
// in the ConfigMap is compared as data, not as text with comments, and
// a namespace on a kind of clusterScopedUnknownToKustomize is dropped.
func objectsByKey(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range separator.Split(string(stream), -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if len(obj) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		if clusterScopedUnknownToKustomize[fmt.Sprintf("%v %v", obj["apiVersion"], obj["kind"])] {
			delete(meta, "namespace")
		}
		key := fmt.Sprintf("%v %v %v/%v", obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])
		if _, dup := out[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		if data, ok := obj["data"].(map[string]any); ok && obj["kind"] == "ConfigMap" {
			if text, ok := data["config.yaml"].(string); ok {
				var cfg any
				if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
					t.Fatalf("%s: config.yaml: %v", key, err)
				}
				data["config.yaml"] = cfg
			}
		}
		out[key] = obj
	}
	return out
}

func keys(m map[string]map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// sameObjects fails for each object that one side has and the other
// lacks, and for each that differs.
func sameObjects(t *testing.T, chartName string, got map[string]map[string]any, wantName string, want map[string]map[string]any) {
	t.Helper()
	if diff := cmp.Diff(keys(want), keys(got)); diff != "" {
		t.Errorf("%s renders other objects than %s (-%s +chart):\n%s", chartName, wantName, wantName, diff)
	}
	for _, k := range keys(want) {
		if g, ok := got[k]; ok {
			if diff := cmp.Diff(want[k], g); diff != "" {
				t.Errorf("%s differs from %s (-%s +chart):\n%s", k, wantName, wantName, diff)
			}
		}
	}
	if len(want) < 10 {
		t.Errorf("%s rendered only %d objects", wantName, len(want))
	}
}

// overlay renders deploy/default with the components named (directories
// of deploy/), as an overlay of a user's would.
func overlay(t *testing.T, components ...string) map[string]map[string]any {
	t.Helper()
	abs, err := filepath.Abs(repo + "/deploy")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, abs) // kustomize takes directories by relative path only
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("resources:\n- %s\ncomponents:\n", filepath.Join(rel, "default"))
	for _, c := range components {
		text += fmt.Sprintf("- %s\n", filepath.Join(rel, c))
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return renderKustomize(t, dir)
}

// TestChartDefaultIsDeployDefault: the chart with its default values and
// namespace.create is deploy/default with the deploy/managed-webhooks
// component (the server writes the entries), object by object; without
// namespace.create the same less the Namespace.
func TestChartDefaultIsDeployDefault(t *testing.T) {
	defaults, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ns := defaults["v1 Namespace <nil>/"+namespace]; ns != nil {
		t.Error("the default values render the release Namespace, which helm install needs before it applies anything")
	}
	got, err := renderChart(t, map[string]any{"namespace": map[string]any{"create": true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(defaults)+1 {
		t.Errorf("namespace.create renders %d objects, the defaults %d: it must add the Namespace alone", len(got), len(defaults))
	}
	sameObjects(t, "the chart", withoutConfigChecksum(t, got), "deploy/default+managed-webhooks", overlay(t, "managed-webhooks"))
}

// TestChartMonitoringIsDeployMonitoring: with the ServiceMonitor, the
// alerts and the dashboard on, the chart is deploy/default with the
// deploy/monitoring component (and managed-webhooks), as an overlay that
// opts in renders it.
func TestChartMonitoringIsDeployMonitoring(t *testing.T) {
	got, err := renderChart(t, map[string]any{"namespace": map[string]any{"create": true}, "monitoring": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true},
		"prometheusRule": map[string]any{"enabled": true},
		"dashboard":      map[string]any{"enabled": true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sameObjects(t, "the chart with monitoring", withoutConfigChecksum(t, got), "deploy/default+monitoring+managed-webhooks", overlay(t, "managed-webhooks", "monitoring"))
}

// configValues turns a server configuration of testdata/ into chart
// values: the chart's config keeps deploy/default's; defaultMode, webhooks
// and exemptions come from the file.
func configValues(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	for _, k := range []string{"defaultMode", "webhooks", "exemptions"} {
		if v, ok := cfg[k]; ok {
			values[k] = v
		}
	}
	return values
}

// readConfig reads a server configuration of testdata/ as data.
func readConfig(t *testing.T, path string) any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// auditValues are values an adopter rolling out carefully sets: everything
// audited but secret-scope (Warn), exemptions by namespace, label, user,
// group and service account (testdata/audit-config.yaml), an existing
// ClusterIssuer, two replicas and a pinned image.
func auditValues(t *testing.T) map[string]any {
	t.Helper()
	values := configValues(t, "testdata/audit-config.yaml")
	values["certManager"] = map[string]any{"issuer": map[string]any{"kind": "ClusterIssuer", "name": "corp-ca", "group": "cert-manager.io"}}
	values["replicas"] = 2
	values["image"] = map[string]any{"digest": "sha256:" + strings.Repeat("ab", 32)}
	return values
}

// TestChartLint: Helm's linter (chart metadata, the schema, the templates
// rendered and checked as Kubernetes YAML) finds nothing above INFO, with
// the default values, with exemptions and with auditValues.
func TestChartLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"default values": nil, "exemptions": configValues(t, "testdata/exemptions-config.yaml"), "audit": auditValues(t),
	} {
		linter := lint.All(chartDir, values, namespace, false)
		for _, m := range linter.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: %s", name, m)
			}
		}
	}
}

// TestChartNonDefault: auditValues render what they say: the configuration
// is testdata/audit-config.yaml (modes and exemptions; the entries it
// renders are TestChartEntriesAreManifests'), the serving certificate comes
// from the ClusterIssuer and no self-signed chain is made, two replicas of
// the pinned image.
func TestChartNonDefault(t *testing.T) {
	got, err := renderChart(t, auditValues(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := got["v1 ConfigMap gatehouse-system/gatehouse-config"]["data"].(map[string]any)["config.yaml"]
	if diff := cmp.Diff(readConfig(t, "testdata/audit-config.yaml"), cfg); diff != "" {
		t.Errorf("config.yaml (-testdata/audit-config.yaml +chart):\n%s", diff)
	}
	for _, k := range []string{"cert-manager.io/v1 Issuer gatehouse-system/gatehouse-selfsigned", "cert-manager.io/v1 Issuer gatehouse-system/gatehouse-ca", "cert-manager.io/v1 Certificate gatehouse-system/gatehouse-ca"} {
		if got[k] != nil {
			t.Errorf("%s rendered although an existing issuer is given", k)
		}
	}
	serving := got["cert-manager.io/v1 Certificate gatehouse-system/gatehouse-serving"]
	if diff := cmp.Diff(map[string]any{"kind": "ClusterIssuer", "name": "corp-ca", "group": "cert-manager.io"}, serving["spec"].(map[string]any)["issuerRef"]); diff != "" {
		t.Errorf("serving certificate issuerRef (-want +got):\n%s", diff)
	}
	spec := got["apps/v1 Deployment gatehouse-system/gatehouse"]["spec"].(map[string]any)
	if spec["replicas"] != float64(2) {
		t.Errorf("replicas %v, want 2", spec["replicas"])
	}
	if img := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "ghcr.io/gatehouse-dev/gatehouse@sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("image %v, want the digest", img)
	}
}

// checkExemptionCondition evaluates the entry's gatehouse-not-exempt
// matchCondition with CEL as the API server declares it (request, object,
// oldObject, dynamically typed; absent fields absent): the exempt user,
// service accounts and groups are left out, anyone else is sent.
func checkExemptionCondition(t *testing.T, entry map[string]any) {
	t.Helper()
	var expr string
	for _, c := range entry["matchConditions"].([]any) {
		if c.(map[string]any)["name"] == "gatehouse-not-exempt" {
			expr = c.(map[string]any)["expression"].(string)
		}
	}
	if expr == "" {
		t.Errorf("%s: no gatehouse-not-exempt matchCondition", entry["name"])
		return
	}
	env, err := cel.NewEnv(cel.Variable("request", cel.DynType), cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %s does not compile: %v", entry["name"], expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		userInfo map[string]any
		sent     bool
	}{
		{map[string]any{"username": "alice"}, false},
		{map[string]any{"username": "system:serviceaccount:ci:deployer", "groups": []any{"system:serviceaccounts", "system:serviceaccounts:ci"}}, false},
		{map[string]any{"username": "system:serviceaccount:argo:runner", "groups": []any{"system:serviceaccounts", "system:serviceaccounts:argo"}}, false},
		{map[string]any{"username": "carol", "groups": []any{"ops"}}, false},
		{map[string]any{"username": "bob"}, true},
		{map[string]any{"username": "system:serviceaccount:ci:other", "groups": []any{"system:serviceaccounts:ci"}}, true},
	} {
		out, _, err := prg.Eval(map[string]any{"request": map[string]any{"userInfo": tc.userInfo}, "object": nil, "oldObject": nil})
		if err != nil {
			t.Errorf("%s: %v for %v (an error calls a Fail entry's webhook anyway)", entry["name"], err, tc.userInfo)
			continue
		}
		if out.Value() != tc.sent {
			t.Errorf("%s: %v is sent=%v, want %v (%s)", entry["name"], tc.userInfo, out.Value(), tc.sent, expr)
		}
	}
}

// TestChartSchemaRefuses: values.schema.json refuses what the server would:
// a mutating webhook in Warn, a webhook that does not exist, an unknown
// mode, a malformed exempt service account.
func TestChartSchemaRefuses(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"mutating in Warn":                           {"webhooks": map[string]any{"harness-proxy": map[string]any{"mode": "Warn"}}},
		"unknown webhook":                            {"webhooks": map[string]any{"secret-scopes": map[string]any{"mode": "Audit"}}},
		"unknown mode":                               {"defaultMode": "Dryrun"},
		"service account":                            {"exemptions": map[string]any{"serviceAccounts": []any{"deployer"}}},
		"label without key":                          {"exemptions": map[string]any{"namespaceLabels": []any{map[string]any{"operator": "Exists"}}}},
		"In without values":                          {"exemptions": map[string]any{"namespaceLabels": []any{map[string]any{"key": "k", "operator": "In"}}}},
		"a misspelled value":                         {"replica": 2},
		"Warn, the mutating webhooks without a mode": {"defaultMode": "Warn", "webhooks": map[string]any{"harness-proxy": map[string]any{"mode": "Audit"}}},
		"a report API gatehouse does not write":      {"audit": map[string]any{"reports": map[string]any{"apis": []any{"reports.x-k8s.io/v1beta2"}}}},
		"a report API twice":                         {"audit": map[string]any{"reports": map[string]any{"apis": []any{"openreports.io/v1alpha1", "openreports.io/v1alpha1"}}}},
		"config.audit.reports beside audit.reports":  {"config": map[string]any{"audit": map[string]any{"reports": map[string]any{"apis": []any{"openreports.io/v1alpha1"}}}}},
	} {
		if _, err := renderChart(t, values); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s: %v, want a schema error", name, err)
		}
	}
}

// TestChartCopiesAreCurrent: the files the chart carries from deploy/ are
// byte for byte what deploy/ has (make manifests and make chart-files
// write them).
func TestChartCopiesAreCurrent(t *testing.T) {
	for copyPath, source := range map[string]string{
		"files/prometheusrule.yaml":                           "deploy/monitoring/prometheusrule.yaml",
		"files/dashboard.json":                                "deploy/monitoring/dashboard.json",
		"crds/vshn.net_operatorharnesses.yaml":                "deploy/crds/vshn.net_operatorharnesses.yaml",
		"files/crds/wgpolicyk8s.io_clusterpolicyreports.yaml": "deploy/policyreport-crds/wgpolicyk8s.io_clusterpolicyreports.yaml",
		"files/crds/wgpolicyk8s.io_policyreports.yaml":        "deploy/policyreport-crds/wgpolicyk8s.io_policyreports.yaml",
		"files/crds/openreports.io_clusterreports.yaml":       "deploy/openreports-crds/openreports.io_clusterreports.yaml",
		"files/crds/openreports.io_reports.yaml":              "deploy/openreports-crds/openreports.io_reports.yaml",
	} {
		a, err := os.ReadFile(filepath.Join(chartDir, copyPath))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(repo, source))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("charts/gatehouse/%s is not a copy of %s: run make chart-files", copyPath, source)
		}
	}
}

// TestChartRollsPodsWhenTheConfigurationChanges: the pod template carries
// the sha256 of the rendered ConfigMap, so a helm upgrade that changes the
// server configuration (Warn to Enforce, an exemption, any config key)
// changes the template and rolls the pods, and one that changes nothing the
// server reads (replicas) does not; podAnnotations stay beside it.
func TestChartRollsPodsWhenTheConfigurationChanges(t *testing.T) {
	files, err := renderFiles(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	cm := files["gatehouse/templates/configmap.yaml"]
	if cm == "" {
		t.Fatal("no templates/configmap.yaml rendered")
	}
	objs, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	enforce := configChecksum(t, objs)
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(cm))); enforce != want {
		t.Errorf("checksum/config %s, want the sha256 of the rendered ConfigMap, %s", enforce, want)
	}
	warn := auditValues(t) // the same release in Warn and Audit
	for name, tc := range map[string]struct {
		values map[string]any
		rolls  bool
	}{
		"Warn and Audit":      {warn, true},
		"an exempt namespace": {map[string]any{"exemptions": map[string]any{"namespaces": []any{"kube-system", "kube-node-lease", "legacy"}}}, true},
		"the audit interval":  {map[string]any{"config": map[string]any{"audit": map[string]any{"interval": "5m"}}}, true},
		"replicas":            {map[string]any{"replicas": 2}, false},
		"a pod annotation":    {map[string]any{"podAnnotations": map[string]any{"example.org/team": "platform"}}, false},
	} {
		objs, err := renderChart(t, tc.values)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rolls := configChecksum(t, objs) != enforce; rolls != tc.rolls {
			t.Errorf("%s: checksum/config changed %v, want %v", name, rolls, tc.rolls)
		}
		if name == "a pod annotation" {
			annotations := objs[deploymentKey]["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
			if annotations["example.org/team"] != "platform" {
				t.Errorf("podAnnotations lost beside checksum/config: %v", annotations)
			}
		}
	}
}

// TestChartAuditOff: with audit.enabled false the chart renders nothing of
// the background audit (Deployment, Service, ServiceAccount, ClusterRole and
// the bindings, its ServiceMonitor) and leaves every other object as the
// default render has it: the webhook replicas never audit either way.
func TestChartAuditOff(t *testing.T) {
	monitoring := map[string]any{"serviceMonitor": map[string]any{"enabled": true}}
	on, err := renderChart(t, map[string]any{"monitoring": monitoring})
	if err != nil {
		t.Fatal(err)
	}
	off, err := renderChart(t, map[string]any{"monitoring": monitoring, "audit": map[string]any{"enabled": false}})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for k := range on {
		if _, ok := off[k]; !ok {
			gone = append(gone, k)
		} else if diff := cmp.Diff(on[k], off[k]); diff != "" {
			t.Errorf("%s changes with the audit off:\n%s", k, diff)
		}
	}
	sort.Strings(gone)
	want := []string{
		"apps/v1 Deployment gatehouse-system/gatehouse-audit",
		"monitoring.coreos.com/v1 ServiceMonitor gatehouse-system/gatehouse-audit",
		"rbac.authorization.k8s.io/v1 ClusterRole <nil>/gatehouse-audit",
		"rbac.authorization.k8s.io/v1 ClusterRoleBinding <nil>/gatehouse-audit",
		"rbac.authorization.k8s.io/v1 RoleBinding gatehouse-system/gatehouse-audit-leader-election",
		"v1 Service gatehouse-system/gatehouse-audit",
		"v1 ServiceAccount gatehouse-system/gatehouse-audit",
	}
	if diff := cmp.Diff(want, gone); diff != "" {
		t.Errorf("objects left out with the audit off (-want +got):\n%s", diff)
	}
}

// TestChartReportAPIs: audit.reports.apis reaches the server's
// configuration as audit.reports.apis (beside config.audit's other keys),
// and audit.reports.installCRDs renders exactly the CRDs of the components
// deploy/policyreport-crds and deploy/openreports-crds, each on its own;
// the default renders neither and leaves the configuration's default.
func TestChartReportAPIs(t *testing.T) {
	crdsOf := func(objs map[string]map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for k, obj := range objs {
			if obj["kind"] == "CustomResourceDefinition" && (strings.HasSuffix(k, "reports.openreports.io") || strings.HasSuffix(k, "reports.wgpolicyk8s.io")) {
				out[k] = obj
			}
		}
		return out
	}
	defaults, err := renderChart(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := crdsOf(defaults); len(got) != 0 {
		t.Errorf("the default values render report CRDs: %v", keys(got))
	}
	both := []any{"wgpolicyk8s.io/v1alpha2", "openreports.io/v1alpha1"}
	for name, tc := range map[string]struct {
		crds       map[string]any
		components []string
	}{
		"PolicyReport CRDs": {map[string]any{"policyReports": true}, []string{"policyreport-crds"}},
		"OpenReports CRDs":  {map[string]any{"openReports": true}, []string{"openreports-crds"}},
		"both":              {map[string]any{"policyReports": true, "openReports": true}, []string{"policyreport-crds", "openreports-crds"}},
	} {
		got, err := renderChart(t, map[string]any{
			"config": map[string]any{"audit": map[string]any{"interval": "30m"}},
			"audit":  map[string]any{"reports": map[string]any{"apis": both, "installCRDs": tc.crds}}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := crdsOf(overlay(t, append([]string{"managed-webhooks"}, tc.components...)...))
		if len(want) != 2*len(tc.components) {
			t.Fatalf("%s: deploy/%v holds %d report CRDs", name, tc.components, len(want))
		}
		if diff := cmp.Diff(want, crdsOf(got)); diff != "" {
			t.Errorf("%s: the chart's report CRDs differ from deploy/%v (-deploy +chart):\n%s", name, tc.components, diff)
		}
		cfg := got["v1 ConfigMap gatehouse-system/gatehouse-config"]["data"].(map[string]any)["config.yaml"]
		audit, _ := cfg.(map[string]any)["audit"].(map[string]any)
		if diff := cmp.Diff(map[string]any{"interval": "30m", "reports": map[string]any{"apis": both}}, audit); diff != "" {
			t.Errorf("%s: the configuration's audit (-want +chart):\n%s", name, diff)
		}
	}
}
