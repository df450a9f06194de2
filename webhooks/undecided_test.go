package webhooks

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// givenView is an offline view as `gatehouse check` keeps one: namespaces it
// was given, and StateNotGiven, remembered, for any other; no other objects,
// and every object asked for by name not given.
type givenView struct {
	namespaces map[string]map[string]string
	gaps       []string
}

func (v *givenView) notGiven(what string) error {
	v.gaps = append(v.gaps, what)
	return &route.StateNotGiven{What: what}
}

func (v *givenView) NamespaceLabels(name string) (map[string]string, error) {
	if l, ok := v.namespaces[name]; ok {
		return l, nil
	}
	return nil, v.notGiven("Namespace " + name)
}

func (v *givenView) Lookup(schema.GroupVersionKind, string, string) ([]string, error) {
	return nil, nil
}

func (v *givenView) Objects(schema.GroupVersionKind, string, string) ([]map[string]any, error) {
	return nil, nil
}

func (v *givenView) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	return false, v.notGiven(gvk.Kind + " " + name)
}

func (v *givenView) TakeGaps() []string {
	out := slices.Compact(slices.Sorted(slices.Values(v.gaps)))
	v.gaps = nil
	return out
}

func offlineWith(t *testing.T, view *givenView) *Offline {
	t.Helper()
	opts := optionsWith(t, func(*configv1alpha1.ServerConfig) {})
	opts.Namespaces, opts.ClusterState, opts.StateGaps = view, view, view
	return NewOffline(Build(opts, func(string) bool { return true }), opts)
}

func outcomes(decisions []Decision) map[string]string {
	out := map[string]string{}
	for _, d := range decisions {
		out[d.Webhook] = d.Outcome + " " + strings.Join(d.Missing, ",")
	}
	return out
}

// TestOfflineNamespaceNotGivenIsUndecided: offline, a pod whose Namespace
// the view was not given is undecided by every webhook whose selection or
// evaluation reads the namespace's labels, naming the Namespace, and judged
// by the others: a content denial stands. Given the namespace, the same
// webhooks decide.
func TestOfflineNamespaceNotGivenIsUndecided(t *testing.T) {
	req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(scopeAnnotations("pod,,node")))
	decisions, _ := offlineWith(t, &givenView{}).Review(context.Background(), req)
	got := outcomes(decisions)
	want := map[string]string{
		"pod-security-defaults": "undecided Namespace team-a",
		"harness-proxy":         "undecided Namespace team-a",
		"harness-labels":        "undecided Namespace team-a",
		"pod-security":          "undecided Namespace team-a",
		"secret-scope":          "denied ",
	}
	if !maps.Equal(got, want) {
		t.Errorf("namespace not given:\n got  %v\n want %v", got, want)
	}
	for _, d := range decisions {
		if d.Outcome == DecisionUndecided && (len(d.Response.Patches) > 0 || len(d.Findings) > 0) {
			t.Errorf("%s: undecided with a patch or findings: %+v", d.Webhook, d)
		}
	}

	given := &givenView{namespaces: map[string]map[string]string{"team-a": {"gatehouse.dev/security-defaults": "enabled"}}}
	decisions, _ = offlineWith(t, given).Review(context.Background(), req)
	for webhook, o := range outcomes(decisions) {
		if strings.HasPrefix(o, DecisionUndecided) {
			t.Errorf("namespace given: %s is %s", webhook, o)
		}
	}
}

// TestOfflineReferenceNotGivenIsUndecided: a CRD source that requires a
// DependencyGroup the view was not given cannot be judged (the server warns
// only for a group the cluster lacks): undecided, naming the group.
func TestOfflineReferenceNotGivenIsUndecided(t *testing.T) {
	source := map[string]any{
		"apiVersion": "helmetica.io/v1", "kind": "CustomResourceDefinitionSource",
		"metadata": map[string]any{"name": "mariadb-crds", "namespace": "default"},
		"spec": map[string]any{
			"reference": map[string]any{"kind": "OCIRepository", "name": "mariadb-crds"},
			"requires":  []any{map[string]any{"dependencyGroup": map[string]any{"name": "mariadb"}}},
		},
	}
	gvk := [3]string{dependencygroup.SourceGVK.Group, dependencygroup.SourceGVK.Version, dependencygroup.SourceGVK.Kind}
	gvr := [3]string{dependencygroup.SourceGVK.Group, dependencygroup.SourceGVK.Version, "customresourcedefinitionsources"}
	view := &givenView{namespaces: map[string]map[string]string{"default": {}}}
	decisions, _ := offlineWith(t, view).Review(context.Background(), admissionRequest(t, admissionv1.Create, gvk, gvr, source))
	if got := outcomes(decisions)["crd-source"]; got != "undecided DependencyGroup mariadb" {
		t.Errorf("crd-source: %q, want undecided naming the group (all: %v)", got, outcomes(decisions))
	}
}

// TestWithMissing: the StateUnavailable findings of a decision taken while
// the view lacked something go; a decision other findings deny stays
// denied and says what was missing; any other is undecided.
func TestWithMissing(t *testing.T) {
	unavailable := policies.Finding{Code: policies.StateUnavailable, Field: "spec", Severity: policies.Deny}
	content := policies.Finding{Code: "DependencyGroupCRDClaimed", Field: "spec.crds[0].name", Severity: policies.Deny}
	warning := policies.Finding{Code: "DependencyGroupMissing", Field: "spec.requires[0]", Severity: policies.Warn}
	missing := []string{"DependencyGroup x"}

	d := withMissing(Decision{Webhook: "w", Outcome: DecisionDenied, Findings: []policies.Finding{unavailable, content}}, missing)
	if d.Outcome != DecisionDenied || len(d.Findings) != 1 || d.Findings[0].Code != content.Code || !slices.Equal(d.Missing, missing) {
		t.Errorf("a content denial beside the missing state: %+v", d)
	}
	d = withMissing(Decision{Webhook: "w", Outcome: DecisionDenied, Mode: configv1alpha1.ModeWarn, Findings: []policies.Finding{unavailable, warning}}, missing)
	if d.Outcome != DecisionUndecided || len(d.Findings) != 1 || d.Findings[0].Code != warning.Code || d.Mode != configv1alpha1.ModeWarn || !slices.Equal(d.Missing, missing) {
		t.Errorf("only the view's denial: %+v", d)
	}
	if d := withMissing(Decision{Webhook: "w", Outcome: DecisionAllowed}, nil); d.Outcome != DecisionAllowed {
		t.Errorf("nothing missing: %+v", d)
	}
}

// TestServedReviewsAreNeverUndecided: only the offline chain settles a
// decision by what its view was not given; a served chain whose view
// reports gaps answers as it always did.
func TestServedReviewsAreNeverUndecided(t *testing.T) {
	c := probeChain(servesGroup, &probe{label: "a"}, &probe{deny: true})
	view := &givenView{gaps: []string{"Namespace team-a"}}
	c.opts.StateGaps = view
	v := c.review(context.Background(), ptrTo(admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))))
	for _, d := range v.decisions {
		if d.Outcome == DecisionUndecided || len(d.Missing) > 0 {
			t.Errorf("served decision %s: %s, missing %v", d.Webhook, d.Outcome, d.Missing)
		}
	}
	if v.resp.Allowed {
		t.Error("the served chain allowed what its second member denies")
	}
}
