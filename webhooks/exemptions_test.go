package webhooks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// exemptingLabel exempts every namespace that carries it
// (exemptions.namespaceLabels) in the tests below.
const exemptingLabel = "platform.example.com/unmanaged"

// escapeServer serves every webhook with the harnessServer's harness (whose
// scope label is scopeKey and whose operator is operatorAccount) and
// exemptingLabel as an exemption, with the selections managed or not.
func escapeOptions(t *testing.T, managed bool) route.Options {
	t.Helper()
	opts := optionsWith(t, func(c *configv1alpha1.ServerConfig) {
		c.Harness.ManageSelections = managed
		c.Exemptions.NamespaceLabels = []configv1alpha1.NamespaceLabel{{Key: exemptingLabel, Operator: configv1alpha1.LabelOpExists}}
	})
	state := harnessServerState()
	opts.ClusterState, opts.Namespaces = state, state
	return opts
}

// namespaceObject is a Namespace called name with these labels (and the
// name label the API server sets).
func namespaceObject(name string, l map[string]string) map[string]any {
	all := map[string]any{"kubernetes.io/metadata.name": name}
	for k, v := range l {
		all[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": all}}
}

// namespaceUpdate is a review of an UPDATE of the Namespace tenant (of
// subresource sub, "" for the main resource) by user, from old to new labels.
func namespaceUpdate(t *testing.T, uid, sub, user string, old, new map[string]string) []byte {
	t.Helper()
	body := asUser(t, user, reviewBodyIn(t, uid, admissionv1.Update, [3]string{"", "v1", "Namespace"}, [3]string{"", "v1", "namespaces"},
		"tenant", "tenant", namespaceObject("tenant", new), namespaceObject("tenant", old)))
	if sub != "" {
		body = withSubresource(t, sub, body)
	}
	return body
}

// TestNamespaceUpdateCannotExemptItself: a harnessed operator's UPDATE of a
// Namespace that strips the scope label and adds an exempting label in the
// same change is judged (and denied, ScopeLabelChanged) by the server on
// every path that takes it, through the main resource and the status and
// finalize subresources, with the selections managed or not; the same
// strip in a namespace that was exempt already is exempt. Before, the
// server read the new object's labels alone and called the escape exempt.
func TestNamespaceUpdateCannotExemptItself(t *testing.T) {
	stored := map[string]string{scopeKey: "tenant"}
	escape := map[string]string{exemptingLabel: "true"}
	exempt := map[string]string{scopeKey: "tenant", exemptingLabel: "true"}
	for _, managed := range []bool{false, true} {
		ts := startServerWith(t, escapeOptions(t, managed))
		combined := "/validate/combined-fail"
		if managed {
			combined = "/validate/combined-fail-accounts"
		}
		for _, path := range []string{"/validate/harness-labels-guard", combined} {
			for _, sub := range []string{"", "status", "finalize"} {
				name := fmt.Sprintf("managed=%v %s %s", managed, path, sub)
				_, r := ts.post(t, path, "application/json", namespaceUpdate(t, "e1", sub, operatorAccount, stored, escape))
				if !deniedWith(r, "ScopeLabelChanged", "metadata.labels["+scopeKey+"]", "harness-labels-guard") {
					t.Errorf("%s: the escape: allowed=%v %s", name, r.Allowed, fmtCauses(r))
				}
				_, r = ts.post(t, path, "application/json", namespaceUpdate(t, "e2", sub, operatorAccount, exempt, escape))
				if !r.Allowed {
					t.Errorf("%s: a strip in a namespace exempt before and after: %s", name, fmtCauses(r))
				}
			}
		}
	}
}

// TestNamespaceExemptionIsOldAndNew: the server's exemption of a Namespace's
// own request, and the rendered entries as the API server evaluates them,
// agree that it is exempt by label only when both the old and the new
// Namespace are: for every layout, with the selections managed or not,
// every UPDATE (main resource, status, finalize) between every pair of
// label sets is sent to the guard exactly when the server judges it. The
// API server matches a namespaceSelector against the new object for the
// main resource and against the stored one for a subresource, and an
// objectSelector against either.
func TestNamespaceExemptionIsOldAndNew(t *testing.T) {
	sets := map[string]map[string]string{
		"scoped":          {scopeKey: "tenant"},
		"exempt":          {exemptingLabel: "true"},
		"scoped, exempt":  {scopeKey: "tenant", exemptingLabel: "true"},
		"none":            {},
		"exempt as other": {exemptingLabel: "x", "team": "a"},
	}
	var names []string
	for name := range sets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, managed := range []bool{false, true} {
		opts := escapeOptions(t, managed)
		c := &chain{opts: opts}
		for _, layout := range []string{route.LayoutSeparate, route.LayoutCombined} {
			entries := renderEntries(t, route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: layout, Options: opts})
			sentOnce := 0
			for _, sub := range []string{"", "status", "finalize"} {
				for _, from := range names {
					for _, to := range names {
						if from == to {
							continue // labels unchanged: the guard is not sent it
						}
						req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
							Operation: admissionv1.Update, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "namespaces"}, SubResource: sub,
							Namespace: "tenant", Name: "tenant", UserInfo: authenticationv1.UserInfo{Username: operatorAccount},
						}}
						req.Object.Raw = mustJSON(t, namespaceObject("tenant", sets[to]))
						req.OldObject.Raw = mustJSON(t, namespaceObject("tenant", sets[from]))
						judged := !c.opts.Exempt(req, (&namespaceView{}).labels)
						var sending []string
						for _, e := range entries {
							if e.sendsNamespaceUpdate(t, req, sets[from], sets[to]) && entryRunsGuard(e.name, opts) {
								sending = append(sending, e.name)
							}
						}
						what := fmt.Sprintf("managed=%v %s: %s UPDATE %q from %s to %s", managed, layout, "namespaces/"+sub, sub, from, to)
						switch {
						case len(sending) > 1:
							t.Errorf("%s: sent by %v, want one entry", what, sending)
						case judged != (len(sending) == 1):
							t.Errorf("%s: the server judges=%v, the API server sends it to the guard by %v", what, judged, sending)
						}
						if len(sending) == 1 {
							sentOnce++
						}
					}
				}
			}
			if sentOnce == 0 {
				t.Errorf("managed=%v %s: no UPDATE reached the guard: the comparison proves nothing", managed, layout)
			}
		}
	}
}

// entryRunsGuard reports whether the rendered entry called name runs
// harness-labels-guard: its own entries in the separate layout, the
// entries of the combined group it is a member of.
func entryRunsGuard(name string, opts route.Options) bool {
	if strings.HasPrefix(name, "harness-labels-guard") {
		return true
	}
	for _, g := range route.Groups() {
		if !slices.Contains(g.EntryNames(opts), name) {
			continue
		}
		for _, m := range g.Members(opts) {
			if m.Def.Name == "harness-labels-guard" {
				return true
			}
		}
	}
	return false
}

// sendsNamespaceUpdate evaluates the entry as the API server does for
// req, an UPDATE of a Namespace (or of one of its subresources) from old to
// new labels: rules, namespaceSelector (on the new Namespace for the main
// resource, on the stored one for a subresource), objectSelector (on either),
// then every matchCondition.
func (e renderedEntry) sendsNamespaceUpdate(t *testing.T, req *admission.Request, old, new map[string]string) bool {
	t.Helper()
	gvr := schema.GroupVersionResource(req.Resource)
	if !rulesMatchIn(e.rules, admissionregistrationv1.Update, gvr, req.SubResource, admissionregistrationv1.ClusterScope) {
		return false
	}
	withName := func(l map[string]string) labels.Set {
		out := labels.Set{"kubernetes.io/metadata.name": req.Name}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	nsLabels := withName(new)
	if req.SubResource != "" {
		nsLabels = withName(old)
	}
	sel, err := metav1.LabelSelectorAsSelector(e.namespaces)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(nsLabels) {
		return false
	}
	if e.objects != nil {
		objSel, err := metav1.LabelSelectorAsSelector(e.objects)
		if err != nil {
			t.Fatal(err)
		}
		if !objSel.Matches(withName(old)) && !objSel.Matches(withName(new)) {
			return false
		}
	}
	object, oldObject := namespaceObject(req.Name, new), namespaceObject(req.Name, old)
	for _, c := range e.conditions {
		prg, ok := compiled[c.Expression]
		if !ok {
			prg = compile(t, c.Expression)
			compiled[c.Expression] = prg
		}
		sent, err := route.EvalMatchCondition(prg, route.CelRequest(req), object, oldObject)
		if err != nil {
			t.Fatalf("%s: %s: %v", e.name, c.Name, err)
		}
		if !sent {
			return false
		}
	}
	return true
}
