package overrides

import "testing"

// benchDocument is a realistic overrides document: one entry for each of the
// five components, with resources, scheduling, env, labels, a sidecar and
// extra arguments.
func benchDocument() map[string]any {
	limits := func(memory string) map[string]any {
		return map[string]any{"limits": map[string]any{"memory": memory}, "requests": map[string]any{"cpu": "100m", "memory": memory}}
	}
	tolerations := []any{
		map[string]any{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"},
		map[string]any{"operator": "Exists", "effect": "NoExecute"},
	}
	return document(
		withField(entryOf("net", kindDaemonSet, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{"example.com/team": "network"}},
			"spec": map[string]any{
				"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "10%"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"tier": "node"}},
					"spec": map[string]any{
						"priorityClassName": "system-node-critical",
						"tolerations":       tolerations,
						"containers": []any{
							map[string]any{"name": "node", "resources": limits("512Mi"),
								"env": []any{map[string]any{"name": "LOG_LEVEL", "value": "debug"}}},
						},
						"initContainers": []any{map[string]any{"name": "install-cni", "resources": limits("64Mi")}},
					},
				},
			},
		}), "extraArgs", map[string]any{"node": []any{"--metrics-port=9091"}}),
		entryOf("machina", kindDeployment, map[string]any{
			"spec": map[string]any{
				"replicas": 2,
				"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 1, "maxUnavailable": 0}},
				"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": "machina-controller", "resources": limits("1Gi"),
						"readinessProbe": map[string]any{"periodSeconds": 5, "httpGet": map[string]any{"path": "/readyz", "port": 8081}}}},
					"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
						"whenUnsatisfiable": "ScheduleAnyway"}},
				}},
			},
		}),
		withField(entryOf("gantry", kindDaemonSet, templateSpec(map[string]any{
			"containers": []any{
				map[string]any{"name": "gantry", "resources": limits("256Mi")},
				map[string]any{"name": "log-shipper", "image": "registry.example/fluent-bit:3.1",
					"volumeMounts": []any{map[string]any{"name": "logs", "mountPath": "/var/log/gantry", "readOnly": true}}},
			},
			"volumes":      []any{map[string]any{"name": "logs", "hostPath": map[string]any{"path": "/var/log/gantry"}}},
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
		})), "addContainers", []any{"log-shipper"}),
		withField(withField(entryOf("metalman", kindDeployment, templateSpec(map[string]any{
			"containers": []any{map[string]any{"name": "metalman", "resources": limits("256Mi"),
				"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": "metalman-extra"}}}}},
			"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
					map[string]any{"key": "example.com/pxe", "operator": "In", "values": []any{"true"}},
				}}},
			}}},
		})), "sites", []any{"edge-west", "edge-east"}), "extraArgs", map[string]any{"metalman": []any{"--dhcp-lease=1h"}}),
		withField(entryOf("storage", kindDaemonSet, map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"example.com/cost-center": "storage"}},
			"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"prometheus.io/scrape": "true"}},
				"spec": map[string]any{
					"containers":     []any{map[string]any{"name": "run", "resources": limits("2Gi")}},
					"initContainers": []any{map[string]any{"name": "init-perms", "resources": limits("32Mi")}},
					"tolerations":    tolerations,
				},
			}},
		}), "sites", []any{"edge-west"}),
	)
}

func BenchmarkValidate(b *testing.B) {
	data := one(render(benchDocument()))
	live := typicalLive()
	live["gantry/DaemonSet"] = []Workload{{
		Kind: kindDaemonSet, SelectorLabels: map[string]string{"app": "gantry"},
		Volumes: []string{"host-root"}, Containers: []string{"gantry"},
	}}
	if findings := Validate(anyTable, data, live); len(findings) != 0 {
		b.Fatalf("benchmark document has findings: %v", results(findings))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data[key])))
	for b.Loop() {
		Validate(anyTable, data, live)
	}
}
