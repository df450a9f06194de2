package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// freshProcessEnv names the test a re-executed test binary runs.
const freshProcessEnv = "GATEHOUSE_TEST_FRESH_PROCESS"

// inFreshProcess runs the calling test alone in a new process of this test
// binary and reports whether the caller is that process. controller-runtime
// takes only the first logger a process sets, so a test that reads the
// server's log (at the level it asked for), or counts the process's
// goroutines and memory, must not share the process with other servers.
func inFreshProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(freshProcessEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), freshProcessEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("%s in a fresh process:\n%s", t.Name(), lastLines(string(out), 60))
	if err != nil {
		t.Fatalf("%s failed in its own process: %v", t.Name(), err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s did not pass in its own process (skipped?)", t.Name())
	}
	return false
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// marker is planted in every value the corpus carries; it must never leave.
const marker = "PLANTEDMARKERZQX"

// TestNoMarkerLeaves plants the marker in every value of the policies'
// golden fixtures that a contract reads (env values, args, commands, images,
// annotation and label values, passwords, security contexts, the override
// documents inside the ConfigMap), sends each as CREATE and UPDATE to every
// webhook of the registry that intercepts it, to `serve --dev` at the most
// verbose log level, then reads every answer (allowances, denials, warnings,
// audit annotations, patches), the whole log and the metrics: no marker may
// appear. serve --dev reads no cluster, so it serves no cluster-state
// webhook; the same corpus goes through `check` (text and JSON), where every
// webhook runs and the cluster-state webhooks get the corpus as state. gatehouse records no
// Kubernetes events, so there are none to read.
func TestNoMarkerLeaves(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	h := startHostile(t, "--v", "10")
	corpus := plantedCorpus(t)
	opts := route.OptionsFromConfig(configv1alpha1.Default())

	type send struct {
		webhook string
		path    string
		body    []byte
	}
	var sends []send
	perWebhook := map[string]int{}
	for _, def := range route.Registry() {
		for i, p := range corpus {
			gvk := schema.FromAPIVersionAndKind(p.apiVersion, p.kind)
			gvr, _ := meta.UnsafeGuessKindToResource(gvk)
			subresources := []string{""}
			if gvr.Resource == "pods" {
				subresources = append(subresources, "ephemeralcontainers")
			}
			for _, op := range []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update} {
				for _, sub := range subresources {
					if !def.Intercept.Matches(op, gvr, sub, opts) || !def.Intercept.ObjectMatches(p.namespace, p.name, opts) {
						continue
					}
					var old map[string]any
					if op == admissionregistrationv1.Update {
						old = p.original
					}
					perWebhook[def.Name]++
					if slices.Contains(stateWebhooks, def.Name) {
						continue // not served by serve --dev (no cluster to read); check below judges them with state
					}
					sends = append(sends, send{def.Name, def.Path, leakReview(t, fmt.Sprintf("leak-%d", i), op, gvk, gvr, sub, p, old)})
				}
			}
		}
	}
	for _, def := range route.Registry() {
		if perWebhook[def.Name] == 0 {
			t.Errorf("no fixture reaches webhook %s; add fixtures for it under policies/*/testdata", def.Name)
		}
	}
	t.Logf("%d planted objects, %d reviews: %v", len(corpus), len(sends), perWebhook)

	var (
		mu                 sync.Mutex
		answers            bytes.Buffer
		denied, warned, ok int
	)
	work := make(chan send)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for s := range work {
				resp, err := h.client.Post(h.base+s.path+"?timeout=5s", "application/json", bytes.NewReader(s.body))
				if err != nil {
					t.Errorf("%s: %v", s.webhook, err)
					continue
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var review admissionv1.AdmissionReview
				if json.Unmarshal(raw, &review) != nil || review.Response == nil {
					t.Errorf("%s: HTTP %d, not an AdmissionReview", s.webhook, resp.StatusCode)
					continue
				}
				mu.Lock()
				answers.Write(raw)
				answers.WriteByte('\n')
				switch r := review.Response; {
				case !r.Allowed:
					denied++
				case len(r.Warnings) > 0:
					warned++
				default:
					ok++
				}
				mu.Unlock()
			}
		})
	}
	for _, s := range sends {
		work <- s
	}
	close(work)
	wg.Wait()
	t.Logf("answers: %d denied, %d allowed with warnings, %d allowed", denied, warned, ok)
	// The corpus must exercise the paths that could leak: denials and
	// warnings with messages, and allowances.
	if denied == 0 || warned == 0 || ok == 0 {
		t.Fatalf("the corpus proves too little: %d denied, %d warned, %d allowed", denied, warned, ok)
	}

	resp, err := http.Get("http://127.0.0.1:" + h.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(metricsText, []byte("gatehouse_webhook_decisions_total")) {
		t.Fatal("the metrics lack the decision counter; the scrape proves nothing")
	}
	log := h.stderr.String()
	if !strings.Contains(log, `"msg":"decision"`) || !strings.Contains(log, `"msg":"wrote response"`) {
		t.Fatal("the log lacks decision or debug lines; it was not written at the most verbose level")
	}

	checkText, checkJSON := checkCorpus(t, corpus)
	for what, text := range map[string]string{
		"answers": answers.String(), "log": log, "stdout": h.stdout.String(), "metrics": string(metricsText),
		"check text output": checkText, "check JSON output": checkJSON,
	} {
		if len(text) == 0 {
			t.Errorf("%s are empty; the test would prove nothing", what)
		}
		if n := strings.Count(text, marker); n > 0 {
			i := strings.Index(text, marker)
			t.Errorf("%s carry a planted value %d times, first: ...%s...", what, n, text[max(0, i-300):min(len(text), i+60)])
		}
	}
}

// checkCorpus runs `gatehouse check` over the corpus, as text and as JSON,
// with the corpus also given as cluster state.
func checkCorpus(t *testing.T, corpus []planted) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for i, p := range corpus {
		raw, err := yaml.Marshal(p.object)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.yaml", i)), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Every namespace of the corpus, opted in to the pod security defaults:
	// without its Namespace an object would be undecided by the webhooks
	// that read namespace labels, and they would never see the markers.
	args := []string{"check", "-f", dir, "--state", dir}
	namespaces := map[string]bool{}
	for _, p := range corpus {
		if p.namespace != "" && !namespaces[p.namespace] {
			namespaces[p.namespace] = true
			args = append(args, "--namespace-labels", p.namespace+"=gatehouse.dev/security-defaults=enabled")
		}
	}
	var outputs []string
	for _, format := range []string{"text", "json"} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append(args, "-o", format), strings.NewReader(""), &stdout, &stderr)
		if code != exitDenied {
			t.Fatalf("check -o %s exited %d (want 1, some denied): %s", format, code, lastLines(stderr.String(), 5))
		}
		outputs = append(outputs, stdout.String()+stderr.String())
	}
	return outputs[0], outputs[1]
}

// planted is one corpus object: a fixture with markers planted, and the
// fixture as it was (the stored object of an UPDATE).
type planted struct {
	source                            string
	apiVersion, kind, namespace, name string
	object, original                  map[string]any
}

// plantedCorpus reads every golden fixture and plants markers in two ways:
// added beside what is there (the fixture keeps its findings), and replacing
// values (new findings about the values themselves).
func plantedCorpus(t *testing.T) []planted {
	t.Helper()
	files, err := filepath.Glob("../../../policies/*/testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []planted
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var original map[string]any
		if yaml.Unmarshal(raw, &original) != nil || original == nil {
			continue
		}
		apiVersion, _ := original["apiVersion"].(string)
		kind, _ := original["kind"].(string)
		if apiVersion == "" || kind == "" {
			continue
		}
		meta, _ := original["metadata"].(map[string]any)
		namespace, _ := meta["namespace"].(string)
		if namespace == "" && kind != "ClusterRole" && kind != "DependencyGroup" && kind != "CustomResourceDefinitionSource" && kind != "OperatorHarness" {
			namespace = "team-a"
		}
		name, _ := meta["name"].(string)
		variants := []any{plantBeside(clone(t, original))}
		if !namesOnly[kind] {
			variants = append(variants, replaceValues(clone(t, original), ""))
		}
		for _, v := range variants {
			out = append(out, planted{source: file, apiVersion: apiVersion, kind: kind, namespace: namespace, name: name,
				object: v.(map[string]any), original: original})
		}
	}
	return out
}

// namesOnly are the kinds whose string fields are names the contracts
// may cite (CRD names, API groups, namespaces, ServiceAccounts, RBAC rules):
// they get markers only beside what is there.
var namesOnly = map[string]bool{"DependencyGroup": true, "CustomResourceDefinitionSource": true, "OperatorHarness": true}

func clone(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// plantBeside adds marker values next to what is there: an env value, an
// argument and a command word in every container, its image, an annotation
// and a label, a PKCS#12 password where a secret volume is, and the same
// inside every override document (plus a broken one).
func plantBeside(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			switch key {
			case "containers", "initContainers", "ephemeralContainers":
				if list, ok := child.([]any); ok {
					for _, c := range list {
						if c, ok := c.(map[string]any); ok {
							c["image"] = marker + "/image:1"
							c["env"] = append(asList(c["env"]), map[string]any{"name": "PLANTED", "value": marker + "-env"})
							c["args"] = append(asList(c["args"]), marker+"-arg")
							c["command"] = append(asList(c["command"]), marker+"-command")
						}
					}
				}
			case "annotations", "labels":
				if m, ok := child.(map[string]any); ok {
					m["planted.example.com/value"] = marker + "-" + key
					if _, ok := m["secrets.kubedoop.dev/class"]; ok {
						m["secrets.kubedoop.dev/tlsPKCS12Password"] = marker + "-password"
					}
				}
			case "env":
				for _, e := range asList(child) {
					if e, ok := e.(map[string]any); ok {
						e["value"] = marker + "-envvalue"
					}
				}
			}
			v[key] = plantBeside(child)
		}
		if data, ok := v["data"].(map[string]any); ok && v["kind"] == "ConfigMap" {
			plantInDocuments(data, plantBeside)
			data["planted.yaml"] = "overrides: [{component: " + marker + "\n"
		}
		return v
	case []any:
		for i := range v {
			v[i] = plantBeside(v[i])
		}
		return v
	}
	return v
}

// nameKeys hold names and type information, which messages may cite.
var nameKeys = map[string]bool{"apiVersion": true, "kind": true, "name": true, "namespace": true, "generateName": true, "uid": true, "component": true,
	"addContainers": true, "addInitContainers": true, // container names an override adds
}

// replaceValues replaces every string value that is not a name with a
// marker, and every scalar of a security context, so the values themselves
// earn findings.
func replaceValues(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		data, configMap := v["data"].(map[string]any)
		configMap = configMap && v["kind"] == "ConfigMap"
		for k, child := range v {
			switch {
			case configMap && k == "data":
				plantInDocuments(data, func(doc any) any { return replaceValues(doc, "") })
			case k == "securityContext":
				replaceScalars(child)
			case !nameKeys[k]:
				v[k] = replaceValues(child, k)
			}
		}
		return v
	case []any:
		for i := range v {
			v[i] = replaceValues(v[i], key)
		}
		return v
	case string:
		return marker + "-" + key
	}
	return v
}

// replaceScalars replaces every scalar below v with a marker string.
func replaceScalars(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if _, nested := child.(map[string]any); nested {
				replaceScalars(child)
			} else if _, list := child.([]any); list {
				v[k] = []any{marker + "-" + k}
			} else {
				v[k] = marker + "-" + k
			}
		}
	}
}

// plantInDocuments applies plant to every YAML document held in a
// ConfigMap's data (the override documents), leaving other values alone.
func plantInDocuments(data map[string]any, plant func(any) any) {
	for key, value := range data {
		s, ok := value.(string)
		if !ok {
			continue
		}
		var doc any
		if yaml.Unmarshal([]byte(s), &doc) != nil {
			continue
		}
		if _, ok := doc.(map[string]any); !ok {
			continue
		}
		raw, err := yaml.Marshal(plant(doc))
		if err != nil {
			continue
		}
		data[key] = string(raw)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// leakReview builds the AdmissionReview for one planted object.
func leakReview(t *testing.T, uid string, op admissionregistrationv1.OperationType, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, subresource string, p planted, old map[string]any) []byte {
	t.Helper()
	req := map[string]any{
		"uid":         uid,
		"kind":        map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"resource":    map[string]string{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource},
		"subResource": subresource,
		"operation":   op,
		"namespace":   p.namespace,
		"name":        p.name,
		"userInfo":    map[string]any{"username": "alice"},
		"object":      p.object,
	}
	if old != nil {
		req["oldObject"] = old
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	if err != nil {
		t.Fatal(err)
	}
	return body
}
