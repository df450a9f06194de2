package webhooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestNarrowingIsSound: for every webhook with a content predicate
// (Intercept.Acts), over every golden fixture as written and as the API
// server defaults it, and the objects generated from each by removing one
// field at a time, as CREATE and as UPDATE of itself, by a service account
// and by a person: wherever the predicate, evaluated with cel-go as the API
// server evaluates matchConditions, is false, the webhook's own decision is
// a plain allow (no finding, no warning, no patch). The cluster state is
// one where LABEL and PROXY have the most to do: an Enforce harness whose
// scope label every namespace carries, and every namespace opted in.
// It runs with and without managed namespace labels (with them,
// harness-labels also acts on Namespaces' own CREATE and UPDATE).
func TestNarrowingIsSound(t *testing.T) {
	for _, managed := range []bool{false, true} {
		t.Run(fmt.Sprintf("managed namespace labels %v", managed), func(t *testing.T) { narrowingIsSound(t, managed) })
	}
}

func narrowingIsSound(t *testing.T, managed bool) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ManagedSelections = managed
	harness := map[string]any{
		"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "metadata": map[string]any{"name": "mariadb"},
		"spec": map[string]any{
			"scopeToLabel": scopeKey,
			"operator":     map[string]any{"namespace": "perf", "injectProxyConfiguration": true},
		},
	}
	labels := everyNamespaceLabelled{scopeKey: "ops", opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value, opts.HarnessedNamespaceLabel: "true"}
	opts.ClusterState, opts.Namespaces = memState{objects: []map[string]any{harness}}, labels
	hooks := map[string]*Webhook{}
	var narrowed []*Webhook
	for _, w := range Build(opts, func(string) bool { return true }) {
		hooks[w.Name] = w
		if w.Intercept.Acts != nil {
			narrowed = append(narrowed, w)
		}
	}
	if len(narrowed) == 0 {
		t.Fatal("no webhook declares a content predicate; the test proves nothing")
	}
	objects := narrowingCorpus(t)
	users := []string{"system:serviceaccount:perf:operator", "alice"}
	type tally struct{ acts, skips, unchanged int }
	counts := map[string]*tally{}
	for _, w := range narrowed {
		counts[w.Name] = &tally{}
	}
	for _, o := range objects {
		gvk := schema.FromAPIVersionAndKind(stringAt(o.object, "apiVersion"), stringAt(o.object, "kind"))
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: guessResource(gvk.Kind)}
		meta, _ := o.object["metadata"].(map[string]any)
		namespace, name := stringAt(meta, "namespace"), stringAt(meta, "name")
		if namespace == "" && !clusterScopedKinds[gvk.Kind] {
			namespace = "perf"
		}
		// An UPDATE is tried against the object itself as its old object
		// (nothing changed) and against an old object that held nothing but
		// its identity (everything changed).
		bare := map[string]any{"apiVersion": o.object["apiVersion"], "kind": o.object["kind"],
			"metadata": map[string]any{"name": name, "namespace": namespace}}
		for _, w := range narrowed {
			for _, variant := range []struct {
				op  admissionv1.Operation
				old map[string]any
			}{{admissionv1.Create, nil}, {admissionv1.Update, o.object}, {admissionv1.Update, bare}} {
				op := variant.op
				if !w.Intercept.Matches(admissionregistrationv1.OperationType(op), gvr, "", opts) || !w.Intercept.ObjectMatches(namespace, name, opts) {
					continue
				}
				for _, user := range users {
					req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
						UID: "sound", Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr),
						Namespace: namespace, Name: name, Operation: op, UserInfo: authenticationv1.UserInfo{Username: user},
						Object: runtime.RawExtension{Raw: mustJSON(t, o.object)},
					}}
					if variant.old != nil {
						req.OldObject = runtime.RawExtension{Raw: mustJSON(t, variant.old)}
					}
					acts, err := route.ActsOn(w.Intercept, opts, &req, o.object, variant.old)
					if err != nil {
						t.Fatalf("%s on %s: gatehouse-acts failed: %v", w.Name, o.where, err)
					}
					if acts {
						counts[w.Name].acts++
						continue
					}
					counts[w.Name].skips++
					resp, findings := decide(context.Background(), w, req)
					// An UPDATE that changes nothing a stateless contract
					// reads is narrowed away although the object has
					// findings: they all ratchet, so the verdict is an allow
					// without a patch, and only the stored object's
					// warnings go unrepeated.
					unchanged := op == admissionv1.Update && reflect.DeepEqual(variant.old, o.object) && unchangedIsNarrowed[w.Name]
					if unchanged && resp.Allowed && len(resp.Patches) == 0 && !policies.Denied(findings) {
						counts[w.Name].unchanged++
						continue
					}
					if !resp.Allowed || len(findings) > 0 || len(resp.Warnings) > 0 || len(resp.Patches) > 0 {
						var codes []string
						for _, f := range findings {
							codes = append(codes, string(f.Code)+"@"+f.Field)
						}
						msg := ""
						if resp.Result != nil {
							msg = resp.Result.Message
						}
						t.Errorf("%s %s by %s of %s: gatehouse-acts is false, but the webhook decides allowed=%v %v, %d warnings, %d patch operations %s",
							w.Name, op, user, o.where, resp.Allowed, codes, len(resp.Warnings), len(resp.Patches), msg)
					}
				}
			}
		}
	}
	var names []string
	for name := range counts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := counts[name]
		t.Logf("%s: %d requests it acts on, %d it never receives (%d unchanged UPDATEs of objects with findings)", name, c.acts, c.skips, c.unchanged)
		if c.acts == 0 || c.skips == 0 {
			t.Errorf("%s: %d requests acted on, %d narrowed away; the corpus must have both to prove anything", name, c.acts, c.skips)
		}
	}
}

// unchangedIsNarrowed are the webhooks never sent an UPDATE that changes
// nothing they read.
var unchangedIsNarrowed = map[string]bool{"secret-scope": true}

// clusterScopedKinds are the fixtures' kinds that have no namespace.
var clusterScopedKinds = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "StorageClass": true, "PriorityClass": true,
	"DependencyGroup": true, "OperatorHarness": true,
}

type corpusObject struct {
	where  string
	object map[string]any
}

// narrowingCorpus is every pass and fail fixture of the policies, as written
// and, for a built-in kind, as the API server defaults it before admission,
// and each of those with one field removed (every field below the top
// level, apiVersion and kind kept).
func narrowingCorpus(t *testing.T) []corpusObject {
	t.Helper()
	files, err := filepath.Glob("../policies/*/testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no policy fixtures (%v)", err)
	}
	var out []corpusObject
	for _, file := range files {
		if d := filepath.Base(filepath.Dir(file)); d != "pass" && d != "fail" {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil || obj == nil {
			continue
		}
		bases := []corpusObject{{file, obj}}
		if defaulted, err := apidefaults.PreAdmission(obj); err == nil {
			bases = append(bases, corpusObject{file + " (defaulted)", defaulted})
		}
		for _, b := range bases {
			out = append(out, b)
			for _, path := range fieldPaths(b.object, nil) {
				if len(path) < 2 {
					continue
				}
				out = append(out, corpusObject{fmt.Sprintf("%s without %s", b.where, strings.Join(path, ".")), without(t, b.object, path)})
			}
		}
	}
	return out
}

// fieldPaths lists the path of every map key in obj (lists entered by
// index), parents before children.
func fieldPaths(v any, prefix []string) [][]string {
	var out [][]string
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := append(append([]string{}, prefix...), k)
			out = append(out, path)
			out = append(out, fieldPaths(v[k], path)...)
		}
	case []any:
		for i, item := range v {
			out = append(out, fieldPaths(item, append(append([]string{}, prefix...), fmt.Sprint(i)))...)
		}
	}
	return out
}

// without returns a deep copy of obj with the map key at path removed.
func without(t *testing.T, obj map[string]any, path []string) map[string]any {
	t.Helper()
	var cp map[string]any
	if err := yaml.Unmarshal(mustJSON(t, obj), &cp); err != nil {
		t.Fatal(err)
	}
	var cur any = cp
	for _, step := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[step]
		case []any:
			var i int
			_, _ = fmt.Sscan(step, &i) // a path this test built: always a number
			cur = c[i]
		}
	}
	delete(cur.(map[string]any), path[len(path)-1])
	return cp
}

func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
