package audit

import (
	"testing"

	policyreportv1alpha2 "github.com/gatehouse-dev/gatehouse/api/policyreport/v1alpha2"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
)

// TestExceptionStateResult: an exception that excused findings passes;
// one in every other state, which excuses nothing, warns, with a message
// of its own and the state and count as properties.
func TestExceptionStateResult(t *testing.T) {
	obj := Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "ClusterException", Name: "scope-migration", UID: "u1"}
	messages := map[string]bool{}
	for _, state := range []exception.State{exception.StateUsed, exception.StateUnused, exception.StateExpired, exception.StateDisabled, exception.StateInvalid} {
		r := ExceptionStateResult(obj, exception.Status{Name: "scope-migration", State: state, Excused: 2})
		want := policyreportv1alpha2.StatusWarn
		if state == exception.StateUsed {
			want = policyreportv1alpha2.StatusPass
		}
		if r.Result != want || r.Rule != RuleExceptionState || r.Policy != "exception" ||
			r.Properties[PropertyExceptionState] != string(state) || r.Properties[PropertyExcusedCount] != "2" ||
			len(r.Resources) != 1 || r.Resources[0].UID != "u1" {
			t.Errorf("%s: %+v", state, r)
		}
		if r.Message == "" || messages[r.Message] {
			t.Errorf("%s: message %q is empty or another state's", state, r.Message)
		}
		messages[r.Message] = true
	}
}

// TestExceptionKey: the key Statuses names an exception by, for the two
// kinds of gatehouse.dev only.
func TestExceptionKey(t *testing.T) {
	for _, tc := range []struct {
		obj  Object
		want string
		ok   bool
	}{
		{Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "ClusterException", Name: "c"}, "c", true},
		{Object{APIVersion: "gatehouse.dev/v1alpha1", Kind: "Exception", Namespace: "team-a", Name: "e"}, "team-a/e", true},
		{Object{APIVersion: "example.com/v1", Kind: "Exception", Namespace: "team-a", Name: "e"}, "", false},
		{Object{APIVersion: "v1", Kind: "Pod", Namespace: "team-a", Name: "e"}, "", false},
	} {
		if got, ok := ExceptionKey(tc.obj); got != tc.want || ok != tc.ok {
			t.Errorf("%+v: %q, %v; want %q, %v", tc.obj, got, ok, tc.want, tc.ok)
		}
	}
}
