package webhooks

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestRenderedRulesRouteLikeCheck evaluates the rendered webhook
// configurations the way the API server does (rules, then the
// matchConditions CEL expression, compiled with cel-go as the API server
// compiles it) and proves they send exactly the requests that Intercept.Matches
// routes in `gatehouse check` and accepts in the handler.
func TestRenderedRulesRouteLikeCheck(t *testing.T) {
	opts := Options{Products: policies.ProductSelector{GroupSuffixes: []string{".kubedoop.dev", ".example.org"}}}
	rendered, err := WebhookConfigurations(ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	webhooksByName := map[string]admissionregistrationv1.ValidatingWebhook{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	for {
		var cfg admissionregistrationv1.ValidatingWebhookConfiguration
		if err := dec.Decode(&cfg); err != nil {
			break
		}
		if cfg.Kind != "ValidatingWebhookConfiguration" {
			continue
		}
		for _, w := range cfg.Webhooks {
			webhooksByName[w.Name] = w
		}
	}

	requests := []schema.GroupVersionResource{
		{Resource: "configmaps", Version: "v1"},
		{Resource: "secrets", Version: "v1"},
		{Resource: "namespaces", Version: "v1"},
		{Group: "apps", Version: "v1", Resource: "controllerrevisions"},
		{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"},
		{Group: "trino.kubedoop.dev", Version: "v1alpha2", Resource: "trinoclusters"},
		{Group: "kubedoop.dev", Version: "v1", Resource: "things"},
		{Group: "evilkubedoop.dev", Version: "v1", Resource: "things"},
		{Group: "a.example.org", Version: "v1", Resource: "things"},
		{Group: "example.com", Version: "v1", Resource: "things"},
		{Version: "v1", Resource: "persistentvolumeclaims"},
	}
	for _, r := range podResources() {
		requests = append(requests, r.GVR)
	}
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}

	for _, def := range Registry {
		w, ok := webhooksByName[def.Name+".gatehouse.dev"]
		if !ok {
			t.Fatalf("%s is not rendered", def.Name)
		}
		var programs []cel.Program
		for _, mc := range w.MatchConditions {
			programs = append(programs, compile(t, mc.Expression))
		}
		for _, gvr := range requests {
			for _, op := range ops {
				sent := rulesMatch(w.Rules, op, gvr)
				for _, p := range programs {
					sent = sent && evalBool(t, p, gvr)
				}
				routed := def.Intercept.Matches(op, gvr, "", opts)
				if sent != routed {
					t.Errorf("%s %s %s: API server would send=%v, check routes=%v", def.Name, op, gvr, sent, routed)
				}
			}
		}
	}
}

func compile(t *testing.T, expr string) cel.Program {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("request", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("matchCondition does not compile: %v\n%s", iss.Err(), expr)
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

func evalBool(t *testing.T, prg cel.Program, gvr schema.GroupVersionResource) bool {
	t.Helper()
	out, _, err := prg.Eval(map[string]any{"request": map[string]any{
		"resource": map[string]any{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		t.Fatalf("matchCondition is not boolean: %v", out)
	}
	return b
}

// rulesMatch is the API server's rule matching for a request without a
// subresource.
func rulesMatch(rules []admissionregistrationv1.RuleWithOperations, op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	for _, r := range rules {
		ops := make([]string, len(r.Operations))
		for i, o := range r.Operations {
			ops[i] = string(o)
		}
		if has(ops, string(op)) && has(r.APIGroups, gvr.Group) && has(r.APIVersions, gvr.Version) && has(r.Resources, gvr.Resource) {
			return true
		}
	}
	return false
}

func TestRegistryValidatesItself(t *testing.T) {
	if err := validateRegistry(Registry); err != nil {
		t.Fatal(err)
	}
	dup := append(slices.Clone(Registry), Registry[0])
	if err := validateRegistry(dup); err == nil {
		t.Error("a duplicate name was accepted")
	}
	bad := slices.Clone(Registry)
	bad[0].Path = "/validate/other"
	if err := validateRegistry(bad); err == nil {
		t.Error("a path that does not match the name was accepted")
	}
}
