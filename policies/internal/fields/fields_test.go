package fields

import (
	"maps"
	"reflect"
	"testing"
)

// doc is a decoded JSON object with a value of every shape at every level.
func doc() map[string]any {
	return map[string]any{
		"str":   "top",
		"empty": "",
		"num":   float64(3),
		"bool":  true,
		"null":  nil,
		"list":  []any{"a", map[string]any{"b": "c"}},
		"none":  []any{},
		"typed": []string{"not", "any"},
		"obj": map[string]any{
			"str":  "mid",
			"null": nil,
			"num":  float64(1),
			"list": []any{float64(1)},
			"inner": map[string]any{
				"str":  "deep",
				"null": nil,
				"labels": map[string]any{
					"app":  "web",
					"tier": "front",
					"num":  float64(2),
					"nil":  nil,
					"obj":  map[string]any{"x": "y"},
				},
				"allBad": map[string]any{"a": float64(1), "b": false},
				"empty":  map[string]any{},
			},
		},
		"typedObj": map[string]string{"a": "b"},
	}
}

func TestMap(t *testing.T) {
	d := doc()
	obj := d["obj"].(map[string]any)
	inner := obj["inner"].(map[string]any)
	tests := []struct {
		name   string
		m      map[string]any
		keys   []string
		want   map[string]any
		wantOK bool
	}{
		{name: "no keys returns m", m: d, keys: nil, want: d, wantOK: true},
		{name: "top level", m: d, keys: []string{"obj"}, want: obj, wantOK: true},
		{name: "second level", m: d, keys: []string{"obj", "inner"}, want: inner, wantOK: true},
		{name: "third level", m: d, keys: []string{"obj", "inner", "labels"}, want: inner["labels"].(map[string]any), wantOK: true},
		{name: "present but empty", m: d, keys: []string{"obj", "inner", "empty"}, want: map[string]any{}, wantOK: true},
		{name: "absent top", m: d, keys: []string{"missing"}},
		{name: "absent mid", m: d, keys: []string{"obj", "missing", "x"}},
		{name: "absent leaf", m: d, keys: []string{"obj", "inner", "missing"}},
		{name: "null top", m: d, keys: []string{"null"}},
		{name: "null mid", m: d, keys: []string{"obj", "null"}},
		{name: "null leaf below", m: d, keys: []string{"obj", "inner", "null"}},
		{name: "through null", m: d, keys: []string{"null", "x"}},
		{name: "through null mid", m: d, keys: []string{"obj", "null", "x"}},
		{name: "leaf is string", m: d, keys: []string{"str"}},
		{name: "leaf is number", m: d, keys: []string{"num"}},
		{name: "leaf is bool", m: d, keys: []string{"bool"}},
		{name: "leaf is list", m: d, keys: []string{"list"}},
		{name: "leaf is map[string]string", m: d, keys: []string{"typedObj"}},
		{name: "deep leaf is string", m: d, keys: []string{"obj", "inner", "str"}},
		{name: "through string", m: d, keys: []string{"str", "x"}},
		{name: "through number", m: d, keys: []string{"num", "x"}},
		{name: "through list", m: d, keys: []string{"list", "b"}},
		{name: "through map[string]string", m: d, keys: []string{"typedObj", "a"}},
		{name: "through string mid", m: d, keys: []string{"obj", "str", "x"}},
		{name: "through list mid", m: d, keys: []string{"obj", "list", "x"}},
		{name: "nil root with keys", m: nil, keys: []string{"obj"}},
		{name: "nil root deep", m: nil, keys: []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Map(tt.m, tt.keys...)
			if ok != tt.wantOK {
				t.Fatalf("Map(%v) ok = %v, want %v", tt.keys, ok, tt.wantOK)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Map(%v) = %#v, want %#v", tt.keys, got, tt.want)
			}
		})
	}
}

// TestMapDoesNotCopy checks that Map returns the object inside m, so that
// callers see (and may edit) the same object.
func TestMapDoesNotCopy(t *testing.T) {
	d := doc()
	got, ok := Map(d, "obj", "inner")
	if !ok {
		t.Fatal("Map(obj, inner) not found")
	}
	got["added"] = "x"
	if v := d["obj"].(map[string]any)["inner"].(map[string]any)["added"]; v != "x" {
		t.Errorf("write through returned map not visible in m: %v", v)
	}
}

func TestSlice(t *testing.T) {
	d := doc()
	tests := []struct {
		name   string
		m      map[string]any
		keys   []string
		want   []any
		wantOK bool
	}{
		{name: "top level", m: d, keys: []string{"list"}, want: []any{"a", map[string]any{"b": "c"}}, wantOK: true},
		{name: "present but empty", m: d, keys: []string{"none"}, want: []any{}, wantOK: true},
		{name: "second level", m: d, keys: []string{"obj", "list"}, want: []any{float64(1)}, wantOK: true},
		{name: "absent", m: d, keys: []string{"missing"}},
		{name: "absent deep", m: d, keys: []string{"obj", "inner", "missing"}},
		{name: "null", m: d, keys: []string{"null"}},
		{name: "null mid", m: d, keys: []string{"obj", "null"}},
		{name: "through null", m: d, keys: []string{"null", "list"}},
		{name: "leaf is string", m: d, keys: []string{"str"}},
		{name: "leaf is object", m: d, keys: []string{"obj"}},
		{name: "leaf is number", m: d, keys: []string{"num"}},
		{name: "leaf is []string", m: d, keys: []string{"typed"}},
		{name: "through string", m: d, keys: []string{"str", "list"}},
		{name: "through list", m: d, keys: []string{"list", "list"}},
		{name: "through string mid", m: d, keys: []string{"obj", "str", "list"}},
		{name: "no keys", m: d, keys: nil},
		{name: "nil root", m: nil, keys: []string{"list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Slice(tt.m, tt.keys...)
			if ok != tt.wantOK {
				t.Fatalf("Slice(%v) ok = %v, want %v", tt.keys, ok, tt.wantOK)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Slice(%v) = %#v, want %#v", tt.keys, got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	d := doc()
	tests := []struct {
		name   string
		m      map[string]any
		keys   []string
		want   string
		wantOK bool
	}{
		{name: "top level", m: d, keys: []string{"str"}, want: "top", wantOK: true},
		{name: "present but empty", m: d, keys: []string{"empty"}, want: "", wantOK: true},
		{name: "second level", m: d, keys: []string{"obj", "str"}, want: "mid", wantOK: true},
		{name: "third level", m: d, keys: []string{"obj", "inner", "str"}, want: "deep", wantOK: true},
		{name: "fourth level", m: d, keys: []string{"obj", "inner", "labels", "app"}, want: "web", wantOK: true},
		{name: "absent", m: d, keys: []string{"missing"}},
		{name: "absent mid", m: d, keys: []string{"obj", "missing", "str"}},
		{name: "absent deep", m: d, keys: []string{"obj", "inner", "missing"}},
		{name: "null", m: d, keys: []string{"null"}},
		{name: "null deep", m: d, keys: []string{"obj", "inner", "null"}},
		{name: "through null", m: d, keys: []string{"null", "str"}},
		{name: "leaf is number", m: d, keys: []string{"num"}},
		{name: "leaf is bool", m: d, keys: []string{"bool"}},
		{name: "leaf is object", m: d, keys: []string{"obj"}},
		{name: "leaf is list", m: d, keys: []string{"list"}},
		{name: "deep leaf is number", m: d, keys: []string{"obj", "inner", "labels", "num"}},
		{name: "through string", m: d, keys: []string{"str", "str"}},
		{name: "through list", m: d, keys: []string{"list", "str"}},
		{name: "through number mid", m: d, keys: []string{"obj", "num", "str"}},
		{name: "no keys", m: d, keys: nil},
		{name: "nil root", m: nil, keys: []string{"str"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := String(tt.m, tt.keys...)
			if ok != tt.wantOK {
				t.Fatalf("String(%v) ok = %v, want %v", tt.keys, ok, tt.wantOK)
			}
			if got != tt.want {
				t.Errorf("String(%v) = %q, want %q", tt.keys, got, tt.want)
			}
		})
	}
}

func TestStringMap(t *testing.T) {
	d := doc()
	tests := []struct {
		name string
		m    map[string]any
		keys []string
		want map[string]string
	}{
		{name: "string entries kept, others skipped", m: d, keys: []string{"obj", "inner", "labels"}, want: map[string]string{"app": "web", "tier": "front"}},
		{name: "all entries wrong-typed", m: d, keys: []string{"obj", "inner", "allBad"}, want: map[string]string{}},
		{name: "empty object", m: d, keys: []string{"obj", "inner", "empty"}, want: nil},
		{name: "absent", m: d, keys: []string{"obj", "inner", "missing"}, want: nil},
		{name: "absent mid", m: d, keys: []string{"obj", "missing", "labels"}, want: nil},
		{name: "null", m: d, keys: []string{"obj", "inner", "null"}, want: nil},
		{name: "through null", m: d, keys: []string{"null", "labels"}, want: nil},
		{name: "leaf is string", m: d, keys: []string{"str"}, want: nil},
		{name: "leaf is list", m: d, keys: []string{"list"}, want: nil},
		{name: "leaf is map[string]string", m: d, keys: []string{"typedObj"}, want: nil},
		{name: "through string", m: d, keys: []string{"obj", "str", "labels"}, want: nil},
		{name: "nil root", m: nil, keys: []string{"labels"}, want: nil},
		{name: "no keys reads m itself", m: map[string]any{"a": "b", "n": float64(1)}, keys: nil, want: map[string]string{"a": "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StringMap(tt.m, tt.keys...)
			if !maps.Equal(got, tt.want) {
				t.Errorf("StringMap(%v) = %#v, want %#v", tt.keys, got, tt.want)
			}
			if tt.want == nil && got != nil {
				t.Errorf("StringMap(%v) = %#v, want nil", tt.keys, got)
			}
		})
	}
}
