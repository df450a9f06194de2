package webhooks

import (
	"context"
	"sort"

	"github.com/gatehouse-dev/gatehouse/policies/overrides"
)

// WorkloadReader lists the live workloads (apps/v1 Deployments or DaemonSets,
// as decoded JSON objects) of a namespace that carry the given labels. The
// server reads them from an informer cache; `gatehouse check` from --state.
type WorkloadReader interface {
	ListWorkloads(ctx context.Context, namespace, kind string, labels map[string]string) ([]map[string]any, error)
}

// liveWorkloads answers overrides.Live for one review from the workloads of
// the operator namespace that carry the component label.
type liveWorkloads struct {
	ctx  context.Context
	opts Options
}

// Workload merges the workloads of a component and kind: a per-Site
// component has one per Site. A volume any of them declares is the
// operator's; a container must exist in all of them to be patched; every
// selector label counts. No workload, an error or a timeout is "cannot
// read", which the policy turns into a warning.
func (l *liveWorkloads) Workload(component, kind string) (overrides.Workload, bool) {
	ctx, cancel := context.WithTimeout(l.ctx, liveLookupTimeout)
	defer cancel()
	objs, err := l.opts.Workloads.ListWorkloads(ctx, l.opts.Overrides.Namespace, kind,
		map[string]string{l.opts.Overrides.ComponentLabel: component})
	if err != nil || len(objs) == 0 {
		return overrides.Workload{}, false
	}
	merged := overrides.Workload{Kind: kind, SelectorLabels: map[string]string{}}
	volumes := map[string]bool{}
	containerCount := map[string]int{}
	for _, obj := range objs {
		spec, _ := obj["spec"].(map[string]any)
		selector, _ := spec["selector"].(map[string]any)
		if labels, ok := selector["matchLabels"].(map[string]any); ok {
			for k, v := range labels {
				if s, ok := v.(string); ok {
					merged.SelectorLabels[k] = s
				}
			}
		}
		template, _ := spec["template"].(map[string]any)
		podSpec, _ := template["spec"].(map[string]any)
		for _, name := range namesIn(podSpec, "volumes") {
			volumes[name] = true
		}
		seen := map[string]bool{}
		for _, list := range []string{"initContainers", "containers"} {
			for _, name := range namesIn(podSpec, list) {
				if !seen[name] {
					seen[name] = true
					containerCount[name]++
				}
			}
		}
	}
	for name := range volumes {
		merged.Volumes = append(merged.Volumes, name)
	}
	for name, n := range containerCount {
		if n == len(objs) {
			merged.Containers = append(merged.Containers, name)
		}
	}
	sort.Strings(merged.Volumes)
	sort.Strings(merged.Containers)
	return merged, true
}

// namesIn returns the name of every object in the list at key.
func namesIn(m map[string]any, key string) []string {
	items, _ := m[key].([]any)
	var out []string
	for _, item := range items {
		if obj, ok := item.(map[string]any); ok {
			if name, ok := obj["name"].(string); ok && name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}
