package catalog_test

import (
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/catalog"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// TestCodesAreEveryDeclaredCode: the table holds exactly the codes the
// sources declare, in their order, so a code added to a policy is added
// here too (or the exception webhook would refuse exceptions naming it).
func TestCodesAreEveryDeclaredCode(t *testing.T) {
	var want []string
	for _, c := range golden.DeclaredCodes(t, "..") {
		want = append(want, c.Value)
	}
	var got []string
	for _, c := range catalog.Codes() {
		got = append(got, string(c))
	}
	if !slices.Equal(got, want) {
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("code %s is declared under policies/ and missing from catalog.Codes", w)
			}
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("catalog.Codes lists %s, which no policy declares", g)
			}
		}
		if !t.Failed() {
			t.Errorf("catalog.Codes lists the codes in another order than the sources declare them")
		}
	}
}
