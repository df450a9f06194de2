package perf

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

func readCorpus(t *testing.T) ([]Fixture, route.Options, *Corpus) {
	t.Helper()
	fixtures, err := ReadFixtures(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	c, err := Build(fixtures, route.Registry(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return fixtures, opts, c
}

func TestReadFixturesReadsOnlyRequests(t *testing.T) {
	fixtures, _, _ := readCorpus(t)
	outcomes := map[string]int{}
	for _, fx := range fixtures {
		outcomes[fx.Outcome]++
		if strings.Contains(fx.File, "/mutated/") || strings.Contains(fx.File, "/fuzz/") || !strings.Contains(fx.File, "/testdata/") {
			t.Errorf("%s is not a request fixture", fx.File)
		}
		if fx.Object["kind"] == nil {
			t.Errorf("%s has no kind", fx.File)
		}
	}
	if outcomes["pass"] == 0 || outcomes["fail"] == 0 || len(outcomes) != 2 {
		t.Errorf("outcomes %v, want pass and fail only", outcomes)
	}
}

// servedWithFixtures are the webhooks whose policies have golden fixtures
// today; each must get reviews. A webhook added to the registry later is
// reported as uncovered by the load tool until fixtures reach it, and only
// logged here.
var servedWithFixtures = []string{
	"pod-security-defaults", "secret-scope", "service-account", "component-overrides",
	"harness", "dependency-group", "crd-source", "pod-security",
}

// The webhooks with fixtures get reviews, and each review is a CREATE
// AdmissionReview for its webhook's path that the webhook accepts as its own.
func TestCorpusCoversEveryRegistryWebhook(t *testing.T) {
	_, opts, c := readCorpus(t)
	counts := c.ByWebhook()
	for _, name := range servedWithFixtures {
		if _, ok := route.Lookup(name); ok && counts[name] == 0 {
			t.Errorf("webhook %s has no reviews", name)
		}
	}
	for _, def := range route.Registry() {
		if !slices.Contains(servedWithFixtures, def.Name) {
			t.Logf("webhook %s (not in servedWithFixtures): %d reviews", def.Name, counts[def.Name])
		}
	}
	if len(c.Uncovered) != 0 {
		t.Logf("no fixture reaches %v", c.Uncovered)
	}
	uids := map[string]bool{}
	for _, r := range c.Reviews {
		def, ok := route.Lookup(r.Webhook)
		if !ok || r.Path != def.Path || r.Type != def.Type {
			t.Errorf("%s: review for %s at %s does not match the registry", r.Fixture, r.Webhook, r.Path)
			continue
		}
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(r.Body, &review); err != nil || review.Request == nil {
			t.Errorf("%s: not an AdmissionReview: %v", r.Fixture, err)
			continue
		}
		req := review.Request
		if req.Operation != admissionv1.Create || req.UID != r.UID || uids[string(r.UID)] {
			t.Errorf("%s: operation %s, uid %s (reused: %v)", r.Fixture, req.Operation, req.UID, uids[string(r.UID)])
		}
		uids[string(r.UID)] = true
		gvr := schema.GroupVersionResource(req.Resource)
		if !def.Intercept.Matches(admissionregistrationv1.Create, gvr, "", opts) {
			t.Errorf("%s: %s does not intercept %s", r.Fixture, r.Webhook, gvr)
		}
	}
}

// A webhook no fixture reaches is reported, not an error.
func TestBuildReportsUncoveredWebhooks(t *testing.T) {
	fixtures, opts, _ := readCorpus(t)
	secrets := route.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Kind: "Secret"}
	registry := append(slices.Clone(route.Registry()), route.Definition{
		Name: "no-fixtures", Path: "/validate/no-fixtures", Type: route.Validating,
		Intercept: route.Intercept{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Resources: []route.Resource{secrets}},
	})
	c, err := Build(fixtures, registry, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The corpus is CREATEs only, so a webhook that takes only UPDATEs
	// (harness-labels-guard) is uncovered too.
	var want []string
	for _, def := range registry {
		if def.Name == "no-fixtures" || !slices.Contains(def.Intercept.Operations, admissionregistrationv1.Create) {
			want = append(want, def.Name)
		}
	}
	if len(want) < 2 {
		t.Fatalf("want %v: the registry has no UPDATE-only webhook any more; simplify this test", want)
	}
	if !slices.Equal(c.Uncovered, want) {
		t.Errorf("uncovered = %v, want %v", c.Uncovered, want)
	}
}

// Dressing an object as the API server sends it makes it bigger but changes
// no webhook's verdict or findings.
func TestDressKeepsEveryVerdict(t *testing.T) {
	fixtures, opts, dressed := readCorpus(t)
	plain, err := build(fixtures, route.Registry(), opts, func(obj map[string]any, _ int) (map[string]any, error) { return deepCopy(obj) })
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Reviews) != len(dressed.Reviews) {
		t.Fatalf("%d plain reviews, %d dressed", len(plain.Reviews), len(dressed.Reviews))
	}
	opts.ClusterState = emptyState{}
	// Each webhook decides alone, as its own endpoint would.
	chains := map[string]*webhooks.Offline{}
	for _, w := range webhooks.Build(opts, func(string) bool { return true }) {
		chains[w.Name] = webhooks.NewOffline([]*webhooks.Webhook{w}, opts)
	}
	decide := func(r Review) (bool, []string) {
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(r.Body, &review); err != nil {
			t.Fatal(err)
		}
		decisions, _ := chains[r.Webhook].Review(context.Background(), admission.Request{AdmissionRequest: *review.Request})
		if len(decisions) == 0 {
			// Narrowed away (docs/contracts.md §10): the API server would
			// not call the webhook; dressing must not change that either.
			return true, []string{"not sent"}
		}
		if len(decisions) != 1 {
			t.Fatalf("%s: %s made %d decisions, want its own", r.Fixture, r.Webhook, len(decisions))
		}
		var codes []string
		for _, f := range decisions[0].Findings {
			codes = append(codes, string(f.Code)+"@"+f.Field)
		}
		return decisions[0].Response.Allowed, codes
	}
	for i := range plain.Reviews {
		p, d := plain.Reviews[i], dressed.Reviews[i]
		if len(d.Body) <= len(p.Body) {
			t.Errorf("%s: dressing did not grow the review", p.Fixture)
		}
		pa, pc := decide(p)
		da, dc := decide(d)
		if pa != da || !slices.Equal(pc, dc) {
			t.Errorf("%s via %s: plain allowed=%v %v, dressed allowed=%v %v", p.Fixture, p.Webhook, pa, pc, da, dc)
		}
	}
}
