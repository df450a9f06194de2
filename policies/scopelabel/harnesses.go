// Which scope labels apply.
//
// Reads, in each OperatorHarness: spec.scopeToLabel, spec.mode, and what
// harness.Claims reads. Allows: anything; a non-string scopeToLabel or mode
// reads as absent.

package scopelabel

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// serviceAccountPrefix starts the user name of every service account.
const serviceAccountPrefix = "system:serviceaccount:"

// EnforcedKeys returns the scopeToLabel keys of the harnesses in Enforce
// mode (spec.mode "Enforce" or absent; anything but "Report" enforces, so a
// malformed mode never switches labelling off), deduplicated and sorted.
func EnforcedKeys(harnesses []map[string]any) []string {
	var out []string
	for _, h := range harnesses {
		if mode, _ := fields.String(h, "spec", "mode"); mode == "Report" {
			continue
		}
		if key, _ := fields.String(h, "spec", "scopeToLabel"); key != "" {
			out = append(out, key)
		}
	}
	return keys(out)
}

// ClaimedKeys returns the EnforcedKeys of the harnesses that claim the
// service account whose user name is username
// ("system:serviceaccount:<namespace>:<name>"); none for any other user.
func ClaimedKeys(harnesses []map[string]any, username string) []string {
	namespace, account, ok := ServiceAccount(username)
	if !ok {
		return nil
	}
	var claiming []map[string]any
	for _, h := range harnesses {
		if harness.Claims(h, namespace, account) {
			claiming = append(claiming, h)
		}
	}
	return EnforcedKeys(claiming)
}

// Harnessed reports whether some OperatorHarness, in any mode, claims the
// service account whose user name is username; false for any other user.
// Report mode does not exempt an operator from the UPDATE guard: the guard
// protects the scope labels of the other, Enforce-mode harnesses.
func Harnessed(harnesses []map[string]any, username string) bool {
	namespace, account, ok := ServiceAccount(username)
	if !ok {
		return false
	}
	for _, h := range harnesses {
		if harness.Claims(h, namespace, account) {
			return true
		}
	}
	return false
}

// ServiceAccount splits a service account's user name into its namespace and
// name; false for any other user name.
func ServiceAccount(username string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(username, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	if !ok || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}
