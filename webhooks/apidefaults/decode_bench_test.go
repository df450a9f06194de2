package apidefaults

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// benchPod is the Pod of webhooks' BenchmarkAdapter: two containers, an
// init container and an ephemeral volume with scope annotations.
const benchPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"team-a","labels":{"app":"web"}},
"spec":{"initContainers":[{"name":"init","image":"registry.example/init:1.2.3","args":["--port=8080","--log-level=info"],
"env":[{"name":"MODE","value":"production"},{"name":"REGION","value":"eu-west"}],"ports":[{"containerPort":8080,"name":"http"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"readinessProbe":{"httpGet":{"path":"/ready","port":8080}},
"volumeMounts":[{"name":"tls","mountPath":"/etc/tls"}]}],
"containers":[{"name":"app","image":"registry.example/app:1.2.3","args":["--port=8080","--log-level=info"],
"env":[{"name":"MODE","value":"production"},{"name":"REGION","value":"eu-west"}],"ports":[{"containerPort":8080,"name":"http"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"readinessProbe":{"httpGet":{"path":"/ready","port":8080}},
"volumeMounts":[{"name":"tls","mountPath":"/etc/tls"}]},
{"name":"sidecar","image":"registry.example/sidecar:1.2.3","args":["--port=8080","--log-level=info"],
"env":[{"name":"MODE","value":"production"},{"name":"REGION","value":"eu-west"}],"ports":[{"containerPort":8080,"name":"http"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"readinessProbe":{"httpGet":{"path":"/ready","port":8080}},
"volumeMounts":[{"name":"tls","mountPath":"/etc/tls"}]}],
"volumes":[{"name":"tls","ephemeral":{"volumeClaimTemplate":{"metadata":{"annotations":{"secrets.kubedoop.dev/class":"tls","secrets.kubedoop.dev/scope":"pod,node,service=web"}},
"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1"}}}}}}]}}`

// BenchmarkDecodeOnce compares the one decode a review makes of its object
// (DecodeMap: a map checked against the Go type in the same pass) with the
// alternatives docs/design.md weighs: the typed decode alone (Decode, as
// the API server decodes), and the two passes DecodeMap replaced
// (encoding/json into a map, then Decode).
func BenchmarkDecodeOnce(b *testing.B) {
	raw := []byte(benchPod)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	if _, ok := DecodeMap(gvk, raw); !ok {
		b.Fatal("DecodeMap refuses the pod")
	}
	b.Run("map-checked-DecodeMap", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := DecodeMap(gvk, raw); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("typed-Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(gvk, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map-then-typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := Decode(gvk, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
