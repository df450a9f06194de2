package overrides

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestLimitsDenyUnratcheted: every walk and parse limit denies with its own
// code, wherever in the document it is reached, and the finding never
// ratchets (it carries no evidence), so an UPDATE that keeps a document past
// a limit is denied as a CREATE is.
func TestLimitsDenyUnratcheted(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	entry := func(body string) map[string]string {
		return one(apiLine + "overrides:\n- {component: storage, kind: DaemonSet, " + body + "}\n")
	}
	tests := []struct {
		name string
		data map[string]string
		code policies.Code
	}{
		{"deep in an open subtree", entry("patch: {spec: {updateStrategy: " + nest("{a: ", "}", 120) + "}}"), OverrideDocumentTooDeep},
		{"deep in a list of an open subtree", entry("patch: {spec: {template: {spec: {tolerations: [" + nest("[", "]", 120) + "]}}}}"),
			OverrideDocumentTooDeep},
		{"deep in a label value", entry("patch: {metadata: {labels: {a: " + nest("[", "]", 120) + "}}}"), OverrideDocumentTooDeep},
		{"deep in extraArgs", entry("extraArgs: {run: [" + nest("[", "]", 120) + "]}"), OverrideDocumentTooDeep},
		{"deep in sites", entry("sites: [" + nest("[", "]", 120) + "]"), OverrideDocumentTooDeep},
		{"deep in an unknown field", entry("priority: " + nest("{a: ", "}", 120)), OverrideDocumentTooDeep},
		{"deep at the top", one(apiLine + "overrides: " + nest("[", "]", 120) + "\n"), OverrideDocumentTooDeep},
		// Past the YAML parser's own limit (10000 levels), still well inside
		// the 1 MiB a ConfigMap may hold.
		{"past the parser's depth", one(apiLine + "overrides: " + nest("[", "]", 20000) + "\n"), OverrideDocumentTooDeep},
		{"past the parser's depth in mappings", one(apiLine + "overrides: " + nest("{a: ", "}", 20000) + "\n"), OverrideDocumentTooDeep},
		{"alias bomb", one(aliasBomb()), OverrideDocumentTooLarge},
		{"syntax error", one(apiLine + "overrides: [\n"), OverrideDocumentInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, live := range []Live{typicalLive(), nil} {
				findings := Validate(anyTable, tt.data, live)
				checkWellFormed(t, findings)
				found := false
				for _, f := range findings {
					if f.Code != tt.code {
						continue
					}
					found = true
					if f.Severity != policies.Deny || f.Ratchets() || f.Field != doc0 {
						t.Errorf("limit finding %+v: want an unratcheted denial of %s", f, doc0)
					}
				}
				if !found {
					t.Errorf("no %s: %v", tt.code, results(findings))
				}
			}
		})
	}
}

// TestTooManyFindingsUnratcheted: the cap on findings is a limit too.
func TestTooManyFindingsUnratcheted(t *testing.T) {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n")
	// Five findings an entry, within the engine's 256 entries.
	for i := 0; i < engineMaxEntries; i++ {
		b.WriteString("- {component: storage, kind: DaemonSet, patch: {spec: {paused: true, a: 1, b: 1, c: 1, d: 1}}}\n")
	}
	findings := Validate(anyTable, one(b.String()), typicalLive())
	for _, f := range findings {
		if f.Code == OverrideTooManyFindings {
			if f.Ratchets() {
				t.Errorf("%s ratchets", f.Code)
			}
			return
		}
	}
	t.Errorf("no %s among %d findings", OverrideTooManyFindings, len(findings))
}
