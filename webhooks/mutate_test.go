package webhooks

import (
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	evanjsonpatch "github.com/evanphx/json-patch/v5"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// TestHTTPMutationPatchesFromRawBytes sends a Pod carrying fields the Go types
// do not know to the mutating webhook over HTTPS: the patch only adds the
// defaults, the unknown fields survive its application, and the webhook run
// on its own output answers with no patch.
func TestHTTPMutationPatchesFromRawBytes(t *testing.T) {
	ts := startServer(t)
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "team-a"},
		"spec": map[string]any{
			"futureField":     map[string]any{"keep": "me"},
			"securityContext": map[string]any{"futureSecurityField": true, "runAsUser": 2000},
			"containers": []any{map[string]any{
				"name": "app", "image": "registry.example/app:1",
				"futureContainerField": []any{"x"},
			}},
		},
	}
	raw := mustJSON(t, pod)
	_, r := ts.post(t, "/mutate/pod-security-defaults", "application/json",
		reviewBody(t, "m1", admissionv1.Create, podKind, podResource, pod, nil))
	if !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch || len(r.Patch) == 0 {
		t.Fatalf("want an allowed JSON patch, got %+v", r)
	}
	var ops []map[string]any
	if err := json.Unmarshal(r.Patch, &ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op["op"] != "add" {
			t.Errorf("defaulting must only add fields, got %v", op)
		}
	}
	patch, err := evanjsonpatch.DecodePatch(r.Patch)
	if err != nil {
		t.Fatal(err)
	}
	mutatedRaw, err := patch.Apply(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"futureField":{"keep":"me"}`, `"futureSecurityField":true`, `"futureContainerField":["x"]`, `"runAsUser":2000`, `"drop":["ALL"]`} {
		if !strings.Contains(string(mutatedRaw), want) {
			t.Errorf("patched pod lacks %s: %s", want, mutatedRaw)
		}
	}

	var mutated map[string]any
	if err := json.Unmarshal(mutatedRaw, &mutated); err != nil {
		t.Fatal(err)
	}
	_, again := ts.post(t, "/mutate/pod-security-defaults", "application/json",
		reviewBody(t, "m2", admissionv1.Create, podKind, podResource, mutated, nil))
	if !again.Allowed || len(again.Patch) != 0 {
		t.Fatalf("the webhook on its own output must answer without a patch, got %s", again.Patch)
	}
	_, guard := ts.post(t, "/validate/pod-security", "application/json",
		reviewBody(t, "m3", admissionv1.Create, podKind, podResource, mutated, nil))
	if !guard.Allowed {
		t.Fatalf("the guard denies the defaulted pod: %s", fmtCauses(guard))
	}
	_, bare := ts.post(t, "/validate/pod-security", "application/json",
		reviewBody(t, "m4", admissionv1.Create, podKind, podResource, pod, nil))
	if bare.Allowed || bare.Result.Details.Causes[0].Type != "SecurityDefaultsMissing" {
		t.Fatalf("the guard must deny a pod the mutating webhook did not run on: %+v", bare.Result)
	}
}

// TestBrokenDefaultsNeverJudge: with an invalid defaults table (say, a zero
// value where the configuration was lost) the PSC webhooks answer an error,
// which the API server treats by failure policy, instead of defaulting to
// nonsense or allowing.
func TestBrokenDefaultsNeverJudge(t *testing.T) {
	hooks := Build(route.Options{}, func(name string) bool { return strings.HasPrefix(name, "pod-security") })
	if len(hooks) != 2 {
		t.Fatalf("want both PSC webhooks, got %d", len(hooks))
	}
	for _, w := range hooks {
		req := admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil))
		resp, _ := decide(context.Background(), w, req)
		if resp.Allowed || resp.Result == nil || resp.Result.Code != 500 {
			t.Errorf("%s answered %+v with a broken table", w.Name, resp.Result)
		}
	}
}

func TestCanonicalPatch(t *testing.T) {
	op := func(kind, path string) jsonpatch.JsonPatchOperation {
		return jsonpatch.JsonPatchOperation{Operation: kind, Path: path}
	}
	paths := func(ops []jsonpatch.JsonPatchOperation) string {
		var out []string
		for _, o := range ops {
			out = append(out, o.Operation+" "+o.Path)
		}
		return strings.Join(out, ", ")
	}
	sorted := canonicalPatch([]jsonpatch.JsonPatchOperation{
		op("add", "/spec/securityContext/runAsNonRoot"), op("replace", "/spec/containers/1"), op("add", "/spec/containers/0/securityContext"),
	})
	if got := paths(sorted); got != "add /spec/containers/0/securityContext, replace /spec/containers/1, add /spec/securityContext/runAsNonRoot" {
		t.Errorf("commuting operations not sorted: %s", got)
	}
	// The generator writes tail removes in descending and tail adds in
	// ascending index order; any input order comes out as that.
	for _, in := range [][]jsonpatch.JsonPatchOperation{
		{op("remove", "/spec/volumes/10"), op("remove", "/spec/volumes/2"), op("add", "/spec/automountServiceAccountToken"), op("replace", "/spec/volumes/1/name")},
		{op("replace", "/spec/volumes/1/name"), op("add", "/spec/automountServiceAccountToken"), op("remove", "/spec/volumes/2"), op("remove", "/spec/volumes/10")},
	} {
		want := "add /spec/automountServiceAccountToken, remove /spec/volumes/10, remove /spec/volumes/2, replace /spec/volumes/1/name"
		if got := paths(canonicalPatch(in)); got != want {
			t.Errorf("tail removes out of order:\n got %s\nwant %s", got, want)
		}
	}
	for _, in := range [][]jsonpatch.JsonPatchOperation{
		{op("add", "/spec/volumes/10"), op("add", "/spec/volumes/9"), op("add", "/spec/containers/0/env")},
		{op("add", "/spec/containers/0/env"), op("add", "/spec/volumes/9"), op("add", "/spec/volumes/10")},
	} {
		want := "add /spec/containers/0/env, add /spec/volumes/9, add /spec/volumes/10"
		if got := paths(canonicalPatch(in)); got != want {
			t.Errorf("tail adds out of order:\n got %s\nwant %s", got, want)
		}
	}
}

// TestCanonicalPatchApplies: over random documents whose arrays grow,
// shrink and change, the ordered patch still turns the old document into
// the new one, as the API server applies it.
func TestCanonicalPatchApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(4); {
		case depth > 3 || k == 0:
			return float64(rng.IntN(3))
		case k == 1:
			out := make([]any, rng.IntN(12))
			for i := range out {
				out[i] = value(depth + 1)
			}
			return out
		default:
			out := map[string]any{}
			for range rng.IntN(4) {
				out[string(rune('a'+rng.IntN(5)))] = value(depth + 1)
			}
			return out
		}
	}
	for i := range 3000 {
		a, _ := json.Marshal(map[string]any{"x": value(0), "y": value(0)})
		b, _ := json.Marshal(map[string]any{"x": value(0), "y": value(0)})
		ops, err := jsonpatch.CreatePatch(a, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := applyOps(a, canonicalPatch(ops))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var gotDoc, wantDoc any
		_ = json.Unmarshal(got, &gotDoc)
		_ = json.Unmarshal(b, &wantDoc)
		if !reflect.DeepEqual(gotDoc, wantDoc) {
			t.Fatalf("case %d: the ordered patch gives\n%s\nnot\n%s", i, got, b)
		}
	}
}

// TestMutationIsDeterministic: the same pod gets the same patch bytes every
// time, although the patch generator walks Go maps.
func TestMutationIsDeterministic(t *testing.T) {
	hooks := Build(route.OptionsFromConfig(configv1alpha1.Default()), func(name string) bool { return name == "pod-security-defaults" })
	var first []byte
	for i := 0; i < 30; i++ {
		resp, _ := decide(context.Background(), hooks[0], admissionRequest(t, admissionv1.Create, podKind, podResource, secretPod(nil)))
		got, err := json.Marshal(resp.Patches)
		if err != nil || len(resp.Patches) == 0 {
			t.Fatalf("no patch: %v", err)
		}
		if first == nil {
			first = got
		} else if string(got) != string(first) {
			t.Fatalf("patch differs between runs:\n%s\n%s", first, got)
		}
	}
}

// TestDiffJSONWritesWhatCreatePatchWrites: over random documents and random
// changes to them (evaluators' Go types included: int64, []string), the
// in-memory diff gives, once ordered, the same patch bytes as
// gomodules.xyz/jsonpatch's CreatePatch over the two documents encoded.
func TestDiffJSONWritesWhatCreatePatchWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(8); {
		case depth > 3 || k == 0:
			return float64(rng.IntN(3))
		case k == 1:
			return []string{"ALL"}
		case k == 2:
			return int64(rng.IntN(3))
		case k == 3:
			return nil
		case k == 4:
			out := make([]any, rng.IntN(6))
			for i := range out {
				out[i] = value(depth + 1)
			}
			return out
		case k == 5:
			return "s/~" + string(rune('a'+rng.IntN(3)))
		default:
			out := map[string]any{}
			for range rng.IntN(4) {
				out[string(rune('a'+rng.IntN(5)))+"/~"[rng.IntN(2):]] = value(depth + 1)
			}
			return out
		}
	}
	// mutate changes v in place or returns a replacement.
	var mutate func(v any, depth int) any
	mutate = func(v any, depth int) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				switch rng.IntN(5) {
				case 0:
					delete(t, k)
				case 1:
					t[k] = value(depth + 1)
				default:
					t[k] = mutate(e, depth+1)
				}
			}
			if rng.IntN(3) == 0 {
				t[string(rune('a'+rng.IntN(6)))] = value(depth + 1)
			}
			return t
		case []any:
			for i := range t {
				t[i] = mutate(t[i], depth+1)
			}
			switch rng.IntN(3) {
			case 0:
				return append(t, value(depth+1))
			case 1:
				if len(t) > 0 {
					return t[:rng.IntN(len(t))]
				}
			}
			return t
		}
		if rng.IntN(4) == 0 {
			return value(depth)
		}
		return v
	}
	for i := range 5000 {
		var a map[string]any
		if err := json.Unmarshal(mustJSON(t, map[string]any{"x": value(0), "y": value(0), "z": value(0)}), &a); err != nil {
			t.Fatal(err)
		}
		b := deepCopyJSON(a).(map[string]any)
		b = mutate(b, 0).(map[string]any)
		want, err := jsonpatch.CreatePatch(mustJSON(t, a), mustJSON(t, b))
		if err != nil {
			t.Fatal(err)
		}
		got := append([]jsonpatch.JsonPatchOperation{}, diffJSON(a, b)...)
		if g, w := mustJSON(t, canonicalPatch(got)), mustJSON(t, canonicalPatch(append([]jsonpatch.JsonPatchOperation{}, want...))); string(g) != string(w) {
			t.Fatalf("case %d:\n a %s\n b %s\n diffJSON    %s\n CreatePatch %s", i, mustJSON(t, a), mustJSON(t, b), g, w)
		}
	}
	// Copy on write, as podsecurity.Defaulted changes a pod: b shares with a
	// every object and list it leaves alone (a list also cut short in
	// place), which diffJSON skips by identity; a is never changed.
	var cowMutate func(v any, depth int) any
	cowMutate = func(v any, depth int) any {
		switch t := v.(type) {
		case map[string]any:
			if rng.IntN(2) == 0 {
				return t
			}
			out := maps.Clone(t)
			for k, e := range t {
				switch rng.IntN(5) {
				case 0:
					delete(out, k)
				case 1:
					out[k] = value(depth + 1)
				default:
					out[k] = cowMutate(e, depth+1)
				}
			}
			if rng.IntN(3) == 0 {
				out[string(rune('a'+rng.IntN(6)))] = value(depth + 1)
			}
			return out
		case []any:
			switch rng.IntN(3) {
			case 0:
				return t
			case 1:
				return t[:rng.IntN(len(t)+1)]
			}
			out := slices.Clone(t)
			for i := range out {
				out[i] = cowMutate(out[i], depth+1)
			}
			if rng.IntN(2) == 0 {
				out = append(out, value(depth+1))
			}
			return out
		}
		if rng.IntN(4) == 0 {
			return value(depth)
		}
		return v
	}
	for i := range 5000 {
		var a map[string]any
		if err := json.Unmarshal(mustJSON(t, map[string]any{"x": value(0), "y": value(0), "z": value(0)}), &a); err != nil {
			t.Fatal(err)
		}
		before := mustJSON(t, a)
		b := cowMutate(a, 0).(map[string]any)
		want, err := jsonpatch.CreatePatch(before, mustJSON(t, b))
		if err != nil {
			t.Fatal(err)
		}
		got := append([]jsonpatch.JsonPatchOperation{}, diffJSON(a, b)...)
		if g, w := mustJSON(t, canonicalPatch(got)), mustJSON(t, canonicalPatch(append([]jsonpatch.JsonPatchOperation{}, want...))); string(g) != string(w) {
			t.Fatalf("copy on write, case %d:\n a %s\n b %s\n diffJSON    %s\n CreatePatch %s", i, before, mustJSON(t, b), g, w)
		}
		if string(mustJSON(t, a)) != string(before) {
			t.Fatalf("copy on write, case %d: the test changed a", i)
		}
	}
}
