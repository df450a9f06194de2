package webhooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/webhooks/admissionpolicy"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// inProcessCase is one object the in-process equivalence test admits.
type inProcessCase struct {
	where  string
	object map[string]any
}

// scopeValues are scope annotation values at every edge of the grammar
// (grammar.go, names.go), known and unknown keys, names at the length limit.
var scopeValues = []string{
	"", ",", ",,", "node", "pod", "node,pod", "pod,,node", ",pod", "pod,", "node=", "node=x", "pod=a=b",
	"service", "service=", "service=web", "service=a=b", "service=*", "service=*.web", "service=a.b", "service=Web",
	"service=1web", "service=web-", "service=-web", "service=" + strings.Repeat("a", 63), "service=" + strings.Repeat("a", 64),
	"listener-volume", "listener-volume=", "listener-volume=1a", "listener-volume=a_b", "listener-volume=" + strings.Repeat("b", 64),
	"=", "=x", "=x,pod", "foo", "foo=bar", "node,foo", "Node", "node ,pod", "service=ſ", "pod,service=web,listener-volume=lv,node",
	"service=web,service=*,=,,foo=x",
}

// scopeAnnotationSets are the other annotations beside a scope value: none
// (no class), a class, the formats, and keys CEL leaves to the webhook.
var scopeAnnotationSets = []map[string]string{
	{},
	{"class": "tls"},
	{"class": ""},
	{"class": "tls", "format": "tls-pem"},
	{"class": "tls", "format": "pem"},
	{"class": "tls", "format": "tls-p12"},
	{"class": "kerberos", "format": "kerberos", "kerberosServiceNames": "HTTP", "pod-info": "x"},
	{"class": "tls", "autoTlsCertLifetime": "1h"},
	{"class": "tls", "unknown": "x"},
	{"class": "tls", "tlsPKCS12Password": "x"},
}

// generatedScopeObjects puts every scope value with every annotation set
// into each place SCOPE reads on a built-in kind.
func generatedScopeObjects() []inProcessCase {
	var out []inProcessCase
	for i, value := range append([]string{"<none>"}, scopeValues...) {
		for j, set := range scopeAnnotationSets {
			annotations := map[string]any{"team": "a"}
			for k, v := range set {
				annotations[scope.AnnotationPrefix+k] = v
			}
			if value != "<none>" {
				annotations[scope.AnnotationPrefix+"scope"] = value
			}
			volume := func() map[string]any {
				return map[string]any{"name": "tls", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
					"metadata": map[string]any{"annotations": annotations},
					"spec":     map[string]any{"storageClassName": "secrets.kubedoop.dev", "accessModes": []any{"ReadWriteOnce"}},
				}}}
			}
			podSpec := func() map[string]any {
				return map[string]any{
					"containers": []any{map[string]any{"name": "app", "image": "app"}},
					"volumes":    []any{map[string]any{"name": "plain", "emptyDir": map[string]any{}}, volume()},
				}
			}
			meta := map[string]any{"name": "gen", "namespace": "team"}
			where := fmt.Sprintf("scope value %d, annotations %d", i, j)
			out = append(out,
				inProcessCase{where + " on a PVC", map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
					"metadata": map[string]any{"name": "gen", "namespace": "team", "annotations": annotations},
					"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}}}},
				inProcessCase{where + " on a Pod", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": podSpec()}},
				inProcessCase{where + " on a CronJob", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
					"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{
						"template": map[string]any{"spec": podSpec()}}}}}},
				inProcessCase{where + " on a StatefulSet", map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta,
					"spec": map[string]any{"template": map[string]any{"spec": podSpec()}, "volumeClaimTemplates": []any{
						map[string]any{"metadata": map[string]any{"name": "data"}},
						map[string]any{"metadata": map[string]any{"name": "tls", "annotations": annotations}},
					}}}},
			)
		}
	}
	return out
}

// scopeFixtureObjects are SCOPE's golden fixtures of built-in kinds, as
// written and as the API server defaults them.
func scopeFixtureObjects(t *testing.T) []inProcessCase {
	t.Helper()
	files, err := filepath.Glob("../policies/scope/testdata/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no SCOPE fixtures (%v)", err)
	}
	var out []inProcessCase
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		out = append(out, inProcessCase{file, obj})
		if defaulted, err := apidefaults.PreAdmission(obj); err == nil {
			out = append(out, inProcessCase{file + " (defaulted)", defaulted})
		}
	}
	return out
}

// TestInProcessPoliciesDecideAsTheWebhook runs the in-process layout's
// policies in the API server's own admission plugin over SCOPE's fixtures
// and generated objects: where the policy's predicate says it decides, its
// findings (codes and field paths, read back from its message) are exactly
// the evaluator's denials and the evaluator warns about nothing; where it
// does not, the policy admits and the webhook decides.
func TestInProcessPoliciesDecideAsTheWebhook(t *testing.T) {
	opts := OptionsFromConfig(configv1alpha1.Default())
	rendered := ManifestOptions{Namespace: "gatehouse-system", Options: opts}.InProcess()
	v, err := admissionpolicy.NewValidator(rendered.Validating, rendered.Bindings, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	cases := append(scopeFixtureObjects(t), generatedScopeObjects()...)
	var decided, denied, left int
	for _, c := range cases {
		gvk := schema.FromAPIVersionAndKind(stringAt(c.object, "apiVersion"), stringAt(c.object, "kind"))
		if gvk.Group != "" && gvk.Group != "apps" && gvk.Group != "batch" {
			continue // product custom resources stay on the webhook
		}
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: guessResource(gvk.Kind)}
		if gvk.Kind == "PersistentVolumeClaim" {
			gvr.Resource = "persistentvolumeclaims"
		}
		meta, _ := c.object["metadata"].(map[string]any)
		namespace := stringAt(meta, "namespace")
		if namespace == "" {
			namespace = "team"
		}
		raw := mustJSON(t, c.object)
		for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
			req := ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr), Namespace: namespace,
				Name: stringAt(meta, "name"), Operation: op, UserInfo: authenticationv1.UserInfo{Username: "alice"},
			}}
			var old map[string]any
			var oldRaw []byte
			if op == admissionv1.Update {
				old, oldRaw = c.object, raw
			}
			decides, err := InProcessDecides("secret-scope", opts, celRequest(&req), c.object, old)
			if err != nil {
				t.Fatalf("%s: the predicate failed: %v", c.where, err)
			}
			policyErr := v.Validate(context.Background(), admissionpolicy.Request{
				Kind: gvk, Resource: gvr, Namespace: namespace, Name: stringAt(meta, "name"),
				Operation: admission.Operation(op), Object: raw, OldObject: oldRaw, Username: "alice",
			})
			findings := scope.Validate(gvk.GroupKind(), c.object)
			if !decides {
				left++
				if policyErr != nil {
					t.Errorf("%s, %s: the policy does not decide it, but denied: %v", c.where, op, policyErr)
				}
				continue
			}
			decided++
			var want []string
			for _, f := range findings {
				if f.Severity != policies.Deny {
					t.Errorf("%s: the policy decides it, but the webhook warns %s at %s", c.where, f.Code, f.Field)
					continue
				}
				want = append(want, string(f.Code)+"@"+f.Field)
			}
			sort.Strings(want)
			var got []string
			if policyErr != nil {
				denied++
				status := admissionpolicy.Denial(policyErr)
				if status == nil || status.Code != 422 || status.Reason != metav1.StatusReasonInvalid {
					t.Errorf("%s: want a 422 Invalid denial, got %v", c.where, policyErr)
					continue
				}
				for _, f := range PolicyFindings(status.Message) {
					if f.Webhook != "secret-scope" {
						t.Errorf("%s: finding attributed to %q", c.where, f.Webhook)
					}
					got = append(got, f.Code+"@"+f.Field)
				}
				sort.Strings(got)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %s: policy findings %v, webhook %v", c.where, op, got, want)
			}
		}
	}
	t.Logf("%d requests decided in-process (%d denied), %d left to the webhook", decided, denied, left)
	if decided == 0 || denied == 0 || left == 0 {
		t.Fatalf("decided %d, denied %d, left %d: the corpus does not exercise both halves", decided, denied, left)
	}
}

// TestInProcessLayoutNarrowsOnlyItsMembers: the in-process layout is the
// combined layout but for the expression of the entry that holds a member a
// policy stands in for, where that member's part is narrowed by the
// policy's predicate; the policies and bindings follow.
func TestInProcessLayoutNarrowsOnlyItsMembers(t *testing.T) {
	opts := OptionsFromConfig(configv1alpha1.Default())
	render := func(layout string) []string {
		out, err := WebhookConfigurations(ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(out), "\n---\n")
	}
	combined, inProcess := render(LayoutCombined), render(LayoutInProcess)
	if len(inProcess) != len(combined)+2*len(inProcessTable) {
		t.Fatalf("%d documents in-process, %d combined", len(inProcess), len(combined))
	}
	if inProcess[0] != combined[0] {
		t.Errorf("the mutating configuration differs:\n%s", inProcess[0])
	}
	decided := secretScopeDecided(opts)
	if !strings.Contains(inProcess[1], "!(") || strings.Contains(combined[1], "request.operation == 'CREATE' && !has(request.subResource)") {
		t.Errorf("the validating entry is not narrowed")
	}
	var narrowed, plain renderedValidating
	if err := yaml.Unmarshal([]byte(inProcess[1]), &narrowed); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(combined[1]), &plain); err != nil {
		t.Fatal(err)
	}
	for i, w := range narrowed.Webhooks {
		want := plain.Webhooks[i].MatchConditions[0].Expression
		g := Groups[len(Groups)-1]
		for _, m := range g.members() {
			if m.def.Name == "secret-scope" {
				member := m.memberExpression(opts)
				want = strings.Replace(want, member, "("+member+" && !("+decided+"))", 1)
			}
		}
		if got := w.MatchConditions[0].Expression; got != want {
			t.Errorf("entry %s: expression\n%s\nwant\n%s", w.Name, got, want)
		}
	}
	if !strings.Contains(inProcess[len(combined)], "kind: ValidatingAdmissionPolicy\n") ||
		!strings.Contains(inProcess[len(combined)+1], "kind: ValidatingAdmissionPolicyBinding\n") {
		t.Errorf("the policy and binding do not follow the webhook configurations")
	}
}

// renderedValidating is the part of a rendered validating
// configuration the layout test reads.
type renderedValidating struct {
	Webhooks []struct {
		Name            string
		MatchConditions []struct{ Name, Expression string } `json:"matchConditions"`
	}
}
