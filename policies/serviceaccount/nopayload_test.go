package serviceaccount

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestNoPayloadInFindings plants marker values in every ServiceAccount field
// the policy reads and proves that no finding's message or field path carries
// one (docs/contracts.md §0.3). Names may appear in messages; the values set may not.
func TestNoPayloadInFindings(t *testing.T) {
	const marker = "MARKERsa7f3b"
	values := []any{
		marker,
		"sa-" + marker + "-x",
		map[string]any{"name": marker},
		[]any{marker},
	}
	type input struct {
		gk  schema.GroupKind
		obj map[string]any
	}
	var inputs []input
	for _, v := range values {
		for _, field := range serviceAccountFields {
			cr := hdfsCluster()
			setPodOverrideSA(cr, field, v, "spec", "nameNode")
			setPodOverrideSA(cr, field, v, "spec", "dataNode", "roleGroups", "default")
			inputs = append(inputs, input{hdfsGK, cr})

			// Spellings that the operator's encoding/json reads as the field.
			upper := string(field[0]-'a'+'A') + field[1:]
			inputs = append(inputs,
				input{hdfsGK, overrideAt("SPEC", map[string]any{upper: v})},
				input{hdfsGK, overrideAt("ſpec", map[string]any{"ſ" + field[1:]: v})})

			unnamed := hdfsCluster()
			delete(getMap(unnamed, "metadata"), "name")
			setPodOverrideSA(unnamed, field, v, "spec", "nameNode")
			inputs = append(inputs, input{hdfsGK, unnamed})

			for _, w := range []struct {
				gk  schema.GroupKind
				obj func() map[string]any
			}{
				{statefulSetGK, statefulSet}, {deploymentGK, deployment}, {jobGK, job}, {cronJobGK, cronJob}, {podGK, pod},
			} {
				obj := w.obj()
				setPodSA(w.gk, obj, field, v)
				inputs = append(inputs, input{w.gk, obj})

				anonymous := w.obj()
				ref := hdfsOwner()
				delete(ref, "name")
				setOwners(anonymous, ref)
				setPodSA(w.gk, anonymous, field, v)
				inputs = append(inputs, input{w.gk, anonymous})
			}
		}
	}

	// Past the depth bound: a ServiceAccount nobody looked at and a marker
	// at every level on the way down.
	deep, _, _ := nested(hdfsCluster(), maxWalkDepth+1)
	cur := deep
	for i := 0; ; i++ {
		cur["value"] = marker
		next, ok := cur[fmt.Sprintf("n%d", i)].(map[string]any)
		if !ok {
			break
		}
		cur = next
	}
	getMap(cur, "podOverrides", "spec")["serviceAccountName"] = marker
	inputs = append(inputs, input{hdfsGK, deep})

	for i, in := range inputs {
		findings := Validate(in.gk, in.obj, policies.DefaultProducts(), derivedNaming)
		if !policies.Denied(findings) {
			t.Errorf("input %d (%s): a planted ServiceAccount was not denied", i, in.gk)
		}
		for _, f := range findings {
			if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
				t.Errorf("input %d (%s): finding leaks the value set: %s: %s", i, in.gk, f.Field, f.Message)
			}
		}
	}
}
