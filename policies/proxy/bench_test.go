package proxy

import (
	"encoding/json"
	"testing"
)

// BenchmarkInject measures Inject on a 3-container pod (an init container
// and two containers) as the ServiceAccount admission plugin leaves it,
// decoded from JSON as the webhook does.
func BenchmarkInject(b *testing.B) {
	data, err := json.Marshal(admittedPod())
	if err != nil {
		b.Fatal(err)
	}
	c := BuiltinConfig()
	b.ReportAllocs()
	for b.Loop() {
		var pod map[string]any
		if err := json.Unmarshal(data, &pod); err != nil {
			b.Fatal(err)
		}
		if changed, _ := Inject(pod, c); !changed {
			b.Fatal("no change")
		}
	}
}
