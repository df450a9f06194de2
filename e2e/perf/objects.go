package perf

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The objects of the end-to-end runs: typical, admitted by gatehouse and by
// the policies of vap/, and reaching every gatehouse webhook that intercepts
// their kind (the namespace opts in to the pod security webhooks).

func u(obj map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: obj} }

func perfContainer(name string) map[string]any {
	return map[string]any{
		"name": name, "image": "registry.example/" + name + ":1.2.3",
		"args": []any{"--port=8080", "--log-level=info"},
		"env": []any{
			map[string]any{"name": "MODE", "value": "production"},
			map[string]any{"name": "REGION", "value": "eu-west"},
		},
		"ports": []any{map[string]any{"containerPort": int64(8080), "name": "http"}},
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"limits":   map[string]any{"memory": "256Mi"},
		},
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/ready", "port": int64(8080)}},
		"volumeMounts":   []any{map[string]any{"name": "tls", "mountPath": "/etc/tls"}},
	}
}

func secretVolumeClaim() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			"secrets.kubedoop.dev/class": "tls",
			"secrets.kubedoop.dev/scope": "pod,node,service=web",
		}},
		"spec": map[string]any{
			"accessModes":      []any{"ReadWriteOnce"},
			"storageClassName": "secrets.kubedoop.dev",
			"resources":        map[string]any{"requests": map[string]any{"storage": "1"}},
		},
	}
}

func perfPodSpec() map[string]any {
	return map[string]any{
		"containers": []any{perfContainer("app"), perfContainer("sidecar"), perfContainer("metrics")},
		"volumes": []any{
			map[string]any{"name": "tls", "ephemeral": map[string]any{"volumeClaimTemplate": secretVolumeClaim()}},
		},
	}
}

// LifecycleObject is object i of an end-to-end run in namespace: a Pod, a
// StatefulSet, a DependencyGroup or an HdfsCluster, in turn.
func LifecycleObject(namespace string, i int) *unstructured.Unstructured {
	name := fmt.Sprintf("perf-%d", i)
	labels := map[string]any{"app.kubernetes.io/name": "perf", "app.kubernetes.io/instance": name}
	switch i % 4 {
	case 0:
		return u(map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labels},
			"spec":     perfPodSpec()})
	case 1:
		return u(map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
			"metadata": map[string]any{"name": name, "namespace": namespace, "labels": labels},
			"spec": map[string]any{
				"serviceName": name, "replicas": int64(3),
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": perfPodSpec()},
				"volumeClaimTemplates": []any{func() map[string]any {
					t := secretVolumeClaim()
					t["metadata"].(map[string]any)["name"] = "data"
					return t
				}()},
			}})
	case 2:
		return u(map[string]any{"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"crds": []any{
				map[string]any{"name": fmt.Sprintf("things%d.perf.example.com", i)},
				map[string]any{"name": fmt.Sprintf("widgets%d.perf.example.com", i)},
			}}})
	default:
		roles := map[string]any{}
		for _, role := range []string{"nameNode", "dataNode", "journalNode"} {
			roles[role] = map[string]any{
				"podOverrides": map[string]any{"spec": map[string]any{"serviceAccountName": name + "-sa"}},
				"roleGroups":   map[string]any{"default": map[string]any{"replicas": int64(1)}},
			}
		}
		roles["clusterConfig"] = map[string]any{"zookeeperConfigMapName": name + "-znode"}
		return u(map[string]any{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster",
			"metadata": map[string]any{"name": name, "namespace": namespace},
			"spec":     roles})
	}
}

// ScaleObjects are the cluster state of the memory target: namespaces,
// DependencyGroups (two CRDs each) and OperatorHarnesses (one operator
// namespace and ServiceAccount each), all distinct.
func ScaleObjects(namespaces, groups, harnesses int) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, namespaces+groups+harnesses)
	for i := range namespaces {
		out = append(out, u(map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": fmt.Sprintf("perf-scale-%d", i), "labels": map[string]any{"team": fmt.Sprintf("t%d", i%50)}}}))
	}
	for i := range groups {
		out = append(out, u(map[string]any{"apiVersion": "helmetica.io/v1", "kind": "DependencyGroup",
			"metadata": map[string]any{"name": fmt.Sprintf("perf-scale-%d", i)},
			"spec": map[string]any{"crds": []any{
				map[string]any{"name": fmt.Sprintf("alphas%d.scale.example.com", i)},
				map[string]any{"name": fmt.Sprintf("betas%d.scale.example.com", i)},
			}}}))
	}
	for i := range harnesses {
		out = append(out, u(map[string]any{"apiVersion": "vshn.net/v1", "kind": "OperatorHarness",
			"metadata": map[string]any{"name": fmt.Sprintf("perf-scale-%d", i)},
			"spec": map[string]any{
				"scopeToLabel": fmt.Sprintf("requires.helmetica.io/operator-%d", i),
				"operator": map[string]any{
					"namespace":       fmt.Sprintf("perf-operator-%d", i),
					"serviceAccounts": []any{"operator"},
				},
			}}))
	}
	return out
}
