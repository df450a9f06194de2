package scopelabel

import (
	"encoding/json"

	"sigs.k8s.io/yaml"
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

func readBack(obj map[string]any) map[string]any {
	data, err := yaml.Marshal(obj)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func clone(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func toYAML(obj any) string {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	return string(data)
}
