package route

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failingState is a StateReader that cannot answer (an unsynced or failed
// view).
type failingState struct{ err error }

func (f failingState) Lookup(schema.GroupVersionKind, string, string) ([]string, error) {
	return nil, f.err
}

func (f failingState) Exists(schema.GroupVersionKind, string) (bool, error) { return false, f.err }

func (f failingState) Objects(schema.GroupVersionKind, string, string) ([]map[string]any, error) {
	return nil, f.err
}

// TestPolicyStateFailsWhenTheViewCannotAnswer: every question of the
// policies fails, never answers "none", when the view cannot answer or there
// is none, so the policies deny with StateUnavailable.
func TestPolicyStateFailsWhenTheViewCannotAnswer(t *testing.T) {
	unsynced := errors.New("not synced")
	for _, tc := range []struct {
		state PolicyState
		want  error
	}{
		{PolicyState{failingState{unsynced}}, unsynced},
		{PolicyState{}, ErrNoClusterState},
	} {
		for question, ask := range map[string]func(PolicyState) error{
			"GroupsListingCRD":        func(p PolicyState) error { _, err := p.GroupsListingCRD("c"); return err },
			"SourcesProviding":        func(p PolicyState) error { _, err := p.SourcesProviding("g"); return err },
			"SourcesManaging":         func(p PolicyState) error { _, err := p.SourcesManaging("s"); return err },
			"GroupExists":             func(p PolicyState) error { _, err := p.GroupExists("g"); return err },
			"HarnessesWithScopeLabel": func(p PolicyState) error { _, err := p.HarnessesWithScopeLabel("l"); return err },
			"HarnessesClaiming":       func(p PolicyState) error { _, err := p.HarnessesClaiming("ns", "sa"); return err },
			"HarnessesClaimingAll":    func(p PolicyState) error { _, err := p.HarnessesClaiming("ns", ""); return err },
			"ClusterRolesNamed":       func(p PolicyState) error { _, err := p.ClusterRolesNamed("r"); return err },
			"ClusterRoles":            func(p PolicyState) error { _, err := p.ClusterRoles(); return err },
			"RolesNamed":              func(p PolicyState) error { _, err := p.RolesNamed("r"); return err },
		} {
			if err := ask(tc.state); !errors.Is(err, tc.want) {
				t.Errorf("%s with %v: err = %v, want %v", question, tc.want, err, tc.want)
			}
		}
	}
}
