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
// negation of its allows predicate; it adds the PSC defaults'
// MutatingAdmissionPolicy and its binding, and no validating policy (one
// that denied would deny what an exception excuses).
func TestInProcessLayoutNarrowsOnlyItsMembers(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	render := func(layout string) []string {
		out, err := WebhookConfigurations(route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(out), "\n---\n")
	}
	combined, inProcess := render(route.LayoutCombined), render(route.LayoutInProcess)
	if len(inProcess) != len(combined)+2 {
		t.Fatalf("%d documents in-process, %d combined", len(inProcess), len(combined))
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
	if !strings.Contains(inProcess[2], "kind: MutatingAdmissionPolicy\n") || !strings.Contains(inProcess[3], "kind: MutatingAdmissionPolicyBinding\n") {
		t.Errorf("the defaults' policy and binding do not follow the webhook configurations")
	}
	for i, doc := range inProcess[4:] {
		if doc != combined[i+2] {
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
