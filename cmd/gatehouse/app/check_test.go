package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"
)

// run executes the command line and returns exit code, stdout and stderr.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

type checkOutput struct {
	Results []struct {
		Object    ObjectRef    `json:"object"`
		Webhook   string       `json:"webhook"`
		Operation string       `json:"operation"`
		Allowed   bool         `json:"allowed"`
		Findings  []FindingOut `json:"findings"`
		Warnings  []string     `json:"warnings"`
		Patch     []any        `json:"patch"`
		Error     string       `json:"error"`
	} `json:"results"`
}

// TestCheckExamples pins what `gatehouse check -o json` says about every
// example in deploy/examples: verdict, codes and field paths.
func TestCheckExamples(t *testing.T) {
	code, stdout, stderr := run(t, "", "check", "-f", "../../../deploy/examples", "-o", "json")
	if code != exitDenied {
		t.Fatalf("exit %d (stderr %q), want 1: the examples include denied objects", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	var got []string
	labelled := 0
	for _, r := range out.Results {
		if r.Operation != "CREATE" || r.Findings == nil || r.Warnings == nil || r.Patch == nil {
			t.Errorf("%s/%s: malformed result %+v", r.Object.Name, r.Webhook, r)
		}
		// harness-labels sees every namespaced object (check's user is no
		// service account, so no cluster-scoped one); listed below only
		// where it changed or denied one.
		if r.Webhook == "harness-labels" {
			labelled++
			if r.Allowed && len(r.Patch) == 0 {
				continue
			}
		}
		line := r.Object.Kind + " " + r.Object.Name + " " + r.Webhook + " "
		if r.Allowed {
			line += "allowed"
		} else {
			line += "denied"
		}
		for _, f := range r.Findings {
			line += " " + f.Code + "@" + f.Field
		}
		if len(r.Patch) > 0 {
			line += fmt.Sprintf(" patch(%d)", len(r.Patch))
		}
		got = append(got, line)
	}
	want := []string{
		"DependencyGroup mariadb dependency-group allowed",
		"DependencyGroup strimzi dependency-group allowed",
		"DependencyGroup mariadb-fork dependency-group denied DependencyGroupCRDClaimed@spec.crds[0].name",
		"Deployment legacy-root pod-security denied RunAsRootConflict@spec.template.spec.securityContext.runAsUser",
		"HdfsCluster prod secret-scope allowed",
		"HdfsCluster prod service-account allowed",
		"HdfsCluster prod-widened secret-scope denied ScopeNameHasDelimiter@spec.clusterConfig.authentication.tls.scope.services[0]",
		"HdfsCluster prod-widened service-account denied ServiceAccountOverridden@spec.dataNode.roleGroups.default.podOverrides.spec.serviceAccountName",
		"OperatorHarness mariadb-operator harness allowed",
		"OperatorHarness greedy-operator harness denied HarnessGrantDangerous@spec.clusterRoles.rules[0]",
		"ConfigMap unbounded-component-overrides component-overrides denied OverrideDirective@data[storage.yaml].overrides[0].patch.spec.template.spec.containers[0].$patch OverridePathProtected@data[storage.yaml].overrides[0].patch.spec.template.spec.hostNetwork OverrideNull@data[storage.yaml].overrides[0].patch.spec.template.spec.priorityClassName",
		"ConfigMap unbounded-component-overrides component-overrides allowed",
		"Pod web harness-proxy allowed",
		"Pod web secret-scope allowed",
		"Pod web-broken-scope harness-proxy allowed",
		"Pod web-broken-scope secret-scope denied ScopeEntryEmpty@spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope] ScopeValueMissing@spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]",
		"Pod api pod-security-defaults allowed patch(6)",
		"Pod api harness-proxy allowed",
		"Pod api pod-security allowed",
		"Pod legacy-root pod-security-defaults allowed patch(6)",
		"Pod legacy-root harness-proxy allowed",
		"Pod legacy-root pod-security denied RunAsRootConflict@spec.securityContext.runAsUser",
		"Pod operator harness-proxy allowed patch(9)",
		"Pod metrics-exporter harness-proxy allowed",
		"ConfigMap mariadb-settings harness-labels allowed patch(1)",
		"ConfigMap mariadb-settings-elsewhere harness-labels denied ScopeLabelMismatch@metadata.labels[requires.helmetica.io/operator-mariadb]",
		"PersistentVolumeClaim gateway-tls secret-scope allowed",
		"PersistentVolumeClaim gateway-tls-broken secret-scope denied SecretJitterFactorInvalid@metadata.annotations[secrets.kubedoop.dev/autoTlsCertJitterFactor] ScopeValueMissing@metadata.annotations[secrets.kubedoop.dev/scope]",
		"StatefulSet prod-namenode-default secret-scope allowed",
		"StatefulSet prod-namenode-default service-account allowed",
		"StatefulSet prod-datanode-default secret-scope denied ScopeValueHasDelimiter@spec.volumeClaimTemplates[0].metadata.annotations[secrets.kubedoop.dev/scope]",
		"StatefulSet prod-datanode-default service-account denied ServiceAccountMismatch@spec.template.spec.serviceAccountName",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("check results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	docs, err := readInputs([]string{"../../../deploy/examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	namespaced := 0
	for _, d := range docs {
		if objectRef(d.Object).Namespace != "" && objectRef(d.Object).Kind != "Namespace" {
			namespaced++
		}
	}
	if labelled != namespaced || namespaced == 0 {
		t.Errorf("harness-labels decided %d objects, want every namespaced one of the %d", labelled, namespaced)
	}
}

func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	allowed := write("allowed.yaml", "# leading comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"+
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: b\n  annotations: {secrets.kubedoop.dev/class: tls}\n")
	denied := write("denied.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c","annotations":{"secrets.kubedoop.dev/scope":"node"}}}]}`)
	badYAML := write("bad.yaml", "apiVersion: v1\nkind: Pod\n---\nkey: [unclosed\n")
	noKind := write("nokind.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nmetadata: {name: b}\n")
	badItem := write("baditem.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n- 7\n")
	inTeamA := write("team-a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team-a}\n")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"allowed", "", []string{"check", "-f", allowed}, exitOK, ""},
		{"denied inside a List", "", []string{"check", "-f", denied}, exitDenied, ""},
		{"stdin", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: s, annotations: {secrets.kubedoop.dev/scope: ','}}\n", []string{"check", "-f", "-"}, exitDenied, ""},
		{"unparsable document", "", []string{"check", "-f", badYAML}, exitUsage, "bad.yaml:4: document 2: not valid YAML or JSON: did not find expected ',' or ']'"},
		{"document without kind", "", []string{"check", "-f", noKind}, exitUsage, "nokind.yaml:5: document 2: apiVersion and kind must be set"},
		{"List item not an object", "", []string{"check", "-f", badItem}, exitUsage, "baditem.yaml:6: document 1, item 2: not an object"},
		{"missing file", "", []string{"check", "-f", filepath.Join(dir, "nope.yaml")}, exitUsage, "nope.yaml: no such file or directory"},
		{"a directory without manifests", "", []string{"check", "-f", empty}, exitUsage, "empty: a directory without .yaml, .yml or .json files"},
		{"no -f", "", []string{"check"}, exitUsage, "at least one PATH"},
		{"bad -o", "", []string{"check", "-f", allowed, "-o", "yaml"}, exitUsage, `-o: Unsupported value: "yaml": supported values: "text", "json", "junit", "sarif"`},
		{"bad --layout", "", []string{"check", "-f", allowed, "--layout", "mixed"}, exitUsage, `--layout: Unsupported value: "mixed": supported values: "separate", "combined", "in-process"`},
		{"bad --namespace-labels", "", []string{"check", "-f", allowed, "--namespace-labels", "team-a=a b=c"}, exitUsage, `"a b" is not a label key`},
		{"comma-separated -f", "", []string{"check", "-f", allowed + "," + denied}, exitDenied, ""},
		{"files as arguments", "", []string{"check", allowed, denied}, exitDenied, ""},
		{"-f and arguments", "", []string{"check", "-f", denied, allowed}, exitDenied, ""},
		{"undecided: the namespace was not given", "", []string{"check", inTeamA}, exitUndecided, ""},
		{"undecided, given the namespace: allowed", "", []string{"check", inTeamA, "--namespace-labels", "team-a"}, exitOK, ""},
		{"denied wins over undecided", "", []string{"check", inTeamA, denied}, exitDenied, ""},
		{"bad --state", "", []string{"check", "-f", allowed, "--state", badYAML}, exitUsage, "--state: "},
		{"unknown flag", "", []string{"check", "--nope"}, exitUsage, "unknown flag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.stdin, tc.args...)
			if code != tc.wantCode || !strings.Contains(stderr, tc.wantStderr) {
				t.Fatalf("exit %d stderr %q; want exit %d and stderr containing %q", code, stderr, tc.wantCode, tc.wantStderr)
			}
		})
	}
}

func TestCheckTextNamesEveryFinding(t *testing.T) {
	code, stdout, _ := run(t, "", "check", "-f", "../../../deploy/examples/pod-denied.yaml", "--namespace-labels", "team-a")
	if code != exitDenied {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"DENIED    Pod team-a/web-broken-scope",
		"ScopeEntryEmpty", "ScopeValueMissing",
		"spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]",
		"1 object, 3 results: 1 denied, 0 undecided, 0 warned, 0 allowed, 0 skipped",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestCheckConfigSwitchesWebhooksOff proves that check honours the server
// configuration: with secret-scope and the harness webhooks off, only
// service-account decides.
func TestCheckConfigSwitchesWebhooksOff(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: gatehouse.dev/v1alpha1\nkind: ServerConfig\nwebhooks:\n  secret-scope: {enabled: false}\n  harness-proxy: {enabled: false}\n  harness-labels: {enabled: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A product's StatefulSet: secret-scope (off) and service-account (on)
	// both act on it.
	code, stdout, stderr := run(t, "", "check", "--config", cfg, "-o", "json", "-f", "../../../deploy/examples/statefulset-allowed.yaml", "--namespace-labels", "team-a")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	var hooks []string
	for _, r := range out.Results {
		hooks = append(hooks, r.Webhook)
	}
	sort.Strings(hooks)
	if strings.Join(hooks, ",") != "service-account" {
		t.Fatalf("webhooks that decided: %v", hooks)
	}
}

// TestCheckNamespaceOptIn: the pod security webhooks see a pod only when its
// namespace carries the opt-in label, known from --state, from
// --namespace-labels or from a Namespace admitted earlier in the same run.
// Without the namespace, every webhook whose selection reads its labels is
// undecided (exit 3), naming the Namespace: never allowed.
func TestCheckNamespaceOptIn(t *testing.T) {
	dir := t.TempDir()
	ns := filepath.Join(dir, "ns.yaml")
	pod := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(ns, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: secure\n  labels: {gatehouse.dev/security-defaults: enabled}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pod, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: secure}\nspec:\n  containers: [{name: c, image: i}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	webhooksFor := func(wantCode int, args ...string) string {
		code, stdout, stderr := run(t, "", append([]string{"check", "-o", "json"}, args...)...)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, wantCode, stderr)
		}
		var out struct {
			Results []CheckResult `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		var hooks []string
		for _, r := range out.Results {
			if r.Object.Kind != "Pod" {
				continue
			}
			h := r.Webhook
			if r.Outcome != OutcomeAllowed {
				h += "=" + r.Outcome + " " + strings.Join(r.Missing, ",")
				if r.Allowed {
					t.Errorf("%s: outcome %s, and allowed", r.Webhook, r.Outcome)
				}
			}
			hooks = append(hooks, h)
		}
		return strings.Join(hooks, ",")
	}
	const notGiven = "pod-security-defaults=undecided Namespace secure,harness-proxy=undecided Namespace secure," +
		"harness-labels=undecided Namespace secure,pod-security=undecided Namespace secure"
	if got := webhooksFor(exitUndecided, "-f", pod); got != notGiven {
		t.Errorf("a namespace not given:\n got  %s\n want %s", got, notGiven)
	}
	if got := webhooksFor(exitOK, "-f", pod, "--namespace-labels", "secure"); got != "harness-proxy,harness-labels" {
		t.Errorf("a namespace without the label: %s", got)
	}
	const optedIn = "pod-security-defaults,harness-proxy,harness-labels,pod-security"
	if got := webhooksFor(exitOK, "-f", pod, "--namespace-labels", "secure=gatehouse.dev/security-defaults=enabled,other=x"); got != optedIn {
		t.Errorf("opted in by --namespace-labels: %s", got)
	}
	if got := webhooksFor(exitOK, "-f", pod, "--state", ns); got != optedIn {
		t.Errorf("opted in by --state: %s", got)
	}
	if got := webhooksFor(exitOK, "-f", ns, "-f", pod); got != optedIn {
		t.Errorf("opted in by an earlier document: %s", got)
	}
}

// TestCheckOverrides: the override examples, alone and against the live
// workloads given as state.
func TestCheckOverrides(t *testing.T) {
	const examples = "../../../deploy/examples/"
	code, stdout, _ := run(t, "", "check", "-f", examples+"overrides-denied.yaml", "--namespace-labels", "unbounded-system")
	if code != exitDenied {
		t.Fatalf("exit %d", code)
	}
	for _, path := range []string{
		"data[storage.yaml].overrides[0].patch.spec.template.spec.hostNetwork",
		"data[storage.yaml].overrides[0].patch.spec.template.spec.containers[0].$patch",
		"data[storage.yaml].overrides[0].patch.spec.template.spec.priorityClassName",
	} {
		if !strings.Contains(stdout, path) {
			t.Errorf("the denial does not list %s:\n%s", path, stdout)
		}
	}
	skips := func(args ...string) int {
		code, stdout, stderr := run(t, "", append([]string{"check", "-o", "json", "-f", examples + "overrides-valid.yaml", "--namespace-labels", "unbounded-system"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return strings.Count(stdout, "OverrideResolutionSkipped")
	}
	if n := skips(); n != 2 {
		t.Errorf("without state: %d resolution warnings, want one per override (2)", n)
	}
	if n := skips("--state", examples+"00-operator-workloads.yaml"); n != 0 {
		t.Errorf("with the live workloads as state: %d resolution warnings, want 0", n)
	}
}

// TestCheckStateHarness: with an OperatorHarness and namespaces given as
// --state, check shows the harness-proxy patch for the operator's pod and the
// scope label harness-labels copies onto an object in a scoped namespace.
func TestCheckStateHarness(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yaml")
	objects := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(state, []byte(`apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: mariadb}
spec:
  scopeToLabel: requires.example/mariadb
  operator: {namespace: operators, serviceAccounts: [operator], injectProxyConfiguration: true}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant, labels: {requires.example/mariadb: tenant}}
---
apiVersion: v1
kind: Namespace
metadata: {name: operators}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(objects, []byte(`apiVersion: v1
kind: Pod
metadata: {name: op, namespace: operators}
spec:
  serviceAccountName: operator
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: operators}
spec:
  serviceAccountName: other
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: tenant}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "check", "-o", "json", "-f", objects, "--state", state)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	patches := map[string]string{}
	for _, r := range out.Results {
		if len(r.Patch) > 0 {
			patches[r.Object.Name+" "+r.Webhook] = string(mustMarshal(t, r.Patch))
		}
	}
	if p := patches["op harness-proxy"]; !strings.Contains(p, `"path":"/spec/automountServiceAccountToken","value":false`) ||
		!strings.Contains(p, `"name":"proxy-api-access"`) || !strings.Contains(p, `"name":"KUBERNETES_SERVICE_HOST","value":"proxy-service.proxy-namespace.svc"`) {
		t.Errorf("harness-proxy patch for the operator's pod: %s", p)
	}
	if p := patches["settings harness-labels"]; !strings.Contains(p, `"requires.example/mariadb":"tenant"`) {
		t.Errorf("harness-labels patch for the ConfigMap: %s", p)
	}
	if len(patches) != 2 {
		t.Errorf("patches %v, want exactly the two above (the other account's pod untouched)", patches)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckStateHarnessBindings: check resolves the roles a harness binds
// from --state as the server does from its caches: a binding to the
// cluster-admin given there is denied at the binding, an aggregated
// ClusterRole is read with the roles it aggregates, and a role that --state
// does not hold is not known to be absent: the harness is undecided,
// naming the role (the server would deny HarnessRoleNotFound only for a
// role the cluster lacks).
func TestCheckStateHarnessBindings(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yaml")
	objects := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(state, []byte(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cluster-admin}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: tenant-admin}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {example.com/aggregate-to-tenant-admin: "true"}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: tenant-exec, labels: {example.com/aggregate-to-tenant-admin: "true"}}
rules: [{apiGroups: [""], resources: [pods/exec], verbs: [create]}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	harness := func(name, binding string) string {
		return fmt.Sprintf(`apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: %[1]s}
spec:
  scopeToLabel: requires.example/%[1]s
  operator: {namespace: %[1]s, serviceAccounts: [operator]}
  clusterRoleBindings: [{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[2]s}]
---
`, name, binding)
	}
	if err := os.WriteFile(objects, []byte(harness("admin", "cluster-admin")+harness("aggregated", "tenant-admin")+harness("missing", "view")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "check", "-o", "json", "-f", objects, "--state", state,
		"--namespace-labels", "admin", "--namespace-labels", "aggregated", "--namespace-labels", "missing")
	if code != exitDenied {
		t.Fatalf("exit %d, want %d: %s", code, exitDenied, stderr)
	}
	var out struct {
		Results []CheckResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Results {
		if r.Webhook != "harness" {
			continue
		}
		codes := []string{r.Outcome}
		for _, f := range r.Findings {
			codes = append(codes, f.Code+"@"+f.Field)
		}
		got[r.Object.Name] = strings.Join(append(codes, r.Missing...), " ")
	}
	want := map[string]string{
		"admin":      "denied HarnessGrantDangerous@spec.clusterRoleBindings[0]",
		"aggregated": "denied HarnessGrantDangerous@spec.clusterRoleBindings[0]",
		"missing":    "undecided ClusterRole view",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("harness findings %v, want %v", got, want)
	}
}

// TestCheckStateSources: helmetica's namespaced sources given as --state
// are known by namespace/name, so checking one of them again (a re-apply)
// finds no clash with itself and no warning, while the same name in another
// namespace clashes, and a source being deleted claims nothing.
func TestCheckStateSources(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.yaml")
	source := func(namespace, name, extra string) string {
		return `apiVersion: helmetica.io/v1
kind: CustomResourceDefinitionSource
metadata: {name: ` + name + `, namespace: ` + namespace + extra + `}
spec:
  reference: {kind: OCIRepository, name: mariadb-crds-v26}
  provides: [{dependencyGroup: {name: mariadb}}]
`
	}
	group := `apiVersion: helmetica.io/v1
kind: DependencyGroup
metadata: {name: mariadb}
spec: {crds: [{name: mariadbs.k8s.mariadb.com}]}
`
	if err := os.WriteFile(state, []byte(source("default", "v26.mariadb-crds", "")+"---\n"+group+"---\n"+
		source("old", "v25.mariadb-crds", ", deletionTimestamp: '2026-01-01T00:00:00Z'")), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(doc string) checkOutput {
		t.Helper()
		objects := filepath.Join(dir, "objects.yaml")
		if err := os.WriteFile(objects, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stdout, stderr := run(t, "", "check", "-o", "json", "-f", objects, "--state", state)
		var out checkOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		return out
	}
	for _, r := range check(source("default", "v26.mariadb-crds", "")).Results {
		if r.Webhook == "crd-source" && (!r.Allowed || len(r.Findings) > 0 || len(r.Warnings) > 0) {
			t.Errorf("the source itself: allowed=%v findings=%v warnings=%q", r.Allowed, r.Findings, r.Warnings)
		}
	}
	denied := false
	for _, r := range check(source("team-b", "v26.mariadb-crds", "")).Results {
		if r.Webhook == "crd-source" {
			denied = !r.Allowed && len(r.Findings) == 1 && r.Findings[0].Code == "CRDSourceProvidesClaimed" &&
				r.Findings[0].Field == "spec.provides[0].dependencyGroup.name"
		}
	}
	if !denied {
		t.Error("the same name in another namespace was not denied as a second provider")
	}
}

// TestUndecidedResultsClaimNoAnswer: in JSON an undecided result carries no
// "allowed" (a reader acting on it would take false for a denial, true for
// an admission), a decided one does, in the struct's field order.
func TestUndecidedResultsClaimNoAnswer(t *testing.T) {
	undecided, err := json.Marshal(CheckResult{Webhook: "pod-security", Outcome: OutcomeUndecided, Missing: []string{"Namespace team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(undecided), `"allowed"`) {
		t.Errorf("undecided result: %s", undecided)
	}
	decided, err := json.Marshal(CheckResult{Webhook: "pod-security", Outcome: OutcomeDenied})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(decided), `"outcome":"denied","allowed":false,"findings"`) {
		t.Errorf("denied result: %s", decided)
	}
	var back CheckResult
	if err := json.Unmarshal(decided, &back); err != nil || back.Outcome != OutcomeDenied || back.Allowed {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

// TestResultJSONHoldsEveryField: MarshalJSON spells CheckResult's fields out
// again (to make "allowed" optional in place); every field of the struct
// must come out, in the struct's order, so that a field added there cannot
// go missing from -o json.
func TestResultJSONHoldsEveryField(t *testing.T) {
	var want []string
	rt := reflect.TypeFor[CheckResult]()
	for i := range rt.NumField() {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			want = append(want, name)
		}
	}
	full := CheckResult{Object: ObjectRef{Kind: "Pod"}, Webhook: "w", Operation: "CREATE", Outcome: OutcomeDenied,
		Findings: []FindingOut{{}}, Warnings: []string{"x"}, Patch: []gomodulesjsonpatch.JsonPatchOperation{{Operation: "add"}},
		Error: "e", Mode: "Enforce", Exempt: true, Withheld: []string{"op"}, Missing: []string{"Namespace a"}, Excused: []ExcusedOut{{}}}
	raw, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var got []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, key.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("-o json writes %v, CheckResult has %v", got, want)
	}
}
