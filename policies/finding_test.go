package policies

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestOnlyContentFindingsRatchet: a finding built from evidence ratchets,
// whatever the evidence (even empty); one about the review or the view does
// not.
func TestOnlyContentFindingsRatchet(t *testing.T) {
	path := field.NewPath("spec", "x")
	for _, evidence := range []string{"", "value", "\x00"} {
		if f := Denial("C", path, evidence, "m"); !f.Ratchets() {
			t.Errorf("Denial with evidence %q does not ratchet", evidence)
		}
	}
	f := Unratcheted("StateUnavailable", path, "view %s", "down")
	if f.Ratchets() || f.Severity != Deny || f.Field != "spec.x" || f.Message != "view down" {
		t.Errorf("Unratcheted = %+v", f)
	}
}
