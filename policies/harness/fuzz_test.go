package harness

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// FuzzValidateHarness feeds arbitrary YAML or JSON, decoded as the webhook
// decodes an object, to ValidateHarness: for panics, determinism, sorted
// well-formed findings, and the property that a State error always denies
// (with one StateUnavailable at most).
func FuzzValidateHarness(f *testing.F) {
	golden.AddFixtureSeeds(f, filepath.Join("testdata", "*", "*.yaml"))
	f.Add([]byte(`{"spec":{"mode":1,"clusterRoles":{"rules":[null,{"verbs":["scopedlist"],"resourceNames":[1]},{"verbs":"*"}]},"acknowledgedGrants":[{"name":1e300},{"name":"a","apiGroups":"","verbs":[null]},"x"]}}`))
	f.Add([]byte(`{"spec":{"operator":{"namespace":"a","serviceAccounts":[null,"a","a"]},"clusterRoles":[{"name":"x","rules":[]}]}}`))
	f.Add([]byte(`{"spec":{"scopeToLabel":"a","operator":{"namespace":"a"},"clusterRoles":{"rules":[{"apiGroups":["","*"],"resources":["secrets","*"],"verbs":["list","*","bind"]},{"nonResourceURLs":["*"],"verbs":["*"]}]},` +
		`"acknowledgedGrants":[{"name":"a","apiGroups":["*"],"resources":["*"],"verbs":["*"],"reason":"0123456789"},{"name":"a","apiGroups":[""],"resources":["secrets"],"verbs":["list"],"reason":"          x"}]}}`))
	f.Add([]byte(`{"spec":{"scopeToLabel":"k8s.io/a","clusterRoleBindings":[{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"},{"kind":"Role"},null],` +
		`"roleBindings":{"roleRefs":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"mariadb-tenant"},{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"missing"}]},` +
		`"clusterRoles":{"rules":[{"apiGroups":["authentication.k8s.io"],"resources":["userextras/a/b","*/"],"verbs":["impersonate"],"resourceNames":[""]}]}}}`))
	f.Add([]byte(`spec: spec`))

	golden.FuzzObjects(f, func(t *testing.T, obj map[string]any) {
		first := ValidateHarness(obj, seededState())
		if again := ValidateHarness(obj, seededState()); !reflect.DeepEqual(first, again) {
			t.Fatal("not deterministic")
		}
		checkFindings(t, first)
		failed := ValidateHarness(obj, failingState{})
		checkFindings(t, failed)
		if !policies.Denied(failed) {
			t.Fatalf("a State error did not deny: %+v", failed)
		}
		n := 0
		for _, f := range failed {
			if f.Code == policies.StateUnavailable {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("%d StateUnavailable findings", n)
		}
	})
}

var warningCodes = []policies.Code{HarnessGrantDangerous, HarnessGrantAcknowledged, HarnessAcknowledgementUnused}

func checkFindings(t *testing.T, findings []policies.Finding) {
	t.Helper()
	for _, f := range findings {
		if f.Field == "" || f.Message == "" || f.Code == "" {
			t.Fatalf("finding without field, code or message: %+v", f)
		}
		if f.Severity == policies.Warn && !slices.Contains(warningCodes, f.Code) {
			t.Fatalf("code %s warns", f.Code)
		}
		if f.Severity == policies.Deny && f.Code != HarnessGrantDangerous && slices.Contains(warningCodes, f.Code) {
			t.Fatalf("code %s denies", f.Code)
		}
	}
	sorted := slices.Clone(findings)
	policies.Sort(sorted)
	if !reflect.DeepEqual(sorted, findings) {
		t.Fatal("findings are not sorted")
	}
}
