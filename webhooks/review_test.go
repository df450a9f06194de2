package webhooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// undecodableMarker is planted in the undecodable field: no answer may
// repeat it.
const undecodableMarker = "MARKER-containers-7f3a"

// undecodablePod is a Pod whose spec.containers is a string: valid JSON,
// but not a Pod the API server could have decoded. Everything else about it
// is allowed.
func undecodablePod() map[string]any {
	pod := secretPod(scopeAnnotations("pod"))
	pod["spec"].(map[string]any)["containers"] = undecodableMarker
	return pod
}

// podEndpoints are every per-webhook and combined path that intercepts pods
// (CREATE of pods, UPDATE of pods/ephemeralcontainers), with the operation
// and subresource it takes them on.
type podEndpoint struct {
	name, path  string
	op          admissionv1.Operation
	subresource string
}

func podEndpoints(opts route.Options) []podEndpoint {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	var out []podEndpoint
	for _, req := range []struct {
		op  admissionv1.Operation
		sub string
	}{{admissionv1.Create, ""}, {admissionv1.Update, "ephemeralcontainers"}} {
		op := admissionregistrationv1.OperationType(req.op)
		for _, def := range route.Registry() {
			if def.Intercept.Matches(op, pods, req.sub, opts) {
				out = append(out, podEndpoint{def.Name, def.Path, req.op, req.sub})
			}
		}
		for _, g := range route.Groups() {
			for _, m := range g.Members(opts) {
				if m.Def.Intercept.Matches(op, pods, req.sub, opts) {
					out = append(out, podEndpoint{g.Name, g.Path, req.op, req.sub})
					break
				}
			}
		}
	}
	return out
}

// TestUndecodablePodIsRejectedByEveryPodEndpoint: a Pod whose
// spec.containers is a string was allowed by /validate/secret-scope (the
// walk skips what is not a list). Every endpoint that intercepts pods now
// answers it with a 400 that names the reason, the field and the webhook,
// and never the value, in a namespace where every member runs.
func TestUndecodablePodIsRejectedByEveryPodEndpoint(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	labels := map[string]string{
		opts.SecurityDefaultsLabel.Key: opts.SecurityDefaultsLabel.Value,
		opts.HarnessedNamespaceLabel:   "true",
	}
	state := memState{namespaces: map[string]map[string]string{"team-a": labels}}
	opts.ClusterState, opts.Namespaces = state, state
	ts := startServerWith(t, opts)
	endpoints := podEndpoints(opts)
	if len(endpoints) < 6 {
		t.Fatalf("only %d pod endpoints found: %+v", len(endpoints), endpoints)
	}
	for _, e := range endpoints {
		t.Run(e.path+"/"+string(e.op), func(t *testing.T) {
			var old any
			if e.op == admissionv1.Update {
				old = secretPod(scopeAnnotations("pod"))
			}
			body := reviewBodyWithSubresource(t, "uid-undecodable", e.op, e.subresource, undecodablePod(), old)
			status, r := ts.post(t, e.path, "application/json", body)
			if status != http.StatusOK || r.UID != "uid-undecodable" {
				t.Fatalf("HTTP %d, UID %q", status, r.UID)
			}
			if r.Allowed || r.Result == nil || r.Result.Code != http.StatusBadRequest {
				t.Fatalf("want a 400 rejection, got allowed=%v result=%+v", r.Allowed, r.Result)
			}
			msg := r.Result.Message
			for _, want := range []string{ReasonUndecodableObject + ": ", "request.object is not a valid Pod", "spec.containers is a string", "[]v1.Container", "(gatehouse "} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q: %s", want, msg)
				}
			}
			if strings.Contains(msg, undecodableMarker) || strings.Contains(strings.Join(r.Warnings, " "), undecodableMarker) {
				t.Errorf("the answer repeats the value: %s %q", msg, r.Warnings)
			}
		})
	}
}

// reviewBodyWithSubresource is reviewBody for pods, with a subresource.
func reviewBodyWithSubresource(t *testing.T, uid string, op admissionv1.Operation, subresource string, obj, old any) []byte {
	t.Helper()
	var review map[string]any
	body := reviewBody(t, uid, op, podKind, podResource, obj, old)
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	if subresource != "" {
		review["request"].(map[string]any)["subResource"] = subresource
	}
	return mustJSON(t, review)
}

func TestDecodeReviewTypedObjects(t *testing.T) {
	scope, _ := route.Lookup("secret-scope")
	good := secretPod(scopeAnnotations("pod"))
	withFutureField := secretPod(scopeAnnotations("pod"))
	withFutureField["spec"].(map[string]any)["aFieldFromANewerAPIServer"] = map[string]any{"x": 1}
	badOld := secretPod(scopeAnnotations("pod"))
	badOld["spec"].(map[string]any)["terminationGracePeriodSeconds"] = "30"
	badPVC := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"accessModes": "ReadWriteOnce"}}
	product := map[string]any{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"containers": "x"}}
	cases := []struct {
		name      string
		op        admissionv1.Operation
		kind, res [3]string
		obj, old  any
		wantErr   string // "" accepts
	}{
		{"a valid pod", admissionv1.Create, podKind, podResource, good, nil, ""},
		{"a field gatehouse's Go types do not know (a newer API server)", admissionv1.Create, podKind, podResource, withFutureField, nil, ""},
		{"spec.containers a string", admissionv1.Create, podKind, podResource, undecodablePod(), nil,
			"UndecodableObject: request.object is not a valid Pod: spec.containers is a string where the API expects []v1.Container"},
		{"an oldObject that does not decode", admissionv1.Update, podKind, podResource, good, badOld,
			"UndecodableObject: request.oldObject is not a valid Pod: spec.terminationGracePeriodSeconds is a string where the API expects int64"},
		{"a PVC with accessModes a string", admissionv1.Create, [3]string{"", "v1", "PersistentVolumeClaim"}, [3]string{"", "v1", "persistentvolumeclaims"}, badPVC, nil,
			"UndecodableObject: request.object is not a valid PersistentVolumeClaim: spec.accessModes is a string where the API expects []v1.PersistentVolumeAccessMode"},
		{"a custom resource is not typed", admissionv1.Create, [3]string{"hdfs.kubedoop.dev", "v1alpha1", "HdfsCluster"}, [3]string{"hdfs.kubedoop.dev", "v1alpha1", "hdfsclusters"}, product, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := admissionRequest(t, tc.op, tc.kind, tc.res, tc.obj)
			if tc.old != nil {
				req.OldObject.Raw = mustJSON(t, tc.old)
			}
			_, err := (&sharedReview{req: &req}).decoded(scope)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !strings.HasSuffix(err.Error(), "(gatehouse secret-scope)")):
				t.Fatalf("error %v, want %q ... (gatehouse secret-scope)", err, tc.wantErr)
			}
		})
	}
}
