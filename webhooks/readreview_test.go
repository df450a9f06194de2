package webhooks

import (
	"reflect"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// readReviewDiffers says how readReview reads body differently from a
// decode of the whole body into the review's Go type ("" when alike), and
// whether it took the one-pass way. Each object it hands the members must
// be the one DecodeMap makes of the object's bytes.
func readReviewDiffers(body []byte) (diff string, onePass bool) {
	var got admissionv1.AdmissionRequest
	gotType, objects, gotErr := readReview(body, &got)
	var want admissionv1.AdmissionRequest
	sent := sentReview{Request: &want}
	wantErr := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &sent)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		return "readReview erred " + errText(gotErr) + ", the whole decode " + errText(wantErr), objects != nil
	case wantErr != nil:
		return "", objects != nil
	case gotType != sent.TypeMeta:
		return "the review's type differs", objects != nil
	case !reflect.DeepEqual(got, want):
		return "the request differs", objects != nil
	}
	if objects == nil {
		return "", false
	}
	gvk := schema.GroupVersionKind(got.Kind)
	for _, o := range []struct {
		what string
		raw  []byte
		obj  apidefaults.ReviewObject
	}{{"object", got.Object.Raw, objects.Object}, {"oldObject", got.OldObject.Raw, objects.OldObject}} {
		m := decodedFrom(o.obj, o.raw, gvk)
		if m == nil {
			if o.obj.Map != nil {
				return o.what + " was decoded but is not handed over", true
			}
			continue
		}
		if want, ok := apidefaults.DecodeMap(gvk, o.raw); !ok || !reflect.DeepEqual(m, want) {
			return o.what + " is not decoded as DecodeMap decodes it", true
		}
	}
	return "", true
}

func errText(err error) string {
	if err == nil {
		return "nothing"
	}
	return "(" + err.Error() + ")"
}

// readReviewBodies are reviews the API server sends, each of which the one
// pass must read, and hand-made ones it must read alike or leave to the
// whole decode.
func readReviewBodies(t testing.TB) (apiServer, handMade map[string][]byte) {
	pod := secretPod(scopeAnnotations("pod,node"))
	apiServer = map[string][]byte{
		"create": reviewBody(t, "u1", admissionv1.Create, podKind, podResource, pod, nil),
		"update": reviewBody(t, "u2", admissionv1.Update, podKind, podResource, pod, secretPod(scopeAnnotations("pod"))),
		"delete": reviewBody(t, "u3", admissionv1.Delete, podKind, podResource, nil, pod),
		"custom": reviewBody(t, "u4", admissionv1.Create, [3]string{"example.stackable.tech", "v1alpha1", "Thing"},
			[3]string{"example.stackable.tech", "v1alpha1", "things"}, map[string]any{"spec": map[string]any{"a": 1.5}}, nil),
	}
	const head = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"0",`
	const podKindJSON = `"kind":{"group":"","version":"v1","kind":"Pod"}`
	const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	// Every field of the request, as the API server writes them.
	apiServer["every field"] = []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"705ab4f5",` +
		podKindJSON + `,"resource":{"group":"","version":"v1","resource":"pods"},"subResource":"ephemeralcontainers",` +
		`"requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1","resource":"pods"},` +
		`"requestSubResource":"ephemeralcontainers","name":"p","namespace":"team-a","operation":"UPDATE",` +
		`"userInfo":{"username":"system:serviceaccount:kube-system:op","uid":"5a3c","groups":["system:serviceaccounts","system:authenticated"],` +
		`"extra":{"authentication.kubernetes.io/pod-name":["op-0"],"scopes":[]}},` +
		`"object":` + podJSON + `,"oldObject":` + podJSON + `,"dryRun":false,` +
		`"options":{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl"}}}`)
	apiServer["empty groups"] = []byte(head + podKindJSON + `,"userInfo":{"username":"u","groups":[],"extra":{}},"object":` + podJSON + `}}`)
	handMade = map[string][]byte{
		"kind after object":    []byte(head + `"object":` + podJSON + `,` + podKindJSON + `}}`),
		"kind twice, merged":   []byte(head + `"kind":{"group":"","version":"v1"},"kind":{"kind":"Pod"},"object":` + podJSON + `}}`),
		"kind changed after":   []byte(head + podKindJSON + `,"object":` + podJSON + `,"kind":{"group":"apps","version":"v1","kind":"Deployment"}}}`),
		"object twice":         []byte(head + podKindJSON + `,"object":` + podJSON + `,"object":{}}}`),
		"request twice":        []byte(head + podKindJSON + `,"object":` + podJSON + `},"request":{"uid":"1"}}`),
		"object a string":      []byte(head + podKindJSON + `,"object":"pod"}}`),
		"object null":          []byte(head + podKindJSON + `,"object":null}}`),
		"object undecodable":   []byte(head + podKindJSON + `,"object":{"spec":{"containers":"c"}}}}`),
		"object escaped key":   []byte(head + podKindJSON + `,"obj\u0065ct":` + podJSON + `}}`),
		"wrong uid type":       []byte(head + podKindJSON + `,"object":` + podJSON + `,"name":7}}`),
		"trailing garbage":     []byte(head + podKindJSON + `,"object":` + podJSON + `}} x`),
		"unterminated":         []byte(head + podKindJSON + `,"object":` + podJSON),
		"dryRun and options":   []byte(head + podKindJSON + `,"object":` + podJSON + `,"dryRun":true,"options":{"kind":"CreateOptions"}}}`),
		"spaces around object": []byte(head + podKindJSON + `,"object" : ` + podJSON + " \n}}"),
		"uid twice":            []byte(head + podKindJSON + `,"uid":"1","object":` + podJSON + `}}`),
		"null name":            []byte(head + podKindJSON + `,"name":null,"object":` + podJSON + `}}`),
		"null requestKind":     []byte(head + podKindJSON + `,"requestKind":null,"object":` + podJSON + `}}`),
		"null groups":          []byte(head + podKindJSON + `,"userInfo":{"groups":null},"object":` + podJSON + `}}`),
		"extra key twice":      []byte(head + podKindJSON + `,"userInfo":{"extra":{"a":["1"],"a":["2"]}},"object":` + podJSON + `}}`),
		"a group not a string": []byte(head + podKindJSON + `,"userInfo":{"groups":["a",1]},"object":` + podJSON + `}}`),
		"dryRun a string":      []byte(head + podKindJSON + `,"dryRun":"true","object":` + podJSON + `}}`),
		"options a string":     []byte(head + podKindJSON + `,"options":"x","object":` + podJSON + `}}`),
		"UID in capitals":      []byte(head + podKindJSON + `,"UID":"x","Name":7,"object":` + podJSON + `}}`),
		"escaped key and text": []byte(head + podKindJSON + `,"n\u0061me":"p\u00e9\n","object":` + podJSON + `}}`),
		"invalid UTF-8":        []byte(head + podKindJSON + ",\"name\":\"p\xff\",\"object\":" + podJSON + `}}`),
		"unknown fields":       []byte(head + podKindJSON + `,"x":[1,{"y":null},"z",-0.5e3,true],"object":` + podJSON + `},"response":{"uid":"0"}}`),
	}
	for name, body := range transportBodies(t) {
		handMade["transport: "+name] = body
	}
	return apiServer, handMade
}

// TestReadReviewReadsAsTheWholeDecode: the one-pass reader gives every
// review the request a decode of the whole body gives, reads every review
// the API server sends in one pass, and hands the members the objects as
// DecodeMap decodes them.
func TestReadReviewReadsAsTheWholeDecode(t *testing.T) {
	apiServer, handMade := readReviewBodies(t)
	for name, body := range apiServer {
		diff, onePass := readReviewDiffers(body)
		if diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
		if !onePass {
			t.Errorf("%s: a review as the API server sends it was not read in one pass", name)
		}
	}
	for name, body := range handMade {
		if diff, _ := readReviewDiffers(body); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
	// The bodies the one pass must not be sure of.
	for _, name := range []string{"kind after object", "kind twice, merged", "kind changed after", "object twice",
		"request twice", "object a string", "object undecodable", "trailing garbage", "unterminated", "uid twice",
		"null name", "null requestKind", "null groups", "extra key twice", "a group not a string", "dryRun a string"} {
		if _, onePass := readReviewDiffers(handMade[name]); onePass {
			t.Errorf("%s: read in one pass, which cannot be sure of it", name)
		}
	}
}

// TestReadReviewReadsEveryFixture: every policy fixture, as a CREATE review,
// is read in one pass and alike.
func TestReadReviewReadsEveryFixture(t *testing.T) {
	bodies := fixtureReviews(t)
	for i, body := range bodies {
		diff, onePass := readReviewDiffers(body)
		if diff != "" {
			t.Errorf("fixture review %d: %s", i, diff)
		}
		if !onePass && !strings.Contains(string(body), `\`) {
			t.Errorf("fixture review %d was not read in one pass", i)
		}
	}
}

// FuzzReadReview holds the one-pass reader to the whole decode on any body.
func FuzzReadReview(f *testing.F) {
	apiServer, handMade := readReviewBodies(f)
	for _, m := range []map[string][]byte{apiServer, handMade} {
		for _, body := range m {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if diff, _ := readReviewDiffers(body); diff != "" {
			t.Errorf("%s\n%s", diff, body)
		}
	})
}

// BenchmarkReadReview compares the one-pass reader with what it replaced,
// the whole decode into the review's Go type followed by DecodeMap of the
// object, over every fixture as a CREATE review.
func BenchmarkReadReview(b *testing.B) {
	bodies := fixtureReviews(b)
	b.Run("one pass", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var req admissionv1.AdmissionRequest
			if _, objects, err := readReview(bodies[i%len(bodies)], &req); err != nil || objects == nil {
				b.Fatalf("fixture review %d: not read in one pass (%v)", i%len(bodies), err)
			}
			i++
		}
	})
	b.Run("whole decode", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var req admissionv1.AdmissionRequest
			sent := sentReview{Request: &req}
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(bodies[i%len(bodies)], &sent); err != nil {
				b.Fatal(err)
			}
			if _, ok := apidefaults.DecodeMap(schema.GroupVersionKind(req.Kind), req.Object.Raw); !ok {
				b.Fatalf("fixture review %d: DecodeMap declined", i%len(bodies))
			}
			i++
		}
	})
}
