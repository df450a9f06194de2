package perf

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Dress returns a copy of a fixture object as the API server hands it to
// admission on CREATE, so the corpus has realistic sizes: a uid, a creation
// timestamp and the managedFields entry of the client that applied it, and
// in pod specs the defaults the API server fills in (restart and DNS policy,
// scheduler, tolerations, termination message and pull policy per
// container). Nothing that a policy judges is added: no ServiceAccount, no
// volume, no security context.
func Dress(fixture map[string]any, seq int) (map[string]any, error) {
	obj, err := deepCopy(fixture)
	if err != nil {
		return nil, err
	}
	md := meta0(obj)
	md["uid"] = fmt.Sprintf("0b8c7a4e-%04x-4d3e-9f10-%012x", seq&0xffff, seq)
	md["creationTimestamp"] = "2026-01-01T00:00:00Z"
	gvk := schema.FromAPIVersionAndKind(stringAt(obj, "apiVersion"), stringAt(obj, "kind"))
	if pod, ok := workload.PodOf(gvk.GroupKind(), obj); ok && pod.Spec != nil {
		defaultPodSpec(pod.Spec)
	}
	md["managedFields"] = []any{map[string]any{
		"manager":    "kubectl-client-side-apply",
		"operation":  "Update",
		"apiVersion": stringAt(obj, "apiVersion"),
		"time":       time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
		"fieldsType": "FieldsV1",
		"fieldsV1":   fieldsV1(withoutStatus(obj)),
	}}
	return obj, nil
}

func defaultPodSpec(spec map[string]any) {
	setDefault(spec, "restartPolicy", "Always")
	setDefault(spec, "dnsPolicy", "ClusterFirst")
	setDefault(spec, "schedulerName", "default-scheduler")
	setDefault(spec, "terminationGracePeriodSeconds", float64(30))
	setDefault(spec, "enableServiceLinks", true)
	setDefault(spec, "preemptionPolicy", "PreemptLowerPriority")
	setDefault(spec, "priority", float64(0))
	setDefault(spec, "tolerations", []any{
		map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": float64(300)},
		map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": float64(300)},
	})
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				setDefault(c, "terminationMessagePath", "/dev/termination-log")
				setDefault(c, "terminationMessagePolicy", "File")
				setDefault(c, "imagePullPolicy", "IfNotPresent")
				setDefault(c, "resources", map[string]any{})
			}
		}
	}
}

func setDefault(m map[string]any, key string, value any) {
	if _, ok := m[key]; !ok {
		m[key] = value
	}
}

func withoutStatus(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	if md, ok := out["metadata"].(map[string]any); ok {
		trimmed := map[string]any{}
		for _, k := range []string{"labels", "annotations", "ownerReferences"} {
			if v, ok := md[k]; ok {
				trimmed[k] = v
			}
		}
		out["metadata"] = trimmed
	}
	return out
}

// fieldsV1 renders the server-side-apply field set of v: "f:<key>" per map
// key, "k:{...}" per list item with a name (as for containers), "v:..." per
// scalar list item, and "." for a leaf set.
func fieldsV1(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out["f:"+k] = fieldsV1(v[k])
		}
		if len(v) > 0 {
			out["."] = map[string]any{}
		}
		return out
	case []any:
		out := map[string]any{}
		for i, item := range v {
			switch it := item.(type) {
			case map[string]any:
				key := fmt.Sprintf("k:{\"index\":%d}", i)
				if name, ok := it["name"].(string); ok {
					key = fmt.Sprintf("k:{\"name\":%q}", name)
				}
				out[key] = fieldsV1(it)
			default:
				raw, _ := json.Marshal(it)
				out["v:"+string(raw)] = map[string]any{}
			}
		}
		return out
	default:
		return map[string]any{}
	}
}

func deepCopy(obj map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(raw, &out)
	return out, err
}
