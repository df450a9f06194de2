package podsecurity

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Objects shared by the table tests, the golden fixtures, the fuzz target
// and the benchmarks. Every builder returns a fresh object, so a test may
// change it.

var (
	gkPod         = schema.GroupKind{Kind: "Pod"}
	gkDeployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkCronJob     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
)

func container(name string) map[string]any {
	return map[string]any{"name": name, "image": "registry.example/" + name + ":1.0"}
}

func podSpec() map[string]any {
	return map[string]any{"containers": []any{container("app")}}
}

// basePod is the minimal Pod the API server would send: one container, no
// securityContext anywhere.
func basePod() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "web-0", "labels": map[string]any{"app": "web"}},
		"spec":       podSpec(),
	}
}

func podTemplate() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     podSpec(),
	}
}

func deployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": podTemplate(),
		},
	}
}

func cronJob() map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "CronJob",
		"metadata":   map[string]any{"name": "report"},
		"spec": map[string]any{
			"schedule":    "0 3 * * *",
			"jobTemplate": map[string]any{"spec": map[string]any{"template": podTemplate()}},
		},
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

// podSC returns the pod-level securityContext of a Pod, creating it.
func podSC(obj map[string]any) map[string]any { return getMap(obj, "spec", "securityContext") }

// containerAt returns container i of list in a Pod's spec.
func containerAt(obj map[string]any, list string, i int) map[string]any {
	return getMap(obj, "spec")[list].([]any)[i].(map[string]any)
}

// containerSC returns the securityContext of container i of list, creating it.
func containerSC(obj map[string]any, list string, i int) map[string]any {
	return getMap(containerAt(obj, list, i), "securityContext")
}

// addContainer appends a container named name to list in a Pod's spec.
func addContainer(obj map[string]any, list, name string) map[string]any {
	spec := getMap(obj, "spec")
	items, _ := spec[list].([]any)
	c := container(name)
	spec[list] = append(items, c)
	return c
}

// templateSpec returns the pod template spec of a workload of kind gk.
func templateSpec(gk schema.GroupKind, obj map[string]any) map[string]any {
	p, ok := workload.PodOf(gk, obj)
	if !ok {
		panic("no pod spec in " + gk.String())
	}
	return p.Spec
}

// defaultedPodSC is the pod-level securityContext that BuiltinDefaults fills
// into a pod that states nothing.
func defaultedPodSC() map[string]any {
	return map[string]any{
		"runAsUser":           int64(1001),
		"runAsGroup":          int64(0),
		"fsGroup":             int64(1001),
		"fsGroupChangePolicy": "OnRootMismatch",
		"runAsNonRoot":        true,
		"seccompProfile":      map[string]any{"type": "RuntimeDefault"},
	}
}

// defaultedContainerSC is the container securityContext that
// BuiltinDefaults fills into a container of a pod that states nothing.
func defaultedContainerSC() map[string]any {
	return map[string]any{
		"runAsNonRoot":             true,
		"seccompProfile":           map[string]any{"type": "RuntimeDefault"},
		"allowPrivilegeEscalation": false,
		"capabilities":             map[string]any{"drop": []any{"ALL"}},
	}
}

// defaultedPod is basePod with every default filled in, as written by hand:
// the final state a pod reaches when the mutating webhook ran.
func defaultedPod() map[string]any {
	obj := basePod()
	getMap(obj, "spec")["securityContext"] = defaultedPodSC()
	containerAt(obj, "containers", 0)["securityContext"] = defaultedContainerSC()
	return obj
}

// Fixture helpers shared with the other policies' tests.
var (
	readBack = golden.ReadBack
	toYAML   = golden.ToYAML
)

// clone deep-copies a decoded object keeping Go number types (the defaults
// are int64), unlike a JSON round trip, so DeepEqual compares like with like.
func clone(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	return copyJSON(obj).(map[string]any)
}
