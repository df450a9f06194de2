package policies_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// TestEveryCodeIsInTheContractsDoc: every finding code a policy declares
// (a constant of type policies.Code) is named in docs/contracts.md, so the
// project's own contract reference lists every code a user can meet.
func TestEveryCodeIsInTheContractsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	codes := golden.DeclaredCodes(t, ".")
	if len(codes) < 50 {
		t.Fatalf("found only %d codes; the walk no longer sees the policies' declarations", len(codes))
	}
	for _, code := range codes {
		if !strings.Contains(string(doc), "`"+code.Value+"`") {
			t.Errorf("docs/contracts.md does not name %s (declared in policies/%s)", code.Value, code.File)
		}
	}
}
