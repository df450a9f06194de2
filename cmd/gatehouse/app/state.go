package app

// clusterState is what `check --state` knows of the cluster: the objects
// given with --state, plus every object admitted so far. Webhooks that read
// cluster state get it from here offline, as the server gets it from its
// informer caches.
type clusterState struct {
	namespaceLabels map[string]map[string]string
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
