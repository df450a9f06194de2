package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// harnessState is an OperatorHarness for the account "operator" in the
// namespace "operators", as check --state.
const harnessState = `apiVersion: vshn.net/v1
kind: OperatorHarness
metadata: {name: mariadb}
spec:
  scopeToLabel: requires.example/mariadb
  operator: {namespace: operators, serviceAccounts: [operator], injectProxyConfiguration: true}
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type checkJSON struct {
	Results []struct {
		Object  ObjectRef `json:"object"`
		Webhook string    `json:"webhook"`
		Allowed bool      `json:"allowed"`
		Patch   []any     `json:"patch"`
		Error   string    `json:"error"`
	} `json:"results"`
	Objects []ObjectOut `json:"objects"`
}

func checkJSONOf(t *testing.T, wantCode int, args ...string) checkJSON {
	t.Helper()
	code, stdout, stderr := run(t, "", append([]string{"check", "-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("exit %d, want %d: %s", code, wantCode, stderr)
	}
	var out checkJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return out
}

// TestCheckDeprecatedServiceAccountIsInjected: the API server copies a Pod's
// deprecated spec.serviceAccount into serviceAccountName before admission,
// so the server's harness-proxy injects the proxy into a pod that states
// only serviceAccount. check does the same, with the same patch as for the
// pod that states serviceAccountName.
func TestCheckDeprecatedServiceAccountIsInjected(t *testing.T) {
	pod := func(name, field string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: operators}\nspec:\n  " + field +
			": operator\n  containers: [{name: c, image: i}]\n"
	}
	dir := writeFiles(t, map[string]string{
		"state.yaml":      harnessState,
		"deprecated.yaml": pod("op", "serviceAccount"),
		"current.yaml":    pod("op", "serviceAccountName"),
	})
	patchOf := func(file string) string {
		out := checkJSONOf(t, exitOK, "-f", filepath.Join(dir, file), "--state", filepath.Join(dir, "state.yaml"), "--namespace-labels", "operators")
		for _, r := range out.Results {
			if r.Webhook == "harness-proxy" {
				return string(mustMarshal(t, r.Patch))
			}
		}
		t.Fatalf("harness-proxy did not see the pod of %s", file)
		return ""
	}
	deprecated, current := patchOf("deprecated.yaml"), patchOf("current.yaml")
	if !strings.Contains(deprecated, `"name":"proxy-api-access"`) || !strings.Contains(deprecated, `"path":"/spec/automountServiceAccountToken"`) {
		t.Fatalf("a pod with only spec.serviceAccount got no proxy: %s", deprecated)
	}
	if deprecated != current {
		t.Errorf("patches differ:\n serviceAccount:     %s\n serviceAccountName: %s", deprecated, current)
	}
}

// TestCheckAppliesTheAPIServersDefaults: the webhooks see the object as the
// API server hands it to admission, and the JSON output names what the
// defaulting changed (operations and paths, never values).
func TestCheckAppliesTheAPIServersDefaults(t *testing.T) {
	dir := writeFiles(t, map[string]string{"objects.yaml": `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a}
spec:
  serviceAccount: web
  containers: [{name: c, image: registry.example/app, ports: [{containerPort: 80}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: registry.example/app:1}]}
---
apiVersion: example.kubedoop.dev/v1
kind: Thing
metadata: {name: web, namespace: team-a}
spec: {anything: [1, "x"]}
`})
	out := checkJSONOf(t, exitOK, "-f", filepath.Join(dir, "objects.yaml"), "--namespace-labels", "team-a")
	if len(out.Objects) != 3 {
		t.Fatalf("objects: %+v", out.Objects)
	}
	want := map[string][]string{
		"Pod": {
			"add /spec/containers/0/imagePullPolicy", // Always: no tag means latest
			"add /spec/containers/0/ports/0/protocol",
			"add /spec/containers/0/resources", // {}: the Go type encodes it
			"add /spec/containers/0/terminationMessagePath",
			"add /spec/containers/0/terminationMessagePolicy",
			"add /spec/dnsPolicy",
			"add /spec/enableServiceLinks",
			"add /spec/restartPolicy",
			"add /spec/schedulerName",
			"add /spec/securityContext",
			"add /spec/serviceAccountName",
			"add /spec/terminationGracePeriodSeconds",
			"add /status",
		},
		"Deployment": {
			"add /spec/progressDeadlineSeconds",
			"add /spec/replicas",
			"add /spec/revisionHistoryLimit",
			"add /spec/strategy",
			"add /spec/template/spec/containers/0/imagePullPolicy",
			"add /spec/template/spec/containers/0/resources",
			"add /spec/template/spec/containers/0/terminationMessagePath",
			"add /spec/template/spec/containers/0/terminationMessagePolicy",
			"add /spec/template/spec/dnsPolicy",
			"add /spec/template/spec/restartPolicy",
			"add /spec/template/spec/schedulerName",
			"add /spec/template/spec/securityContext",
			"add /spec/template/spec/terminationGracePeriodSeconds",
			"add /status",
		},
		"Thing": {},
	}
	for _, o := range out.Objects {
		if !slices.Equal(o.Defaulted, want[o.Object.Kind]) {
			t.Errorf("%s defaulted:\n got  %q\n want %q", o.Object.Kind, o.Defaulted, want[o.Object.Kind])
		}
		if !strings.HasSuffix(o.Source, "objects.yaml, document "+map[string]string{"Pod": "1", "Deployment": "2", "Thing": "3"}[o.Object.Kind]) {
			t.Errorf("%s source %q", o.Object.Kind, o.Source)
		}
	}
}

// TestCheckUndecodableBuiltinIsRejected: a Pod whose spec.containers is a
// string never reaches admission on a real server. check rejects it as the
// API server would, naming the field and never the value, and goes on with
// the other objects.
func TestCheckUndecodableBuiltinIsRejected(t *testing.T) {
	const marker = "MARKER-check-undecodable"
	dir := writeFiles(t, map[string]string{"objects.yaml": `apiVersion: v1
kind: Pod
metadata: {name: broken, namespace: team-a}
spec: {containers: "` + marker + `"}
---
apiVersion: v1
kind: Pod
metadata: {name: typo, namespace: team-a}
spec: {containers: [{name: c, image: i}], serviceAcountName: x}
---
apiVersion: v1
kind: Pod
metadata: {name: fine, namespace: team-a}
spec: {containers: [{name: c, image: i}]}
`})
	file := filepath.Join(dir, "objects.yaml")
	out := checkJSONOf(t, exitDenied, "-f", file, "--namespace-labels", "team-a")
	verdicts := map[string][]string{}
	for _, r := range out.Results {
		v := r.Webhook + "=" + map[bool]string{true: "allowed", false: "denied"}[r.Allowed]
		if r.Error != "" {
			v += " " + r.Error
		}
		verdicts[r.Object.Name] = append(verdicts[r.Object.Name], v)
	}
	wantBroken := "api-server=denied UndecodableObject: not a valid Pod: spec.containers is a string where the API expects []v1.Container"
	if got := verdicts["broken"]; len(got) != 1 || got[0] != wantBroken {
		t.Errorf("broken: %q, want only %q", got, wantBroken)
	}
	wantTypo := `api-server=denied UndecodableObject: not a valid Pod: unknown field "spec.serviceAcountName" (the API server rejects this when kubectl validates strictly, its default)`
	if got := verdicts["typo"]; len(got) != 1 || got[0] != wantTypo {
		t.Errorf("typo: %q, want only %q", got, wantTypo)
	}
	if got := verdicts["fine"]; len(got) == 0 || slices.ContainsFunc(got, func(v string) bool { return !strings.Contains(v, "=allowed") }) {
		t.Errorf("fine: %q, want admitted by every webhook", got)
	}
	code, text, stderr := run(t, "", "check", "-f", file, "--namespace-labels", "team-a")
	if code != exitDenied || strings.Contains(text+stderr, marker) {
		t.Errorf("text output: exit %d, or it repeats the value:\n%s%s", code, text, stderr)
	}
	if !strings.Contains(text, "DENIED    Pod team-a/broken") || !strings.Contains(text, "  api-server: denied\n    x error: UndecodableObject: not a valid Pod: spec.containers") {
		t.Errorf("text output does not show the rejection:\n%s", text)
	}
}
