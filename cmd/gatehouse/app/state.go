package app

import (
	"context"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/webhooks"
)

// clusterState is what `check --state` knows of the cluster: the objects
// given with --state, plus every object admitted so far. Webhooks that read
// cluster state get it from here offline, as the server gets it from its
// informer caches.
type clusterState struct {
	namespaceLabels map[string]map[string]string
	objects         []map[string]any
}

func newClusterState(docs []Document) *clusterState {
	s := &clusterState{namespaceLabels: map[string]map[string]string{}}
	for _, d := range docs {
		s.add(d.Object)
	}
	return s
}

// add records an object that exists (or was just admitted).
func (s *clusterState) add(obj map[string]any) {
	s.objects = append(s.objects, obj)
	ref := objectRef(obj)
	if ref.APIVersion == "v1" && ref.Kind == "Namespace" {
		labels := map[string]string{"kubernetes.io/metadata.name": ref.Name}
		if meta, ok := obj["metadata"].(map[string]any); ok {
			if l, ok := meta["labels"].(map[string]any); ok {
				for k, v := range l {
					if sv, ok := v.(string); ok {
						labels[k] = sv
					}
				}
			}
		}
		s.namespaceLabels[ref.Name] = labels
	}
}

// labelsOf returns a namespace's labels; an unknown namespace has none.
func (s *clusterState) labelsOf(namespace string) map[string]string {
	return s.namespaceLabels[namespace]
}

// NamespaceLabels implements webhooks.NamespaceReader: the labels of a
// Namespace given with --state or admitted earlier; none for another.
func (s *clusterState) NamespaceLabels(name string) (map[string]string, error) {
	return s.labelsOf(name), nil
}

// ListWorkloads implements webhooks.WorkloadReader over the known objects.
func (s *clusterState) ListWorkloads(_ context.Context, namespace, kind string, labels map[string]string) ([]map[string]any, error) {
	var out []map[string]any
	for _, obj := range s.objects {
		ref := objectRef(obj)
		if ref.APIVersion != "apps/v1" || ref.Kind != kind || ref.Namespace != namespace {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		have, _ := meta["labels"].(map[string]any)
		match := true
		for k, v := range labels {
			if have[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Lookup implements webhooks.StateReader over the known objects, with the
// same index functions the server's informer indexes use.
func (s *clusterState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	var names []string
	for _, obj := range s.objects {
		if objectGVK(obj) != gvk {
			continue
		}
		for _, v := range webhooks.IndexValues(gvk, index, obj) {
			if v == value {
				names = append(names, objectRef(obj).Name)
				break
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// Objects implements webhooks.StateReader over the known objects.
func (s *clusterState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	var out []map[string]any
	for _, obj := range s.objects {
		if objectGVK(obj) == gvk && slices.Contains(webhooks.IndexValues(gvk, index, obj), value) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Exists implements webhooks.StateReader.
func (s *clusterState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	for _, obj := range s.objects {
		if objectGVK(obj) == gvk && objectRef(obj).Name == name {
			return true, nil
		}
	}
	return false, nil
}

func objectGVK(obj map[string]any) schema.GroupVersionKind {
	ref := objectRef(obj)
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}
