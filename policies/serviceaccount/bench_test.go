package serviceaccount

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// typicalProductCR is an HdfsCluster with three roles of two role groups
// each, where every role and role group has a podOverrides of the usual kind
// (resources, env, tolerations) and one role group sets the derived
// ServiceAccount redundantly.
func typicalProductCR() map[string]any {
	override := func() map[string]any {
		return map[string]any{"spec": map[string]any{
			"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "hdfs", "effect": "NoSchedule"}},
			"containers": []any{map[string]any{
				"name":      "main",
				"env":       []any{map[string]any{"name": "HADOOP_HEAPSIZE", "value": "2048"}},
				"resources": map[string]any{"limits": map[string]any{"memory": "4Gi"}},
			}},
		}}
	}
	obj := hdfsCluster()
	for _, role := range []string{"nameNode", "journalNode", "dataNode"} {
		r := getMap(obj, "spec", role)
		r["podOverrides"] = override()
		r["config"] = map[string]any{"resources": map[string]any{"cpu": map[string]any{"min": "1", "max": "2"}}}
		for _, group := range []string{"default", "large"} {
			g := getMap(r, "roleGroups", group)
			g["replicas"] = 3
			g["podOverrides"] = override()
		}
	}
	setPodOverrideSA(obj, "serviceAccountName", derivedProd, "spec", "dataNode", "roleGroups", "large")
	return obj
}

func BenchmarkValidate(b *testing.B) {
	sts := statefulSet()
	setPodSA(statefulSetGK, sts, "serviceAccountName", derivedProd)
	for _, bc := range []struct {
		name string
		gk   schema.GroupKind
		obj  map[string]any
	}{
		{"ProductCR", hdfsGK, typicalProductCR()},
		{"StatefulSet", statefulSetGK, sts},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Validate(bc.gk, bc.obj, policies.DefaultProducts(), derivedNaming)
			}
		})
	}
}
