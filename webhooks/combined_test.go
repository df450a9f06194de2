package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// renderedEntry is one rendered webhook entry, reduced to what routes a
// request and its failure policy.
type renderedEntry struct {
	name       string
	rules      []admissionregistrationv1.RuleWithOperations
	conditions []admissionregistrationv1.MatchCondition
	namespaces *metav1.LabelSelector
	objects    *metav1.LabelSelector
	failure    admissionregistrationv1.FailurePolicyType
}

func renderEntries(t *testing.T, o route.ManifestOptions) []renderedEntry {
	t.Helper()
	rendered, err := render.WebhookConfigurations(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []renderedEntry
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	for {
		var cfg struct {
			Webhooks []struct {
				Name              string                                       `json:"name"`
				Rules             []admissionregistrationv1.RuleWithOperations `json:"rules"`
				MatchConditions   []admissionregistrationv1.MatchCondition     `json:"matchConditions"`
				NamespaceSelector *metav1.LabelSelector                        `json:"namespaceSelector"`
				ObjectSelector    *metav1.LabelSelector                        `json:"objectSelector"`
				FailurePolicy     admissionregistrationv1.FailurePolicyType    `json:"failurePolicy"`
			} `json:"webhooks"`
		}
		if err := dec.Decode(&cfg); err != nil {
			break
		}
		for _, w := range cfg.Webhooks {
			out = append(out, renderedEntry{w.Name, w.Rules, w.MatchConditions, w.NamespaceSelector, w.ObjectSelector, w.FailurePolicy})
		}
	}
	return out
}

// compiled memoizes the CEL programs of the rendered expressions.
var compiled = map[string]cel.Program{}

// sends evaluates an entry as the API server does: rules, namespaceSelector
// (on the object's namespace), then every matchCondition.
func (e renderedEntry) sends(t *testing.T, op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, sub, namespace, name, user string, labelsChanged bool, nsLabels map[string]string) bool {
	t.Helper()
	isNamespace := gvr.Group == "" && gvr.Resource == "namespaces"
	scope := admissionregistrationv1.ClusterScope
	if namespace != "" && !isNamespace {
		scope = admissionregistrationv1.NamespacedScope
	}
	if !rulesMatchIn(e.rules, op, gvr, sub, scope) {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(e.namespaces)
	if err != nil {
		t.Fatal(err)
	}
	// (The API server never skips a cluster-scoped object other than a
	// Namespace by its namespaceSelector; every selection but the excluded
	// names is of namespaced objects only, so the test applies it to
	// every object, as check does with the labels of namespace "".)
	if !sel.Matches(labels.Set(nsLabels)) {
		return false
	}
	// The objectSelector matches when the old or the new object does
	// (objectPair's, which carry the same labels when present).
	if e.objects != nil {
		objSel, err := metav1.LabelSelectorAsSelector(e.objects)
		if err != nil {
			t.Fatal(err)
		}
		object, oldObject := objectPair(op, labelsChanged)
		if !objectSelected(objSel, object) && !objectSelected(objSel, oldObject) {
			return false
		}
	}
	for _, c := range e.conditions {
		prg, ok := compiled[c.Expression]
		if !ok {
			prg = compile(t, c.Expression)
			compiled[c.Expression] = prg
		}
		if !evalBool(t, prg, op, gvr, sub, namespace, name, user, labelsChanged) {
			return false
		}
	}
	return true
}

// objectSelected reports whether sel matches obj's labels, as the API
// server's objectSelector does (no object matches nothing).
func objectSelected(sel labels.Selector, obj map[string]any) bool {
	if obj == nil {
		return false
	}
	set := labels.Set{}
	meta, _ := obj["metadata"].(map[string]any)
	l, _ := meta["labels"].(map[string]any)
	for k, v := range l {
		set[k], _ = v.(string)
	}
	return sel.Matches(set)
}

// TestCombinedRunsWhatSeparateEntriesWould: for every request, namespace and
// user, the members the combined entries run (their rendered routing, then
// the server's member selection) are exactly the webhooks the separate
// entries would call.
func TestCombinedRunsWhatSeparateEntriesWould(t *testing.T) {
	for _, managed := range []bool{false, true} {
		t.Run(fmt.Sprintf("managed namespace labels %v", managed), func(t *testing.T) {
			combinedRunsWhatSeparateEntriesWould(t, managed)
		})
	}
}

func combinedRunsWhatSeparateEntriesWould(t *testing.T, managed bool) {
	opts := route.Options{
		Products:                policies.ProductSelector{GroupSuffixes: []string{".kubedoop.dev", ".example.org"}},
		SecurityDefaultsLabel:   route.Label{Key: "psc.example/opt-in", Value: "yes"},
		Overrides:               configv1alpha1.Overrides{Namespace: "ops", ConfigMapName: "overrides"},
		HarnessedNamespaceLabel: "ops.example/harnessed",
		ScopedNamespaceLabel:    "ops.example/scoped",
		ManagedSelections:       managed,
	}
	base := route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: route.LayoutSeparate, Options: opts}
	separate := renderEntries(t, base)
	base.Layout = route.LayoutCombined
	combined := renderEntries(t, base)
	var withMembers, entries int
	for _, g := range route.Groups() {
		if len(g.Members(opts)) > 0 {
			withMembers++
		}
		entries += len(g.EntryNames(opts))
	}
	if len(combined) != entries {
		t.Fatalf("%d combined entries, want %d, one per group with members (%d) and one more for the Namespaces' own requests of a group that has other requests too", len(combined), entries, withMembers)
	}
	// Static: the groups of every namespace, and mutating-ignore-namespaces
	// and validating-fail-namespaces for the Namespaces' own requests;
	// managed: the scoped and the accounts groups too (mutating-ignore
	// keeps only the Namespaces' own requests, validating-fail-accounts
	// has validating-fail-accounts-namespaces beside it).
	if managed && len(combined) != 9 || !managed && len(combined) != 7 {
		t.Errorf("%d combined entries: the scoped and accounts groups are rendered exactly when the selections are managed", len(combined))
	}

	gvrs := []struct {
		gvr schema.GroupVersionResource
		sub string
	}{
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, sub: "ephemeralcontainers"},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, sub: "finalize"},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, sub: "scale"},
		{gvr: schema.GroupVersionResource{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}},
		{gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}},
		{gvr: schema.GroupVersionResource{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"}},
		{gvr: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "dependencygroups"}},
		{gvr: schema.GroupVersionResource{Group: "vshn.net", Version: "v1", Resource: "operatorharnesses"}},
		{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	}
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	objects := [][2]string{{"ops", "overrides"}, {"team-a", "web"}, {"", "cluster-scoped"}}
	namespaces := []map[string]string{
		{},
		{"psc.example/opt-in": "yes"},
		{"psc.example/opt-in": "no", "ops.example/harnessed": "true"},
		{"psc.example/opt-in": "yes", "ops.example/harnessed": ""},
		{"ops.example/scoped": "true"},
		{"psc.example/opt-in": "yes", "ops.example/harnessed": "", "ops.example/scoped": ""},
	}
	users := []string{"system:serviceaccount:ops:operator", "alice"}
	groupMembers := map[string][]route.Member{}
	for _, g := range route.Groups() {
		for _, name := range g.EntryNames(opts) {
			groupMembers[name] = g.Members(opts)
		}
	}

	checked := 0
	for _, r := range gvrs {
		for _, op := range ops {
			for _, o := range objects {
				for _, user := range users {
					for _, labelsChanged := range []bool{false, true} {
						for _, nsl := range namespaces {
							nsLabels := map[string]string{"kubernetes.io/metadata.name": o[0]}
							for k, v := range nsl {
								nsLabels[k] = v
							}
							var want, got []string
							for _, e := range separate {
								if e.sends(t, op, r.gvr, r.sub, o[0], o[1], user, labelsChanged, nsLabels) {
									name := strings.TrimSuffix(e.name, ".gatehouse.dev")
									for _, suffix := range []string{"-unlabelled", "-cluster", "-namespaces"} {
										name = strings.TrimSuffix(name, suffix)
									}
									want = append(want, name)
								}
							}
							object, oldObject := rawPair(t, op, labelsChanged)
							req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
								Operation: admissionv1.Operation(op), Resource: metav1.GroupVersionResource(r.gvr), SubResource: r.sub,
								Namespace: o[0], Name: o[1], UserInfo: authenticationv1.UserInfo{Username: user},
								Object: runtime.RawExtension{Raw: object}, OldObject: runtime.RawExtension{Raw: oldObject},
							}}
							for _, e := range combined {
								if !e.sends(t, op, r.gvr, r.sub, o[0], o[1], user, labelsChanged, nsLabels) {
									continue
								}
								for _, m := range groupMembers[e.name] {
									if selects(t, m, req, nsLabels, opts) {
										got = append(got, m.Def.Name)
									}
								}
							}
							sort.Strings(want)
							sort.Strings(got)
							if !slices.Equal(want, got) {
								t.Errorf("%s %s/%s %s/%s by %s (labels changed: %v) in %v: separate entries call %v, combined run %v",
									op, r.gvr, r.sub, o[0], o[1], user, labelsChanged, nsl, want, got)
							}
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d requests routed alike", checked)
}

// TestHTTPCombinedEqualsSeparate: over HTTPS, a combined endpoint answers as
// the chain of the separate webhooks it stands for: the same final object,
// each member's warnings and audit codes, and the first member's denial.
func TestHTTPCombinedEqualsSeparate(t *testing.T) {
	state := memState{
		objects: []map[string]any{{
			"apiVersion": "vshn.net/v1", "kind": "OperatorHarness", "metadata": map[string]any{"name": "mariadb"},
			"spec": map[string]any{
				"scopeToLabel": scopeKey,
				"operator":     map[string]any{"namespace": "mariadb-operator", "injectProxyConfiguration": true},
			},
		}},
		namespaces: map[string]map[string]string{
			"mariadb-operator": {"gatehouse.dev/security-defaults": "enabled", scopeKey: "ops"},
			"tenant":           {scopeKey: "tenant"},
		},
	}
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Namespaces = state, state
	ts := startServerWith(t, opts)

	// A harnessed operator pod in an opted-in, scoped namespace: defaulted,
	// injected and labelled, in registry order.
	pod := pluginPod("operator")
	body := reviewBodyIn(t, "c1", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", pod, nil)
	chained := pod
	for _, path := range []string{"/mutate/pod-security-defaults", "/mutate/harness-proxy", "/mutate/harness-labels"} {
		_, r := ts.post(t, path, "application/json",
			reviewBodyIn(t, "c1", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", chained, nil))
		if !r.Allowed || len(r.Patch) == 0 {
			t.Fatalf("%s: allowed=%v patch %s", path, r.Allowed, r.Patch)
		}
		chained = applyPatch(t, chained, r.Patch)
	}
	// The namespace opts in to the pod security defaults, which have a
	// group of their own, called first.
	_, opted := ts.post(t, "/mutate/combined-ignore-opted-in", "application/json", body)
	if !opted.Allowed || len(opted.Patch) == 0 {
		t.Fatalf("combined-ignore-opted-in: allowed=%v patch %s", opted.Allowed, opted.Patch)
	}
	defaulted := applyPatch(t, pod, opted.Patch)
	_, r := ts.post(t, "/mutate/combined-ignore", "application/json",
		reviewBodyIn(t, "c1", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", defaulted, nil))
	if !r.Allowed {
		t.Fatalf("combined: denied %s", fmtCauses(r))
	}
	if got, want := string(mustJSON(t, applyPatch(t, defaulted, r.Patch))), string(mustJSON(t, chained)); got != want {
		t.Errorf("combined patch makes\n%s\nthe separate chain\n%s", got, want)
	}
	_, again := ts.post(t, "/mutate/combined-ignore", "application/json",
		reviewBodyIn(t, "c2", admissionv1.Create, podKind, podResource, "mariadb-operator", "operator", chained, nil))
	if !again.Allowed || len(again.Patch) != 0 {
		t.Errorf("combined on its own output: allowed=%v patch %s", again.Allowed, again.Patch)
	}
	// The failing-closed group trusts its entry's namespaceSelector (the
	// harnessed label): sent this pod, it answers as harness-proxy does.
	_, fail := ts.post(t, "/mutate/combined-fail", "application/json", body)
	_, own := ts.post(t, "/mutate/harness-proxy", "application/json", body)
	if !fail.Allowed || len(fail.Patch) == 0 || string(fail.Patch) != string(own.Patch) {
		t.Errorf("combined-fail: allowed=%v patch %s, harness-proxy's own %s", fail.Allowed, fail.Patch, own.Patch)
	}

	// A denial by one member answers for the group, attributed to it.
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "tenant", "labels": map[string]any{scopeKey: "other"}}}
	_, denied := ts.post(t, "/mutate/combined-ignore", "application/json",
		reviewBodyIn(t, "c3", admissionv1.Create, [3]string{"", "v1", "ConfigMap"}, [3]string{"", "v1", "configmaps"}, "tenant", "c", cm, nil))
	if denied.Allowed || denied.Result == nil || denied.Result.Details == nil || len(denied.Result.Details.Causes) != 1 ||
		!strings.HasSuffix(denied.Result.Details.Causes[0].Message, "(gatehouse harness-labels)") {
		t.Errorf("combined denial: allowed=%v %s", denied.Allowed, fmtCauses(denied))
	}

	// Validating: each member's audit codes under its own key.
	bad := secretPod(scopeAnnotations("pod,,service"))
	_, v := ts.post(t, "/validate/combined-fail", "application/json",
		reviewBodyIn(t, "c4", admissionv1.Create, podKind, podResource, "team-a", "web", bad, nil))
	if v.Allowed || v.Result == nil || v.Result.Details == nil || !strings.HasSuffix(v.Result.Details.Causes[0].Message, "(gatehouse secret-scope)") {
		t.Errorf("combined validating denial: allowed=%v %s", v.Allowed, fmtCauses(v))
	}
	if codes := v.AuditAnnotations["secret-scope.codes"]; !strings.Contains(codes, "ScopeEntryEmpty") {
		t.Errorf("audit annotations %v, want secret-scope.codes with the denial's codes", v.AuditAnnotations)
	}
	// An allowed review still shows that its members ran: secret-scope's
	// warning reaches the client and its code the audit annotation.
	warned := secretPod(scopeAnnotations("pod,node,planet"))
	_, ok := ts.post(t, "/validate/combined-fail", "application/json",
		reviewBodyIn(t, "c5", admissionv1.Create, podKind, podResource, "team-a", "web", warned, nil))
	if !ok.Allowed {
		t.Errorf("combined validating: denied %s", fmtCauses(ok))
	}
	if codes := ok.AuditAnnotations["secret-scope.codes"]; codes != "ScopeUnknownKey" ||
		!slices.ContainsFunc(ok.Warnings, func(w string) bool { return strings.HasPrefix(w, "gatehouse secret-scope: ScopeUnknownKey") }) {
		t.Errorf("combined validating allow: warnings %v, audit annotations %v; want secret-scope's ScopeUnknownKey in both", ok.Warnings, ok.AuditAnnotations)
	}
}

// brokenNamespaces is a namespace view that cannot answer.
type brokenNamespaces struct{ memState }

func (brokenNamespaces) NamespaceLabels(string) (map[string]string, error) {
	return nil, route.ErrNoClusterState
}

// TestCombinedReadsNamespacesOnlyWhenAMemberNeedsThem: a combined endpoint
// trusts its entry's namespaceSelector, so with the namespace view down a
// PVC and a Pod are still judged by the validating group (no member reads
// the namespace), while the failing-open half of harness-proxy, which the
// selector of mutating-ignore cannot narrow, is skipped with a warning
// rather than run blind.
func TestCombinedReadsNamespacesOnlyWhenAMemberNeedsThem(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	opts.ClusterState, opts.Namespaces = memState{}, brokenNamespaces{}
	ts := startServerWith(t, opts)
	pvc := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "c", "namespace": "team-a", "annotations": map[string]any{"secrets.kubedoop.dev/class": "tls"}}}
	_, r := ts.post(t, "/validate/combined-fail", "application/json",
		reviewBodyIn(t, "n1", admissionv1.Create, [3]string{"", "v1", "PersistentVolumeClaim"}, [3]string{"", "v1", "persistentvolumeclaims"}, "team-a", "c", pvc, nil))
	if !r.Allowed {
		t.Errorf("a valid PVC was refused with the namespace view down: %+v", r.Result)
	}
	pod := reviewBodyIn(t, "n2", admissionv1.Create, podKind, podResource, "team-a", "web", secretPod(scopeAnnotations("pod")), nil)
	if _, p := ts.post(t, "/validate/combined-fail", "application/json", pod); !p.Allowed {
		t.Errorf("a valid Pod was refused by the validating group with the namespace view down: %+v", p.Result)
	}
	_, m := ts.post(t, "/mutate/combined-ignore", "application/json", pod)
	// (harness-labels, which needs the namespace's labels itself, then
	// refuses: its own rule, not the group's.)
	if len(m.Patch) != 0 || !slices.ContainsFunc(m.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "gatehouse harness-proxy: skipped: ")
	}) {
		t.Errorf("mutating-ignore with the namespace view down: patch=%s warnings %v, want harness-proxy skipped", m.Patch, m.Warnings)
	}
}

// selects reports whether the group runs m on a request, as `gatehouse
// check` routes it: what the member's own entry would be sent, given the
// namespace's labels and the content of the request.
func selects(t *testing.T, m route.Member, req *admission.Request, namespaceLabels map[string]string, opts route.Options) bool {
	return m.SelectsRequest(req, opts) && (!m.NeedsNamespace(route.ByNothing) || m.SelectsNamespace(req, namespaceLabels, opts)) &&
		actsOnRaw(t, m.Def.Intercept, opts, req)
}

// actsOnRaw is actsOn for a request whose objects are still raw JSON.
func actsOnRaw(t *testing.T, in route.Intercept, opts route.Options, req *admission.Request) bool {
	t.Helper()
	var object, oldObject map[string]any
	for _, o := range []struct {
		raw []byte
		to  *map[string]any
	}{{req.Object.Raw, &object}, {req.OldObject.Raw, &oldObject}} {
		if len(o.raw) > 0 {
			if err := json.Unmarshal(o.raw, o.to); err != nil {
				t.Fatal(err)
			}
		}
	}
	ok, err := route.ActsOn(in, opts, req, object, oldObject)
	if err != nil {
		t.Fatalf("gatehouse-acts: %v", err)
	}
	return ok
}
