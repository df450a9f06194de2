package route

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies/scopelabel"
)

// TestHarnessedAccountsExpression: the condition gatehouse adds to the
// harnessed-account entries, evaluated with cel-go as the API server
// evaluates matchConditions, is true for exactly the service accounts some
// harness claims (scopelabel.Harnessed, what harness-labels-guard and
// harness-labels decide by), over harnesses of every claim shape.
func TestHarnessedAccountsExpression(t *testing.T) {
	h := func(group string, operator map[string]any) map[string]any {
		return map[string]any{"apiVersion": group + "/v1", "kind": "OperatorHarness", "spec": map[string]any{"operator": operator}}
	}
	harnesses := []map[string]any{
		h("vshn.net", map[string]any{"namespace": "listed", "serviceAccounts": []any{"operator", "webhook"}}),
		h("helmetica.io", map[string]any{"namespace": "whole"}),
		h("vshn.net", map[string]any{"namespace": "empty-list", "serviceAccounts": []any{}}),
		h("vshn.net", map[string]any{"namespace": "odd", "serviceAccounts": []any{1.0, "", map[string]any{}}}),
		h("vshn.net", map[string]any{"serviceAccounts": []any{"nowhere"}}),
		{"spec": "not a map"},
	}
	var users []string
	for _, ns := range []string{"listed", "whole", "empty-list", "odd", "other", "whole2", "wholex"} {
		for _, sa := range []string{"operator", "webhook", "default", "nowhere", "x"} {
			users = append(users, "system:serviceaccount:"+ns+":"+sa)
		}
	}
	users = append(users, "alice", "system:serviceaccount:whole", "system:serviceaccounts:whole:x", "system:node:whole:x")
	for _, set := range [][]map[string]any{nil, harnesses[:1], harnesses} {
		expr := HarnessedAccountsExpression(set)
		prg, err := CompileMatchCondition(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		trueFor := 0
		for _, user := range users {
			got, err := EvalMatchCondition(prg, map[string]any{"userInfo": map[string]any{"username": user}}, nil, nil)
			if err != nil {
				t.Fatalf("%s for %s: %v", expr, user, err)
			}
			if want := scopelabel.Harnessed(set, user); got != want {
				t.Errorf("%s: %s gives %v, the policies say harnessed=%v", expr, user, got, want)
			}
			if got {
				trueFor++
			}
		}
		if len(set) == len(harnesses) && trueFor < 10 {
			t.Errorf("%s is true for %d users; the case proves little", expr, trueFor)
		}
	}
	if got := HarnessedAccountsExpression(nil); got != "false" {
		t.Errorf("no harness: %q, want false", got)
	}
	var many []map[string]any
	for i := range 500 {
		many = append(many, h("vshn.net", map[string]any{"namespace": fmt.Sprintf("team-%03d", i), "serviceAccounts": []any{"operator"}}))
	}
	if got := HarnessedAccountsExpression(many); got != "true" {
		t.Errorf("a list past %d characters renders %d characters, want the broad true", maxAccountsExpression, len(got))
	}
}

// TestHarnessedAccountEntries names the entries the condition is added to:
// none for a static install; harness-labels' cluster-scoped entry and
// harness-labels-guard's two (Namespaces' own requests have one of their
// own) in either layout when the selections are managed.
func TestHarnessedAccountEntries(t *testing.T) {
	if got := HarnessedAccountEntries(Options{}); len(got) != 0 {
		t.Errorf("static: %v", got)
	}
	got := strings.Join(HarnessedAccountEntries(Options{ManagedSelections: true}), " ")
	want := "harness-labels-cluster.gatehouse.dev harness-labels-guard.gatehouse.dev harness-labels-guard-namespaces.gatehouse.dev " +
		"mutating-ignore-accounts.gatehouse.dev validating-fail-accounts.gatehouse.dev validating-fail-accounts-namespaces.gatehouse.dev"
	if got != want {
		t.Errorf("managed: %s, want %s", got, want)
	}
}
