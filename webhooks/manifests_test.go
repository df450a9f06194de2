package webhooks

import (
	"reflect"
	"slices"
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
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestRenderedRulesRouteLikeCheck evaluates the rendered webhook
// configurations the way the API server does (rules, then the
// matchConditions CEL expression, compiled with cel-go as the API server
// compiles it) and proves they send exactly the requests that Intercept.Matches
// routes in `gatehouse check` and accepts in the handler.
func TestRenderedRulesRouteLikeCheck(t *testing.T) {
	opts := route.Options{
		Products:                policies.ProductSelector{GroupSuffixes: []string{".kubedoop.dev", ".example.org"}},
		SecurityDefaultsLabel:   route.Label{Key: "psc.example/opt-in", Value: "yes"},
		Overrides:               configv1alpha1.Overrides{Namespace: "ops", ConfigMapName: "overrides"},
		HarnessedNamespaceLabel: "ops.example/harnessed",
	}
	byName := map[string]renderedEntry{}
	for _, e := range renderEntries(t, route.ManifestOptions{Namespace: "gatehouse-system", Service: "gatehouse", Layout: route.LayoutSeparate, Options: opts}) {
		byName[e.name] = e
	}

	type request struct {
		gvr schema.GroupVersionResource
		sub string
	}
	requests := []request{
		{gvr: schema.GroupVersionResource{Resource: "configmaps", Version: "v1"}},
		{gvr: schema.GroupVersionResource{Resource: "secrets", Version: "v1"}},
		{gvr: schema.GroupVersionResource{Resource: "namespaces", Version: "v1"}},
		{gvr: schema.GroupVersionResource{Resource: "pods", Version: "v1"}, sub: "ephemeralcontainers"},
		{gvr: schema.GroupVersionResource{Resource: "pods", Version: "v1"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Resource: "pods", Version: "v1"}, sub: "resize"},
		{gvr: schema.GroupVersionResource{Resource: "namespaces", Version: "v1"}, sub: "finalize"},
		{gvr: schema.GroupVersionResource{Resource: "namespaces", Version: "v1"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}, sub: "approval"},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, sub: "scale"},
		{gvr: schema.GroupVersionResource{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}},
		{gvr: schema.GroupVersionResource{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"}},
		{gvr: schema.GroupVersionResource{Group: "trino.kubedoop.dev", Version: "v1alpha2", Resource: "trinoclusters"}},
		{gvr: schema.GroupVersionResource{Group: "kubedoop.dev", Version: "v1", Resource: "things"}},
		{gvr: schema.GroupVersionResource{Group: "evilkubedoop.dev", Version: "v1", Resource: "things"}},
		{gvr: schema.GroupVersionResource{Group: "a.example.org", Version: "v1", Resource: "things"}},
		{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}},
		{gvr: schema.GroupVersionResource{Group: "vshn.net", Version: "v1", Resource: "operatorharnesses"}},
		{gvr: schema.GroupVersionResource{Group: "vshn.net", Version: "v1", Resource: "operatorharnesses"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "operatorharnesses"}},
		{gvr: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "dependencygroups"}},
		{gvr: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "dependencygroups"}, sub: "status"},
		{gvr: schema.GroupVersionResource{Group: "helmetica.io", Version: "v1", Resource: "customresourcedefinitionsources"}},
		{gvr: schema.GroupVersionResource{Group: "gatehouse.dev", Version: "v1alpha1", Resource: "exceptions"}},
		{gvr: schema.GroupVersionResource{Group: "gatehouse.dev", Version: "v1alpha1", Resource: "clusterexceptions"}},
	}
	for _, r := range route.PodResources() {
		requests = append(requests, request{gvr: r.GVR})
	}
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	objects := [][2]string{
		{opts.Overrides.Namespace, opts.Overrides.ConfigMapName},
		{opts.Overrides.Namespace, "other"},
		{"team-a", opts.Overrides.ConfigMapName},
	}
	namespaces := []map[string]string{
		{"kubernetes.io/metadata.name": "team-a"},
		{"kubernetes.io/metadata.name": "team-b", "psc.example/opt-in": "yes"},
		{"kubernetes.io/metadata.name": "team-c", "psc.example/opt-in": "no"},
		{"kubernetes.io/metadata.name": "team-d", "ops.example/harnessed": ""},
	}
	users := []string{"system:serviceaccount:ops:operator", "alice", "system:node:n1"}

	for _, def := range route.Registry() {
		w, ok := byName[def.Name+".gatehouse.dev"]
		if !ok {
			t.Fatalf("%s is not rendered", def.Name)
		}
		entries := []renderedEntry{w}
		if def.FailClosedOnlyInHarnessed {
			elsewhere, ok := byName[def.Name+"-unlabelled.gatehouse.dev"]
			if !ok {
				t.Fatalf("%s: the failing-open entry is not rendered", def.Name)
			}
			if !reflect.DeepEqual(elsewhere.rules, w.rules) || !reflect.DeepEqual(elsewhere.conditions, w.conditions) {
				t.Errorf("%s: the two entries route requests differently", def.Name)
			}
			if w.failure != admissionregistrationv1.Fail || elsewhere.failure != admissionregistrationv1.Ignore {
				t.Errorf("%s: failure policies %s and %s, want Fail and Ignore", def.Name, w.failure, elsewhere.failure)
			}
			entries = append(entries, elsewhere)
		}
		// The entries that route the webhook's requests: its own, and the
		// one of the Namespaces' own requests when it has one.
		routes := []renderedEntry{w}
		if own, ok := byName[def.Name+"-namespaces.gatehouse.dev"]; ok {
			routes = append(routes, own)
		}
		programs := make([][]cel.Program, len(routes))
		for i, r := range routes {
			for _, mc := range r.conditions {
				programs[i] = append(programs[i], compile(t, mc.Expression))
			}
		}
		// The comparison below proves nothing for a webhook that none of the
		// requests reaches, or that all of them reach: count both.
		sentCount, total := 0, 0
		for _, r := range requests {
			for _, op := range ops {
				for _, o := range objects {
					for _, user := range users {
						for _, labelsChanged := range []bool{false, true} {
							sent := false
							for i, route := range routes {
								sentHere := rulesMatch(route.rules, op, r.gvr, r.sub)
								for _, p := range programs[i] {
									sentHere = sentHere && evalBool(t, p, op, r.gvr, r.sub, o[0], o[1], user, labelsChanged)
								}
								if sentHere && sent {
									t.Errorf("%s %s %s/%s: two entries send it", def.Name, op, r.gvr, r.sub)
								}
								sent = sent || sentHere
							}
							object, oldObject := rawPair(t, op, labelsChanged)
							routed := def.Intercept.Matches(op, r.gvr, r.sub, opts) && def.Intercept.ObjectMatches(o[0], o[1], opts) &&
								def.Intercept.UserMatches(op, user) && def.Intercept.ChangeMatches(op, object, oldObject)
							if routed {
								req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
									Operation: admissionv1.Operation(op), Resource: metav1.GroupVersionResource(r.gvr), SubResource: r.sub,
									Namespace: o[0], Name: o[1], UserInfo: authenticationv1.UserInfo{Username: user},
									Object: runtime.RawExtension{Raw: object}, OldObject: runtime.RawExtension{Raw: oldObject},
								}}
								routed = actsOnRaw(t, def.Intercept, opts, req)
							}
							total++
							if sent {
								sentCount++
							}
							if sent != routed {
								t.Errorf("%s %s %s/%s %s/%s by %s (labels changed: %v): API server would send=%v, check routes=%v",
									def.Name, op, r.gvr, r.sub, o[0], o[1], user, labelsChanged, sent, routed)
							}
						}
					}
				}
			}
		}
		if sentCount == 0 || sentCount == total {
			t.Errorf("%s: the API server would send %d of the %d requests; add requests it routes and requests it does not", def.Name, sentCount, total)
		}
		for _, ns := range namespaces {
			matching := 0
			for _, e := range entries {
				sel, err := metav1.LabelSelectorAsSelector(e.namespaces)
				if err != nil {
					t.Fatal(err)
				}
				if sel.Matches(labels.Set(ns)) {
					matching++
				}
			}
			if matching > 1 {
				t.Errorf("%s in namespace %v: %d entries would call it", def.Name, ns, matching)
			}
			if sent, routed := matching == 1, def.Intercept.NamespaceMatches(ns, opts); sent != routed {
				t.Errorf("%s in namespace %v: API server would send=%v, check routes=%v", def.Name, ns, sent, routed)
			}
		}
	}
}

func compile(t *testing.T, expr string) cel.Program {
	t.Helper()
	prg, err := route.CompileMatchCondition(expr)
	if err != nil {
		t.Fatalf("matchCondition does not compile: %v\n%s", err, expr)
	}
	return prg
}

// objectPair is an object and old object as the API server sends them for
// op: no old object on CREATE, no object on DELETE; on UPDATE the labels
// differ when labelsChanged.
func objectPair(op admissionregistrationv1.OperationType, labelsChanged bool) (object, oldObject map[string]any) {
	object = map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "db"}}}
	oldObject = map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "db"}}}
	if labelsChanged {
		delete(oldObject["metadata"].(map[string]any), "labels")
	}
	switch op {
	case admissionregistrationv1.Create:
		oldObject = nil
	case admissionregistrationv1.Delete:
		object = nil
	}
	return object, oldObject
}

// rawPair is objectPair as the raw bytes of an admission request.
func rawPair(t *testing.T, op admissionregistrationv1.OperationType, labelsChanged bool) (object, oldObject []byte) {
	t.Helper()
	o, old := objectPair(op, labelsChanged)
	if o != nil {
		object = mustJSON(t, o)
	}
	if old != nil {
		oldObject = mustJSON(t, old)
	}
	return object, oldObject
}

func evalBool(t *testing.T, prg cel.Program, op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, sub, namespace, name, user string, labelsChanged bool) bool {
	t.Helper()
	object, oldObject := objectPair(op, labelsChanged)
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Operation(op), Resource: metav1.GroupVersionResource(gvr), SubResource: sub,
		Namespace: namespace, Name: name, UserInfo: authenticationv1.UserInfo{Username: user},
	}}
	b, err := route.EvalMatchCondition(prg, route.CelRequest(req), object, oldObject)
	if err != nil {
		t.Fatalf("matchCondition failed on %s %s/%s %s/%s: %v", op, gvr, sub, namespace, name, err)
	}
	return b
}

// rulesMatch is the API server's rule matching (k8s.io/apiserver's
// webhook/predicates/rules): each entry of resources is
// "<resource>[/<subresource>]" where either part may be "*", so "*" matches
// every resource but no subresource, "*/status" every status subresource,
// "pods/ephemeralcontainers" exactly that subresource.
func rulesMatch(rules []admissionregistrationv1.RuleWithOperations, op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, sub string) bool {
	return rulesMatchIn(rules, op, gvr, sub, admissionregistrationv1.AllScopes)
}

// rulesMatchIn is rulesMatch for a request of an object of scope
// (Namespaced or Cluster; "*" ignores the rules' scope).
func rulesMatchIn(rules []admissionregistrationv1.RuleWithOperations, op admissionregistrationv1.OperationType, gvr schema.GroupVersionResource, sub string, scope admissionregistrationv1.ScopeType) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	for _, r := range rules {
		if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes && scope != admissionregistrationv1.AllScopes && *r.Scope != scope {
			continue
		}
		ops := make([]string, len(r.Operations))
		for i, o := range r.Operations {
			ops[i] = string(o)
		}
		resourceMatch := false
		for _, res := range r.Resources {
			name, subName, _ := strings.Cut(res, "/")
			resourceMatch = resourceMatch || ((name == "*" || name == gvr.Resource) && (subName == "*" || subName == sub))
		}
		if has(ops, string(op)) && has(r.APIGroups, gvr.Group) && has(r.APIVersions, gvr.Version) && resourceMatch {
			return true
		}
	}
	return false
}
