// Package workload locates pod specs and their containers inside Pods and
// every workload kind that carries a pod template, so that each contract reads
// them the same way (docs/contracts.md §0.6).
package workload

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"slices"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// Kind is one kind that carries a pod spec, with the resource the API server
// serves it under and where its pod template sits.
type Kind struct {
	Resource schema.GroupVersionResource
	Kind     string
	// Template is the path of the pod template (metadata + spec); empty for
	// Pod, whose own metadata and spec are the pod's.
	Template []string
}

// Kinds lists every kind that runs pods, in a fixed order (a copy; a Kind's
// Template is the table's: read it only).
func Kinds() []Kind { return slices.Clone(kinds) }

var kinds = []Kind{
	{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod"},
	{Resource: schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, Kind: "PodTemplate", Template: []string{"template"}},
	{Resource: schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}, Kind: "ReplicationController", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, Kind: "StatefulSet", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, Kind: "DaemonSet", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Kind: "ReplicaSet", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, Kind: "Job", Template: []string{"spec", "template"}},
	{Resource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, Kind: "CronJob", Template: []string{"spec", "jobTemplate", "spec", "template"}},
}

// SpecPath is the path of the pod spec in an object of the kind: "spec"
// for a Pod, the template's "spec" otherwise (a new slice).
func (k Kind) SpecPath() []string {
	return append(slices.Clone(k.Template), "spec")
}

// Lookup returns the Kind entry for a group and kind.
func Lookup(gk schema.GroupKind) (Kind, bool) {
	for _, k := range kinds {
		if k.Resource.Group == gk.Group && k.Kind == gk.Kind {
			return k, true
		}
	}
	return Kind{}, false
}

// Pod is the pod inside an object: a Pod itself, or a workload's pod template.
type Pod struct {
	// MetaPath and Meta are the pod's (template's) metadata.
	MetaPath *field.Path
	Meta     map[string]any
	// SpecPath and Spec are the pod spec.
	SpecPath *field.Path
	Spec     map[string]any
}

// PodOf returns the pod inside obj, an object of kind gk, or false when gk
// runs no pods or obj has no pod spec.
func PodOf(gk schema.GroupKind, obj map[string]any) (Pod, bool) {
	k, ok := Lookup(gk)
	if !ok {
		return Pod{}, false
	}
	tmpl := obj
	var base *field.Path
	if len(k.Template) > 0 {
		if tmpl, ok = fields.Map(obj, k.Template...); !ok {
			return Pod{}, false
		}
		base = field.NewPath(k.Template[0], k.Template[1:]...)
	}
	spec, ok := fields.Map(tmpl, "spec")
	if !ok {
		return Pod{}, false
	}
	meta, _ := fields.Map(tmpl, "metadata")
	return Pod{
		MetaPath: child(base, "metadata"),
		Meta:     meta,
		SpecPath: child(base, "spec"),
		Spec:     spec,
	}, true
}

func child(base *field.Path, name string) *field.Path {
	if base == nil {
		return field.NewPath(name)
	}
	return base.Child(name)
}

// ContainerLists are the pod spec fields that hold containers, in the order
// the kubelet starts them.
func ContainerLists() []string { return slices.Clone(containerLists) }

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// Container is one container of a pod spec with its path.
type Container struct {
	Path *field.Path
	Obj  map[string]any
}

// Containers returns every init, regular and ephemeral container of a pod
// spec at specPath. Entries that are not objects are skipped.
func Containers(specPath *field.Path, spec map[string]any) []Container {
	var out []Container
	for _, list := range containerLists {
		items, _ := fields.Slice(spec, list)
		for i, item := range items {
			if c, ok := item.(map[string]any); ok {
				out = append(out, Container{Path: specPath.Child(list).Index(i), Obj: c})
			}
		}
	}
	return out
}
