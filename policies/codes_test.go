package policies_test

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// TestEveryCodeIsNamedAsItsValue: a finding code has one name, the one on
// the wire. Every constant of type policies.Code declared under policies/ is
// named exactly as its value (OverrideDocumentEmpty = "OverrideDocumentEmpty"),
// so a code met in a denial, a doc or a log is also the identifier to search
// for. The walk reads the sources (golden.DeclaredCodes: typed constants,
// conversions to Code, tests left out), so a constant added under another
// name fails here.
//
// No constant is excepted. The one file that declares codes under other
// names, policies/overrides/before_test.go, is a test (left out by the walk):
// generated, a frozen copy of the package at an earlier commit whose
// identifiers carry a "before" prefix so that they do not collide with the
// live ones, and it never changes.
func TestEveryCodeIsNamedAsItsValue(t *testing.T) {
	codes := golden.DeclaredCodes(t, ".")
	if len(codes) < 50 {
		t.Fatalf("found only %d codes; the walk no longer sees the policies' declarations", len(codes))
	}
	for _, code := range codes {
		if code.Name != code.Value {
			t.Errorf("policies/%s: constant %s has the code %q; name it %s", code.File, code.Name, code.Value, code.Value)
		}
	}
}

// TestEveryCodeIsDeclaredOnce: a code shared by several policies (as
// StateUnavailable is) is declared once, in package policies, and the
// policies use that constant; two declarations of one value would be two
// names for one thing, free to drift apart in their documentation.
func TestEveryCodeIsDeclaredOnce(t *testing.T) {
	where := map[string]string{}
	for _, code := range golden.DeclaredCodes(t, ".") {
		if first, ok := where[code.Value]; ok {
			t.Errorf("code %s is declared in policies/%s and again in policies/%s; declare it once", code.Value, first, code.File)
			continue
		}
		where[code.Value] = code.File
	}
	if where[string(policies.StateUnavailable)] != "finding.go" {
		t.Errorf("StateUnavailable is declared in %q, want policies/finding.go", where[string(policies.StateUnavailable)])
	}
}
