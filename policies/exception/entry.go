package exception

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
)

// GVK and ClusterGVK are the kinds of the exception objects.
var (
	GVK        = exceptionsv1alpha1.SchemeGroupVersion.WithKind(exceptionsv1alpha1.KindException)
	ClusterGVK = exceptionsv1alpha1.SchemeGroupVersion.WithKind(exceptionsv1alpha1.KindClusterException)
)

// Entry is one exception as Validate and the Index read it: an Exception
// (Namespace set) or a ClusterException (Namespace empty), by name, with
// its spec.
type Entry struct {
	// Namespace holds an Exception; it is empty for a ClusterException.
	Namespace string
	Name      string
	Spec      exceptionsv1alpha1.ExceptionSpec
}

// Namespaced reports whether the entry is an Exception, held by a
// namespace.
func (e Entry) Namespaced() bool { return e.Namespace != "" }

// Key is the one spelling under which warnings, audit annotations, metrics
// and reports name the exception: "<namespace>/<name>" for an Exception,
// "<name>" for a ClusterException. It is client-go's cache key of the
// object, so a key is what `kubectl get` and the informer call it, and the
// two kinds never collide: a name holds no "/".
func (e Entry) Key() string {
	if e.Namespace == "" {
		return e.Name
	}
	return e.Namespace + "/" + e.Name
}

// FromException is the entry of an Exception.
func FromException(e *exceptionsv1alpha1.Exception) Entry {
	return Entry{Namespace: e.Namespace, Name: e.Name, Spec: e.Spec}
}

// FromClusterException is the entry of a ClusterException.
func FromClusterException(e *exceptionsv1alpha1.ClusterException) Entry {
	return Entry{Name: e.Name, Spec: e.Spec}
}

// errNotAnException is FromObject's answer for an object of another kind.
var errNotAnException = errors.New("is not a gatehouse.dev/v1alpha1 Exception or ClusterException")

// FromObject decodes an Exception or ClusterException as a review or an
// informer cache holds it (a decoded JSON object). The error never quotes
// the object: an object the API server stored always decodes (its schema
// holds every field to its type), so one that does not is refused, not
// explained.
func FromObject(obj map[string]any) (Entry, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv != exceptionsv1alpha1.SchemeGroupVersion {
		return Entry{}, errNotAnException
	}
	switch kind {
	case exceptionsv1alpha1.KindException:
		var e exceptionsv1alpha1.Exception
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &e); err != nil {
			return Entry{}, fmt.Errorf("does not decode into a %s", kind)
		}
		if e.Namespace == "" {
			return Entry{}, fmt.Errorf("is a %s without a namespace", kind)
		}
		return FromException(&e), nil
	case exceptionsv1alpha1.KindClusterException:
		var e exceptionsv1alpha1.ClusterException
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &e); err != nil {
			return Entry{}, fmt.Errorf("does not decode into a %s", kind)
		}
		if e.Namespace != "" {
			return Entry{}, fmt.Errorf("is a %s with a namespace; it is cluster-scoped", kind)
		}
		return FromClusterException(&e), nil
	}
	return Entry{}, errNotAnException
}
