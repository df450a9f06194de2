package policies

import "k8s.io/apimachinery/pkg/runtime/schema"

// Index is one question a policy asks of the cluster view, as a lookup key
// of the objects of one kind: an object is found under every value Values
// returns for it. Each policy package that reads cluster state lists its
// indexes beside its State interface (index.go); the server registers them as
// informer field indexes, so a lookup is a map access whatever the number of
// objects, and `gatehouse check` applies the same functions to its --state
// objects.
type Index struct {
	GVK    schema.GroupVersionKind
	Name   string
	Values func(obj map[string]any) []string
}

// IndexValues applies the index of indexes called name of gvk's objects to
// obj; there are none for an index that is not among them.
func IndexValues(indexes []Index, gvk schema.GroupVersionKind, name string, obj map[string]any) []string {
	for _, idx := range indexes {
		if idx.GVK == gvk && idx.Name == name {
			return idx.Values(obj)
		}
	}
	return nil
}
