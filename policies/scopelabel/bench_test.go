package scopelabel

import (
	"encoding/json"
	"testing"
)

// BenchmarkForNamespaced measures decoding a ConfigMap and labelling it.
func BenchmarkForNamespaced(b *testing.B) {
	data, err := json.Marshal(configMap())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			b.Fatal(err)
		}
		if changed, _ := ForNamespaced(obj, nsLabels, scopeLabels); !changed {
			b.Fatal("no change")
		}
	}
}

// BenchmarkCheckUpdate measures the UPDATE check on two decoded objects.
func BenchmarkCheckUpdate(b *testing.B) {
	obj := withLabel(configMap(), keyA, "tenant-1")
	old := clone(obj)
	b.ReportAllocs()
	for b.Loop() {
		if f := CheckUpdate(obj, old, scopeLabels, nsLabels, true); f != nil {
			b.Fatal(f)
		}
	}
}
