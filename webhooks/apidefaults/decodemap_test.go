package apidefaults

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// fullDecode is what DecodeMap stands for: encoding/json's decode into a
// map, and Decode into the Go type of a built-in kind.
func fullDecode(gvk schema.GroupVersionKind, raw []byte) (map[string]any, bool) {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, false
	}
	if _, err := Decode(gvk, raw); err != nil {
		return nil, false
	}
	return obj, true
}

// compareDecoders fails when DecodeMap accepts what the full decoders
// refuse or decodes it differently; it reports whether DecodeMap accepted.
func compareDecoders(t *testing.T, gvk schema.GroupVersionKind, raw []byte) bool {
	t.Helper()
	got, ok := DecodeMap(gvk, raw)
	if !ok {
		if got != nil {
			t.Errorf("%s: DecodeMap declined but returned an object", gvk.Kind)
		}
		return false
	}
	want, wantOK := fullDecode(gvk, raw)
	if !wantOK {
		t.Errorf("%s: DecodeMap accepted what encoding/json or Decode refuse:\n%s", gvk.Kind, raw)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: DecodeMap decoded differently from encoding/json:\n%s", gvk.Kind, raw)
	}
	return true
}

// corpusObjects are the golden fixtures of every policy and the examples,
// as JSON, each also as the API server hands it to admission (defaulted,
// with managedFields and a creationTimestamp) when it is a built-in kind.
func corpusObjects(tb testing.TB) [][]byte {
	var out [][]byte
	for _, glob := range []string{"../../policies/*/testdata/*/*.yaml", "../../deploy/examples/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				tb.Fatal(err)
			}
			var obj map[string]any
			if yaml.Unmarshal(raw, &obj) != nil || obj == nil {
				continue
			}
			j, err := json.Marshal(obj)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, j)
			if dressed, err := PreAdmission(obj); err == nil && IsBuiltin(gvkOf(dressed)) {
				meta, _ := dressed["metadata"].(map[string]any)
				if meta == nil {
					meta = map[string]any{}
					dressed["metadata"] = meta
				}
				meta["creationTimestamp"] = "2026-12-01T10:00:00Z"
				meta["uid"] = "0f8d3b0e-4c4f-4c7b-9f0e-2b7c8e1d5a11"
				meta["managedFields"] = []any{map[string]any{
					"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": "2026-12-01T10:00:00Z",
					"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}}}},
				}}
				if j, err := json.Marshal(dressed); err == nil {
					out = append(out, j)
				}
			}
		}
	}
	if len(out) < 300 {
		tb.Fatalf("only %d corpus objects found", len(out))
	}
	return out
}

func gvkOf(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// replacements are the values planted at every position of every corpus
// object: each JSON type, numbers an integer field refuses, strings a
// quantity, a time, a []byte or an int-or-string refuses or takes, escapes
// and invalid UTF-8 that encoding/json rewrites.
var replacements = []string{
	`"x"`, `""`, `1`, `-1`, `1.5`, `1e2`, `100.0`, `-0`, `3000000000`, `1e400`, `true`, `null`, `{}`, `[]`, `[1]`,
	`{"a":1}`, `"1Gi"`, `"2026-12-01T10:00:00Z"`, `"not base64!"`, `"Yw=="`, `"caf\u00e9\n\"q\""`, "\"\xff\xfe\"",
	"\"\xed\xa0\x80\"", `"\ud800"`, `"\ud83d\ude00"`, `"\ud83d\u0041"`, `"\udc00x"`, `"\u00e"`, `"\/\b\f\r\t"`, `"\'"`,
	`"a\"`, "\"\\\xff\"", `[{"name":"x"}]`,
}

// TestDecodeMapEqualsTheFullDecoders: on every corpus object, and on each
// with values (see mutants) replaced in turn by each of the replacements (and
// the replacement also given before or after the original value under the
// same key),
// DecodeMap either declines or decodes exactly what encoding/json decodes,
// and only what Decode accepts. It must decide most of them itself, or it
// would be no cheaper.
func TestDecodeMapEqualsTheFullDecoders(t *testing.T) {
	objects := corpusObjects(t)
	var judged, declined, count int
	for n, raw := range objects {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		gvk := gvkOf(obj)
		if _, wantOK := fullDecode(gvk, raw); wantOK && !compareDecoders(t, gvk, raw) {
			t.Errorf("%s: DecodeMap declined a corpus object the full decoders accept:\n%s", gvk.Kind, raw)
		}
		for _, variant := range mutants(t, obj, n) {
			count++
			if compareDecoders(t, gvk, variant) {
				judged++
			} else {
				declined++
			}
		}
	}
	t.Logf("%d objects; %d mutants: %d judged by DecodeMap, %d left to the full decoders", len(objects), count, judged, declined)
	if judged == 0 || declined == 0 {
		t.Fatalf("the mutants did not exercise both outcomes (%d judged, %d declined)", judged, declined)
	}
}

// mutants returns obj with value positions, in a fixed order, replaced by
// each replacement: about 4 positions per object, evenly spread and
// starting at an offset that moves with the object's number n, so that the
// whole corpus costs seconds and still reaches most kinds of field.
func mutants(t *testing.T, obj map[string]any, n int) [][]byte {
	const placeholder = "@@gatehouse-placeholder@@"
	var out [][]byte
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		paths = append(paths, append([]any(nil), path...))
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k], append(path, k))
			}
		case []any:
			for i, e := range t {
				walk(e, append(path, i))
			}
		}
	}
	walk(obj, nil)
	stride := 1 + len(paths)/4
	for i := 1 + n%stride; i < len(paths); i += stride {
		path := paths[i]
		parent := any(obj)
		for _, step := range path[:len(path)-1] {
			switch s := step.(type) {
			case string:
				parent = parent.(map[string]any)[s]
			case int:
				parent = parent.([]any)[s]
			}
		}
		var orig any
		set := func(v any) {
			switch s := path[len(path)-1].(type) {
			case string:
				orig = parent.(map[string]any)[s]
				parent.(map[string]any)[s] = v
			case int:
				orig = parent.([]any)[s]
				parent.([]any)[s] = v
			}
		}
		set(placeholder)
		doc, err := json.Marshal(obj)
		set(orig)
		if err != nil {
			t.Fatal(err)
		}
		origJSON, err := json.Marshal(orig)
		if err != nil {
			t.Fatal(err)
		}
		quoted := []byte(strconv.Quote(placeholder))
		for _, r := range replacements {
			out = append(out, bytes.Replace(doc, quoted, []byte(r), 1))
			if key, ok := path[len(path)-1].(string); ok {
				keyJSON, _ := json.Marshal(key)
				twice := append(append(append([]byte(r+","), keyJSON...), ':'), origJSON...)
				out = append(out, bytes.Replace(doc, quoted, twice, 1))
				twice = append(append(append(append([]byte(nil), origJSON...), ','), keyJSON...), ':')
				out = append(out, bytes.Replace(doc, quoted, append(twice, r...), 1))
			}
		}
	}
	return out
}

// TestDecodeMapDocuments: whole documents that are not objects, not JSON,
// or JSON that encoding/json reads in its own way.
func TestDecodeMapDocuments(t *testing.T) {
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	cr := schema.GroupVersionKind{Group: "example.dev", Version: "v1", Kind: "Thing"}
	for _, tc := range []struct {
		doc    string
		judged bool
	}{
		{`{}`, true},
		{` {"a":[1,{"b":null}],"c":"d"} `, true},
		{`{"a":1}x`, false},
		{`{"a":1,}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":.5}`, false},
		{`{"a":+1}`, false},
		{`{"a":1e}`, false},
		{`{"a":tru}`, false},
		{`{"a":nul}`, false},
		{`{"a":"b` + "\x01" + `"}`, false},
		{`{"a":"\x"}`, false},
		{`{a:1}`, false},
		{`[]`, false},
		{`null`, false},
		{`"x"`, false},
		{``, false},
		{`{"a":"\u00e9","\u0062":2}`, true},
		{`{"a":1,"a":"x"}`, true},
		{`{"spec":{"containers":"x"}}`, false},
		{`{"spec":{"containers":"x","containers":[]}}`, false},
		{`{"spec":{"containers":[],"containers":"x"}}`, false},
		{`{"spec":{"Containers":"x"}}`, true},
		{`{"spec":{"terminationGracePeriodSeconds":1e2}}`, false},
		{`{"spec":{"terminationGracePeriodSeconds":100}}`, true},
		{`{"spec":{"priority":3000000000}}`, false},
		{`{"metadata":{"creationTimestamp":"yesterday"}}`, false},
		{`{"metadata":{"creationTimestamp":null,"deletionTimestamp":null}}`, true},
		{`{"spec":{"containers":[{"resources":{"limits":{"cpu":"1Gx"}}}]}}`, false},
		{`{"spec":{"containers":[{"resources":{"limits":{"cpu":2}}}]}}`, true},
		{`{"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}}`, false},
		{`{"spec":{"containers":[{"readinessProbe":{"httpGet":{"port":"http"}}}]}}`, true},
		{`{"spec":{"containers":[{"readinessProbe":{"httpGet":{"port":1.5}}}]}}`, false},
	} {
		raw := []byte(tc.doc)
		for _, gvk := range []schema.GroupVersionKind{pod, cr} {
			judged := compareDecoders(t, gvk, raw)
			if gvk == pod && judged != tc.judged {
				t.Errorf("%s as a Pod: judged %v, want %v", tc.doc, judged, tc.judged)
			}
			if _, full := fullDecode(gvk, raw); gvk == cr && judged != full {
				t.Errorf("%s as a custom resource: judged %v, but the full decoders say %v", tc.doc, judged, full)
			}
		}
	}
	deep := bytes.Repeat([]byte(`{"a":`), maxDepth+1)
	deep = append(append(deep, '1'), bytes.Repeat([]byte{'}'}, maxDepth+1)...)
	if compareDecoders(t, cr, deep) {
		t.Errorf("DecodeMap judged a document nested deeper than %d", maxDepth)
	}
}

// TestDecodeMapJudgesTheKindsGatehouseReviews: the Go types of the built-in
// kinds the webhooks take have shapes this pass judges (a type it left
// unsure would send every review of it to the full decoders).
func TestDecodeMapJudgesTheKindsGatehouseReviews(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ServiceAccount"}, {Version: "v1", Kind: "PersistentVolumeClaim"},
		{Version: "v1", Kind: "ReplicationController"}, {Version: "v1", Kind: "PodTemplate"}, {Version: "v1", Kind: "Event"},
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
		{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "apps", Version: "v1", Kind: "ReplicaSet"},
		{Group: "batch", Version: "v1", Kind: "Job"}, {Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, {Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	} {
		if !IsBuiltin(gvk) {
			continue // not in client-go's scheme: decoded without a type
		}
		if s := shapeOfKind(gvk); s == nil || s.kind != shapeStruct {
			t.Errorf("%s: DecodeMap does not judge this kind", gvk)
		}
	}
}

// FuzzDecodeMap: on any document, as a Pod, a Deployment, a Secret or a
// custom resource, DecodeMap declines or agrees with the full decoders.
func FuzzDecodeMap(f *testing.F) {
	for _, raw := range corpusObjects(f) {
		f.Add(raw, uint8(0))
	}
	f.Add([]byte(`{"spec":{"containers":[{"ports":[{"containerPort":1e1}]}]}}`), uint8(0))
	f.Add([]byte(`{"data":{"a":"Yw=","b":"Yw=="}}`), uint8(2))
	kinds := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Pod"}, {Group: "apps", Version: "v1", Kind: "Deployment"},
		{Version: "v1", Kind: "Secret"}, {Group: "example.dev", Version: "v1", Kind: "Thing"},
	}
	f.Fuzz(func(t *testing.T, raw []byte, kind uint8) {
		compareDecoders(t, kinds[int(kind)%len(kinds)], raw)
	})
}
