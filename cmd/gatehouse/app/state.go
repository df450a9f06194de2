package app

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
)

// clusterState is what `check --state` knows of the cluster: the objects
// given with --state, plus every object admitted so far. Webhooks that read
// cluster state get it from here offline, as the server gets it from its
// informer caches: the same index functions, each lookup a map access, and
// only what the lookups read kept (namespace labels; clusterstate.TrimForLookups
// of the indexed kinds; apps/v1 workloads whole, for OVR). An indexed object
// is known by its webhooks.ObjectKey ("<namespace>/<name>" when namespaced):
// adding it again (an object given with --state and then checked, or
// admitted twice) replaces it, as an informer's update does.
type clusterState struct {
	namespaceLabels map[string]map[string]string
	workloads       []map[string]any
	// byName (by ObjectKey) and byIndex hold the indexed kinds.
	byName  map[schema.GroupVersionKind]map[string]map[string]any
	byIndex map[indexKey][]map[string]any
}

type indexKey struct {
	gvk          schema.GroupVersionKind
	index, value string
}

func newClusterState(docs []Document) *clusterState {
	s := &clusterState{
		namespaceLabels: map[string]map[string]string{},
		byName:          map[schema.GroupVersionKind]map[string]map[string]any{},
		byIndex:         map[indexKey][]map[string]any{},
	}
	for _, d := range docs {
		s.add(d.Object)
	}
	return s
}

// add records an object that exists (or was just admitted), keeping only
// what a lookup reads.
func (s *clusterState) add(obj map[string]any) {
	ref := objectRef(obj)
	gvk := objectGVK(obj)
	switch {
	case ref.APIVersion == "v1" && ref.Kind == "Namespace":
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
	case gvk.Group == "apps":
		s.workloads = append(s.workloads, obj)
	case len(clusterstate.IndexNames(gvk)) > 0:
		kept := clusterstate.TrimForLookups(obj)
		key := webhooks.ObjectKey(kept)
		if s.byName[gvk] == nil {
			s.byName[gvk] = map[string]map[string]any{}
		}
		if old, ok := s.byName[gvk][key]; ok {
			s.unindex(gvk, old)
		}
		s.byName[gvk][key] = kept
		for _, index := range clusterstate.IndexNames(gvk) {
			for _, v := range clusterstate.IndexValues(gvk, index, kept) {
				k := indexKey{gvk, index, v}
				s.byIndex[k] = append(s.byIndex[k], kept)
			}
		}
	}
}

// unindex removes obj from every index entry of gvk it is found under.
func (s *clusterState) unindex(gvk schema.GroupVersionKind, obj map[string]any) {
	for _, index := range clusterstate.IndexNames(gvk) {
		for _, v := range clusterstate.IndexValues(gvk, index, obj) {
			k := indexKey{gvk, index, v}
			kept := s.byIndex[k][:0:0]
			for _, o := range s.byIndex[k] {
				if webhooks.ObjectKey(o) != webhooks.ObjectKey(obj) {
					kept = append(kept, o)
				}
			}
			s.byIndex[k] = kept
		}
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
	for _, obj := range s.workloads {
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

// Objects implements webhooks.StateReader with the index.
func (s *clusterState) Objects(gvk schema.GroupVersionKind, index, value string) ([]map[string]any, error) {
	return s.byIndex[indexKey{gvk, index, value}], nil
}

// Lookup implements webhooks.StateReader: the ObjectKeys of Objects, sorted.
func (s *clusterState) Lookup(gvk schema.GroupVersionKind, index, value string) ([]string, error) {
	objs := s.byIndex[indexKey{gvk, index, value}]
	names := make([]string, 0, len(objs))
	for _, obj := range objs {
		names = append(names, webhooks.ObjectKey(obj))
	}
	sort.Strings(names)
	return names, nil
}

// Exists implements webhooks.StateReader for a cluster-scoped kind.
func (s *clusterState) Exists(gvk schema.GroupVersionKind, name string) (bool, error) {
	_, ok := s.byName[gvk][name]
	return ok, nil
}

func objectGVK(obj map[string]any) schema.GroupVersionKind {
	ref := objectRef(obj)
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
}
