package route

import (
	"fmt"
	"slices"
	"testing"
)

// TestRegistryValidatesItself feeds validateRegistry registries that break
// each of its rules, one at a time, and expects the error of that rule.
// Registry itself needs no case: init panics when it does not validate, so
// the test binary would not start.
func TestRegistryValidatesItself(t *testing.T) {
	first := registry[0]
	for _, tc := range []struct {
		name   string
		mutate func(defs []Definition) []Definition
		want   string
	}{
		{"a duplicate name", func(defs []Definition) []Definition { return append(defs, first) },
			fmt.Sprintf("webhook name %q is empty or used twice", first.Name)},
		{"an empty name", func(defs []Definition) []Definition { defs[0].Name = ""; return defs },
			`webhook name "" is empty or used twice`},
		{"a path that does not match the name", func(defs []Definition) []Definition { defs[0].Path = "/mutate/other"; return defs },
			fmt.Sprintf("webhook %s: path %q must be %q", first.Name, "/mutate/other", first.Path)},
		{"a path that does not match the type", func(defs []Definition) []Definition { defs[0].Type = "Auditing"; return defs },
			fmt.Sprintf("webhook %s: path %q must be %q", first.Name, first.Path, first.Name)},
		{"an unknown failure policy", func(defs []Definition) []Definition { defs[0].FailurePolicy = "Retry"; return defs },
			fmt.Sprintf("webhook %s: failure policy %q", first.Name, "Retry")},
		{"no operations", func(defs []Definition) []Definition { defs[0].Intercept.Operations = nil; return defs },
			fmt.Sprintf("webhook %s: no operations", first.Name)},
	} {
		err := validateRegistry(tc.mutate(slices.Clone(registry)))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: validateRegistry = %v, want %q", tc.name, err, tc.want)
		}
	}
}
