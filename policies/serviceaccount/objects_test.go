package serviceaccount

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Minimal valid objects that the table tests, golden fixtures, fuzz seeds and
// benchmarks tweak. Each call returns a fresh copy.

var (
	hdfsGK        = schema.GroupKind{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobGK     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	podGK         = schema.GroupKind{Kind: "Pod"}
)

const (
	clusterName = "prod"
	// derivedProd is DerivedServiceAccountName("HdfsCluster", "prod").
	derivedProd = "hdfscluster-prod"
)

// hdfsCluster is an HdfsCluster named "prod" with three roles and one role
// group each, and no podOverrides.
func hdfsCluster() map[string]any {
	role := func() map[string]any {
		return map[string]any{"roleGroups": map[string]any{"default": map[string]any{"replicas": 1}}}
	}
	return map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1",
		"kind":       "HdfsCluster",
		"metadata":   map[string]any{"name": clusterName},
		"spec": map[string]any{
			"clusterConfig": map[string]any{"zookeeperConfigMapName": "prod-znode"},
			"nameNode":      role(),
			"journalNode":   role(),
			"dataNode":      role(),
		},
	}
}

// hdfsOwner is the controller ownerReference that the operator puts on the
// workloads of HdfsCluster "prod".
func hdfsOwner() map[string]any {
	return ownerRef("hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", clusterName, true)
}

func ownerRef(apiVersion, kind, name string, controller bool) map[string]any {
	ref := map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"name":       name,
		"uid":        "6f1c2a9e-3b7d-4c1e-9a52-0d8e4f7b2c13",
	}
	if controller {
		ref["controller"] = true
	}
	return ref
}

func podSpec(restartPolicy string) map[string]any {
	return map[string]any{
		"restartPolicy": restartPolicy,
		"containers": []any{map[string]any{
			"name":  "main",
			"image": "registry.example/app:1.0",
		}},
	}
}

func podTemplate(restartPolicy string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "prod-namenode"}},
		"spec":     podSpec(restartPolicy),
	}
}

func objectMeta(name string) map[string]any {
	return map[string]any{
		"name":            name,
		"labels":          map[string]any{"app": "prod-namenode"},
		"ownerReferences": []any{hdfsOwner()},
	}
}

// statefulSet is the name node StatefulSet of HdfsCluster "prod", controlled
// by it, with no ServiceAccount set.
func statefulSet() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "StatefulSet",
		"metadata":   objectMeta("prod-namenode-default"),
		"spec": map[string]any{
			"serviceName": "prod-namenode-default",
			"replicas":    1,
			"selector":    map[string]any{"matchLabels": map[string]any{"app": "prod-namenode"}},
			"template":    podTemplate("Always"),
		},
	}
}

func deployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   objectMeta("prod-httpfs"),
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "prod-namenode"}},
			"template": podTemplate("Always"),
		},
	}
}

func job() map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   objectMeta("prod-format"),
		"spec":       map[string]any{"template": podTemplate("Never")},
	}
}

func cronJob() map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "CronJob",
		"metadata":   objectMeta("prod-balancer"),
		"spec": map[string]any{
			"schedule":    "0 3 * * *",
			"jobTemplate": map[string]any{"spec": map[string]any{"template": podTemplate("Never")}},
		},
	}
}

func pod() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   objectMeta("prod-namenode-default-0"),
		"spec":       podSpec("Always"),
	}
}

// getMap returns the map at keys below obj, creating missing maps.
func getMap(obj map[string]any, keys ...string) map[string]any {
	cur := obj
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur
}

// setPodOverrideSA sets field (serviceAccountName or serviceAccount) in the
// podOverrides below keys of a product custom resource.
func setPodOverrideSA(obj map[string]any, field string, value any, keys ...string) {
	getMap(obj, append(keys, "podOverrides", "spec")...)[field] = value
}

// setPodSA sets field in the pod spec of obj, a Pod or workload of kind gk.
func setPodSA(gk schema.GroupKind, obj map[string]any, field string, value any) {
	p, ok := workload.PodOf(gk, obj)
	if !ok {
		panic("no pod spec in " + gk.String())
	}
	p.Spec[field] = value
}

// setOwners replaces the ownerReferences of obj.
func setOwners(obj map[string]any, refs ...any) {
	getMap(obj, "metadata")["ownerReferences"] = refs
}
