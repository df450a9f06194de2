package podsecurity

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// benchPodJSON is a typical kubedoop pod as the API server sends it (about
// 6 KB of JSON): an init container and two containers, each with env, ports,
// probes, resources and volume mounts, and no securityContext anywhere.
func benchPodJSON() []byte {
	benchContainer := func(name string, port int) map[string]any {
		var env []any
		for i := range 12 {
			env = append(env, map[string]any{"name": fmt.Sprintf("%s_SETTING_%d", name, i), "value": fmt.Sprintf("value-%d", i)})
		}
		env = append(env, map[string]any{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}})
		probe := map[string]any{
			"httpGet":             map[string]any{"path": "/healthz", "port": port, "scheme": "HTTPS"},
			"initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3, "successThreshold": 1,
		}
		return map[string]any{
			"name":            name,
			"image":           "quay.io/kubedoop/hadoop:3.4.1-kubedoop0.0.0-dev",
			"imagePullPolicy": "IfNotPresent",
			"command":         []any{"/bin/bash", "-x", "-euo", "pipefail", "-c"},
			"args":            []any{"exec /kubedoop/hadoop/bin/hdfs " + name},
			"env":             env,
			"ports":           []any{map[string]any{"name": "https", "containerPort": port, "protocol": "TCP"}, map[string]any{"name": "metrics", "containerPort": 8183, "protocol": "TCP"}},
			"livenessProbe":   probe,
			"readinessProbe":  probe,
			"resources": map[string]any{
				"limits":   map[string]any{"cpu": "2", "memory": "4Gi"},
				"requests": map[string]any{"cpu": "500m", "memory": "4Gi"},
			},
			"volumeMounts": []any{
				map[string]any{"name": "config", "mountPath": "/kubedoop/config"},
				map[string]any{"name": "log", "mountPath": "/kubedoop/log"},
				map[string]any{"name": "tls", "mountPath": "/kubedoop/tls", "readOnly": true},
				map[string]any{"name": "data", "mountPath": "/kubedoop/data"},
			},
			"terminationMessagePath":   "/dev/termination-log",
			"terminationMessagePolicy": "File",
		}
	}
	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":      "prod-namenode-default-0",
			"namespace": "hdfs",
			"labels": map[string]any{
				"app.kubernetes.io/name": "hdfscluster", "app.kubernetes.io/instance": "prod",
				"app.kubernetes.io/component": "namenode", "app.kubernetes.io/role-group": "default",
			},
		},
		"spec": map[string]any{
			"initContainers":     []any{benchContainer("format-namenodes", 8020)},
			"containers":         []any{benchContainer("namenode", 9871), benchContainer("zkfc", 8019)},
			"serviceAccountName": "hdfscluster-prod",
			"restartPolicy":      "Always",
			"volumes": []any{
				map[string]any{"name": "config", "configMap": map[string]any{"name": "prod-namenode-default"}},
				map[string]any{"name": "log", "emptyDir": map[string]any{"sizeLimit": "30Mi"}},
			},
		},
	}
	data, err := json.Marshal(pod)
	if err != nil {
		panic(err)
	}
	return data
}

func decodePod(tb testing.TB, data []byte) map[string]any {
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		tb.Fatal(err)
	}
	return obj
}

// BenchmarkDefaultPod measures DefaultPod alone on a fresh, undefaulted
// copy of the bench pod each iteration (the webhook's CREATE path), because
// DefaultPod mutates. The copies are made in batches of 256 with the timer
// stopped, followed by a GC, so neither decoding nor copying is measured,
// though the garbage collection that the copies' garbage causes during the
// timed part still is (on a small machine it is a good part of the time).
func BenchmarkDefaultPod(b *testing.B) {
	data := benchPodJSON()
	b.Logf("bench pod: %d bytes of JSON", len(data))
	pristine := decodePod(b, data)
	const batch = 256
	pods := make([]map[string]any, batch)
	refill := func() {
		for i := range pods {
			pods[i] = clone(pristine)
		}
		runtime.GC()
	}
	refill()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == batch {
			b.StopTimer()
			refill()
			i = 0
			b.StartTimer()
		}
		if !DefaultPod(pods[i], BuiltinDefaults()) {
			b.Fatal("nothing defaulted")
		}
		i++
	}
}

// BenchmarkDefaultPodNoop measures DefaultPod on a pod that already has
// every default (the idempotent re-run), which changes nothing and so needs
// no copy.
func BenchmarkDefaultPodNoop(b *testing.B) {
	pod := decodePod(b, benchPodJSON())
	DefaultPod(pod, BuiltinDefaults())
	b.ReportAllocs()
	for b.Loop() {
		if DefaultPod(pod, BuiltinDefaults()) {
			b.Fatal("changed a defaulted pod")
		}
	}
}

// BenchmarkValidatePod measures ValidatePod on the defaulted bench pod, the
// final state the validating webhook sees (no findings), and on the
// undefaulted one (a finding per field: the mutating webhook did not run).
func BenchmarkValidatePod(b *testing.B) {
	bare := decodePod(b, benchPodJSON())
	defaulted := clone(bare)
	DefaultPod(defaulted, BuiltinDefaults())
	for _, bc := range []struct {
		name     string
		obj      map[string]any
		findings int
	}{{"Defaulted", defaulted, 0}, {"Bare", bare, 6 + 3*4}} {
		b.Run(bc.name, func(b *testing.B) {
			if got := len(ValidatePod(bc.obj, nil)); got != bc.findings {
				b.Fatalf("%d findings, want %d", got, bc.findings)
			}
			b.ReportAllocs()
			for b.Loop() {
				ValidatePod(bc.obj, nil)
			}
		})
	}
}
