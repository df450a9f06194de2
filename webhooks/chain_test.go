package webhooks

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/adapters"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// probe is a member evaluator that records what it was handed and does
// what it is told.
type probe struct {
	seen    []map[string]any
	label   string // set on the object's metadata.labels when non-empty
	deny    bool
	present []bool // whether the previous probe's label was on the object
	after   string
	// cow: change the object by copying on write, not in place.
	cow bool
}

func (p *probe) Evaluate(_ context.Context, r *adapters.Review) (adapters.Result, error) {
	p.seen = append(p.seen, r.Object)
	meta, _ := r.Object["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	if p.after != "" {
		_, ok := labels[p.after]
		p.present = append(p.present, ok)
	}
	res := adapters.Result{}
	if p.label != "" && p.cow {
		meta, labels = maps.Clone(meta), maps.Clone(labels)
		if meta == nil {
			meta = map[string]any{}
		}
		if labels == nil {
			labels = map[string]any{}
		}
		labels[p.label] = "x"
		meta["labels"] = labels
		r.Object = maps.Clone(r.Object)
		r.Object["metadata"] = meta
		res.Mutated, res.CopiedOnWrite = true, true
	} else if p.label != "" {
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels[p.label] = "x"
		res.Mutated = true
	}
	if p.deny {
		res.Findings = []policies.Finding{{Code: "ProbeDenied", Field: "metadata", Message: "denied", Severity: policies.Deny}}
	}
	return res, nil
}

// probeChain is a chain of mutating members over every pod.
func probeChain(serves serving, probes ...*probe) *chain {
	c := &chain{name: "probes", failurePolicy: admissionregistrationv1.Fail, serves: serves}
	for i, p := range probes {
		def := route.Definition{Name: "probe-" + string(rune('a'+i)), Type: route.Mutating, FailurePolicy: admissionregistrationv1.Fail,
			Intercept: route.Intercept{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Resources: []route.Resource{{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod"}}}}
		c.members = append(c.members, member{Member: route.Member{Def: def, Places: def.Placements(route.Options{})}, eval: p})
	}
	return c
}

// TestChainDecodesOnceAndSharesTheObject: every member of a review is
// handed the same decoded object, and a mutating member's change is what
// the next member sees, with one patch for the whole chain.
func TestChainDecodesOnceAndSharesTheObject(t *testing.T) {
	first, second, third := &probe{label: "first"}, &probe{label: "second", after: "first"}, &probe{after: "second"}
	c := probeChain(servesGroup, first, second, third)
	req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))
	v := c.review(context.Background(), &req)
	if len(v.decisions) != 3 || !v.resp.Allowed {
		t.Fatalf("%d decisions, allowed=%v; want three members run and an allow", len(v.decisions), v.resp.Allowed)
	}
	for _, p := range []*probe{second, third} {
		if len(p.seen) != 1 || reflect.ValueOf(p.seen[0]).Pointer() != reflect.ValueOf(first.seen[0]).Pointer() {
			t.Error("a member was handed an object decoded again, not the shared one")
		}
		if len(p.present) != 1 || !p.present[0] {
			t.Error("a member did not see the change of the member before it")
		}
	}
	var paths []string
	for _, op := range v.resp.Patches {
		paths = append(paths, op.Operation+" "+op.Path)
	}
	if !reflect.DeepEqual(paths, []string{"add /metadata/labels"}) {
		t.Errorf("patch %v, want the one add of both labels", paths)
	}
	for _, d := range v.decisions {
		if d.Outcome != DecisionAllowed || len(d.Response.Patches) != 0 {
			t.Errorf("%s: outcome %s with %d patch operations; a combined member's change is in the chain's one patch", d.Webhook, d.Outcome, len(d.Response.Patches))
		}
	}
}

// TestChainStopsAtTheFirstDenial: the server's chain answers with the first
// member that does not allow; the members after it do not run.
func TestChainStopsAtTheFirstDenial(t *testing.T) {
	denier, after := &probe{deny: true}, &probe{}
	v := probeChain(servesGroup, denier, after).review(context.Background(), ptrTo(admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))))
	if v.resp.Allowed || v.resp.Result == nil || v.resp.Result.Code != 422 || len(after.seen) != 0 || len(v.decisions) != 1 {
		t.Fatalf("allowed=%v result=%+v, %d decisions, the member after the denial ran %d times", v.resp.Allowed, v.resp.Result, len(v.decisions), len(after.seen))
	}
	if v.decisions[0].Outcome != DecisionDenied {
		t.Errorf("outcome %s, want %s", v.decisions[0].Outcome, DecisionDenied)
	}
}

// TestOfflineChainEveryMemberDecides: `gatehouse check`'s chain runs every
// member; each mutating member's patch is its own; a member that mutated
// but denied leaves the object as it found it.
func TestOfflineChainEveryMemberDecides(t *testing.T) {
	first, denier, last := &probe{label: "first"}, &probe{label: "denied", deny: true, after: "first"}, &probe{after: "denied"}
	v := probeChain(servesCheck, first, denier, last).review(context.Background(), ptrTo(admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))))
	if len(v.decisions) != 3 {
		t.Fatalf("%d decisions, want every member's", len(v.decisions))
	}
	if got := v.decisions[0].Response.Patches; len(got) != 1 || got[0].Path != "/metadata/labels" {
		t.Errorf("first member's patch %v, want its own add", got)
	}
	if v.decisions[1].Response.Allowed || len(v.decisions[1].Response.Patches) != 0 {
		t.Errorf("the denying member: allowed=%v patch %v", v.decisions[1].Response.Allowed, v.decisions[1].Response.Patches)
	}
	if len(last.present) != 1 || last.present[0] {
		t.Error("the member after a denial saw the denying member's change")
	}
	labels := v.object["metadata"].(map[string]any)["labels"].(map[string]any)
	if _, ok := labels["first"]; !ok {
		t.Errorf("final object lost the allowed change: %v", labels)
	}
	if _, ok := labels["denied"]; ok {
		t.Errorf("final object kept the denied change: %v", labels)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestChainPatchesCopyOnWriteAndInPlaceChanges: however each member changes
// the object, copying on write or in place and in either order, the chain's
// one patch, applied to the object as sent, carries every change. (A chain
// that kept patching from the decoded object after an in-place change would
// lose that change: the in-place member changed the decoded object too.)
func TestChainPatchesCopyOnWriteAndInPlaceChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		cow  [2]bool
	}{
		{"both copy on write", [2]bool{true, true}},
		{"copy on write, then in place", [2]bool{true, false}},
		{"in place, then copy on write", [2]bool{false, true}},
		{"both in place", [2]bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := probeChain(servesGroup, &probe{label: "first", cow: tc.cow[0]}, &probe{label: "second", cow: tc.cow[1]})
			pod := secretPod(nil)
			req := admissionRequest(t, admissionv1.Create, podKind, podResource, pod)
			v := c.review(context.Background(), &req)
			if !v.resp.Allowed || len(v.resp.Patches) == 0 {
				t.Fatalf("allowed=%v with %d patch operations", v.resp.Allowed, len(v.resp.Patches))
			}
			patched, err := applyOps(req.Object.Raw, v.resp.Patches)
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(patched, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(req.Object.Raw, &want); err != nil {
				t.Fatal(err)
			}
			meta := want["metadata"].(map[string]any)
			labels, _ := meta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				meta["labels"] = labels
			}
			labels["first"], labels["second"] = "x", "x"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the patch %v does not make both members' changes", v.resp.Patches)
			}
		})
	}
}
