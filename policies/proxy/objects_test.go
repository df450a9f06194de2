package proxy

import (
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// saVolume is the volume the ServiceAccount admission plugin adds (upstream
// shape, as the API server sends it to webhooks).
func saVolume(name string) map[string]any {
	return map[string]any{
		"name": name,
		"projected": map[string]any{
			"defaultMode": 420,
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": 3607, "path": "token"}},
				map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
				map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{
					"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"},
				}}}},
			},
		},
	}
}

func saMount(volume string) map[string]any {
	return map[string]any{"name": volume, "mountPath": MountPath, "readOnly": true}
}

func ctr(name string, mounts ...any) map[string]any {
	c := map[string]any{
		"name":  name,
		"image": "registry.example/operator:1.0",
		"env":   []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}},
	}
	if len(mounts) > 0 {
		c["volumeMounts"] = mounts
	}
	return c
}

// admittedPod is a pod exactly as the ServiceAccount admission plugin leaves
// it: an init container and two containers, each mounting kube-api-access-x7k2p.
func admittedPod() map[string]any {
	const v = "kube-api-access-x7k2p"
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "operator", "namespace": "operators"},
		"spec": map[string]any{
			"serviceAccountName": "operator",
			"initContainers":     []any{ctr("setup", saMount(v))},
			"containers": []any{
				ctr("manager", map[string]any{"name": "config", "mountPath": "/etc/operator"}, saMount(v)),
				ctr("metrics", saMount(v)),
			},
			"volumes": []any{
				map[string]any{"name": "config", "configMap": map[string]any{"name": "operator-config"}},
				saVolume(v),
			},
		},
	}
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func container(obj map[string]any, list string, i int) map[string]any {
	return spec(obj)[list].([]any)[i].(map[string]any)
}

// Fixture helpers shared with the other policies' tests.
var (
	readBack = golden.ReadBack
	clone    = golden.Clone
	toYAML   = golden.ToYAML
)
