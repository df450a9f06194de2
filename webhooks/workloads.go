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

// siteLabel names the Site a per-Site workload belongs to (upstream).
const siteLabel = "unbounded-cloud.io/site"

// Workloads answers each workload of a component and kind on its own: a
// per-Site component has one per Site, and resolution checks an override
// against each of them, never against a merge (a merge let the last
// workload listed win on selector labels, so the verdict followed list
// order). No workload, an error or a timeout is "cannot read", which the
// policy turns into a warning.
func (l *liveWorkloads) Workloads(component, kind string) ([]overrides.Workload, bool) {
	ctx, cancel := context.WithTimeout(l.ctx, liveLookupTimeout)
	defer cancel()
	objs, err := l.opts.Workloads.ListWorkloads(ctx, l.opts.Overrides.Namespace, kind,
		map[string]string{l.opts.Overrides.ComponentLabel: component})
	if err != nil || len(objs) == 0 {
		return nil, false
	}
	out := make([]overrides.Workload, 0, len(objs))
	for _, obj := range objs {
		out = append(out, workloadOf(obj, kind))
	}
	return out, true
}

// workloadOf reads what resolution needs of one workload.
func workloadOf(obj map[string]any, kind string) overrides.Workload {
	w := overrides.Workload{Kind: kind, SelectorLabels: map[string]string{}, NodeSelector: map[string]string{},
		Mounts: map[string]map[string]string{}}
	metadata, _ := obj["metadata"].(map[string]any)
	if labels, ok := metadata["labels"].(map[string]any); ok {
		w.Site, _ = labels[siteLabel].(string)
	}
	spec, _ := obj["spec"].(map[string]any)
	selector, _ := spec["selector"].(map[string]any)
	stringsInto(w.SelectorLabels, selector["matchLabels"])
	template, _ := spec["template"].(map[string]any)
	podSpec, _ := template["spec"].(map[string]any)
	stringsInto(w.NodeSelector, podSpec["nodeSelector"])
	w.Volumes = namesIn(podSpec, "volumes")
	seen := map[string]bool{}
	for _, list := range []string{"initContainers", "containers"} {
		items, _ := podSpec[list].([]any)
		for _, item := range items {
			c, _ := item.(map[string]any)
			name, _ := c["name"].(string)
			if name == "" {
				continue
			}
			if !seen[name] {
				seen[name] = true
				w.Containers = append(w.Containers, name)
			}
			mounts, _ := c["volumeMounts"].([]any)
			for _, m := range mounts {
				mount, _ := m.(map[string]any)
				path, _ := mount["mountPath"].(string)
				volume, _ := mount["name"].(string)
				if path == "" {
					continue
				}
				if w.Mounts[name] == nil {
					w.Mounts[name] = map[string]string{}
				}
				w.Mounts[name][path] = volume
			}
		}
	}
	affinity, _ := podSpec["affinity"].(map[string]any)
	nodeAffinity, _ := affinity["nodeAffinity"].(map[string]any)
	required, _ := nodeAffinity["requiredDuringSchedulingIgnoredDuringExecution"].(map[string]any)
	terms, _ := required["nodeSelectorTerms"].([]any)
	w.RequiredNodeTerms = len(terms)
	sort.Strings(w.Volumes)
	sort.Strings(w.Containers)
	return w
}

// stringsInto copies the string values of the map v into into.
func stringsInto(into map[string]string, v any) {
	m, _ := v.(map[string]any)
	for k, value := range m {
		if s, ok := value.(string); ok {
			into[k] = s
		}
	}
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
