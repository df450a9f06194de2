package render

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestInProcessLayoutNarrowsOnlyItsMembers: the in-process layout is the
// combined layout but for the expression of the entry that holds a member
// the in-process table names, where that member's part is narrowed by the
// negation of its allows predicate, and no validating policy (one that
// denied would deny what an exception excuses); with DefaultsPolicy, the
// PSC defaults' MutatingAdmissionPolicy and its binding follow the webhook
// configurations.
func TestInProcessLayoutNarrowsOnlyItsMembers(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	render := func(layout string, policy bool) []string {
		out, err := WebhookConfigurations(route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, DefaultsPolicy: policy, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(out), "\n---\n")
	}
	combined, inProcess, withPolicy := render(route.LayoutCombined, false), render(route.LayoutInProcess, false), render(route.LayoutInProcess, true)
	if len(inProcess) != len(combined) || len(withPolicy) != len(combined)+2 {
		t.Fatalf("%d documents in-process, %d with the defaults policy, %d combined", len(inProcess), len(withPolicy), len(combined))
	}
	if with := render(route.LayoutCombined, true); len(with) != len(combined) {
		t.Errorf("the combined layout rendered the defaults policy")
	}
	// The mutating configuration (document 0), then the validating one.
	replaced := map[string]bool{}
	for doc := range 2 {
		var narrowed, plain renderedValidating
		if err := yaml.Unmarshal([]byte(inProcess[doc]), &narrowed); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(combined[doc]), &plain); err != nil {
			t.Fatal(err)
		}
		for i, w := range narrowed.Webhooks {
			want := plain.Webhooks[i].MatchConditions[0].Expression
			for _, g := range route.Groups() {
				if g.Name+".gatehouse.dev" != w.Name {
					continue
				}
				for _, m := range g.Members(opts) {
					for _, row := range inProcessTable {
						if member := m.MemberExpression(opts); row.webhook == m.Def.Name && strings.Contains(want, member) {
							want = strings.Replace(want, member, "("+member+" && !("+row.allows(opts)+"))", 1)
							replaced[row.webhook] = true
						}
					}
				}
			}
			if got := w.MatchConditions[0].Expression; got != want {
				t.Errorf("entry %s: the expression differs from the combined one narrowed by the allows predicates (%d and %d bytes)", w.Name, len(got), len(want))
			}
		}
	}
	if len(replaced) != len(inProcessTable) {
		t.Errorf("members narrowed: %v; the in-process table has %d rows", replaced, len(inProcessTable))
	}
	same := func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) }
	if !same(withPolicy[0], inProcess[0]) || !same(withPolicy[1], inProcess[1]) ||
		!strings.Contains(withPolicy[2], "kind: MutatingAdmissionPolicy\n") || !strings.Contains(withPolicy[3], "kind: MutatingAdmissionPolicyBinding\n") {
		t.Errorf("with the defaults policy, the policy and binding do not follow the same webhook configurations")
	}
	for i, doc := range inProcess[2:] {
		if !same(doc, combined[i+2]) || !same(withPolicy[i+4], doc) {
			t.Errorf("document %d differs from the combined layout's:\n%s", i+2, doc)
		}
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
