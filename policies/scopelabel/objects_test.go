package scopelabel

import (
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

const (
	keyA = "requires.helmetica.io/operator-mariadb"
	keyB = "requires.helmetica.io/operator-redis"
)

var (
	scopeLabels = []string{keyB, keyA, keyA, ""}
	nsLabels    = map[string]string{keyA: "tenant-1", "kubernetes.io/metadata.name": "apps"}
)

func configMap() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings", "namespace": "apps", "labels": map[string]any{"app": "db"}},
		"data":       map[string]any{"k": "v"},
	}
}

func clusterRole() map[string]any {
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]any{"name": "mariadb-reader"},
		"rules":      []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}},
	}
}

func labels(obj map[string]any) map[string]any {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	l, ok := meta["labels"].(map[string]any)
	if !ok {
		l = map[string]any{}
		meta["labels"] = l
	}
	return l
}

// Fixture helpers shared with the other policies' tests.
var (
	readBack = golden.ReadBack
	clone    = golden.Clone
	toYAML   = golden.ToYAML
)
