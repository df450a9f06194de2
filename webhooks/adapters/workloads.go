package adapters

import (
	"context"
	"slices"
	"sort"

	"github.com/gatehouse-dev/gatehouse/policies/overrides"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// liveWorkloads answers overrides.Live for one review from the workloads of
// the operator namespace that carry the component label.
type liveWorkloads struct {
	ctx   context.Context
	opts  route.Options
	table *overrides.Table
}

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
	siteLabels := l.table.SiteLabels(component)
	out := make([]overrides.Workload, 0, len(objs))
	for _, obj := range objs {
		out = append(out, workloadOf(obj, kind, siteLabels))
	}
	return out, true
}

// workloadOf reads what resolution needs of one workload. Its Site is the
// value of the first of siteLabels it carries, on itself or else on its pod
// template (the component table says which labels its operator stamps).
func workloadOf(obj map[string]any, kind string, siteLabels []string) overrides.Workload {
	w := overrides.Workload{Kind: kind, SelectorLabels: map[string]string{}, NodeSelector: map[string]string{},
		Mounts: map[string]map[string]string{}, Env: map[string]map[string]overrides.EnvSource{}}
	metadata, _ := obj["metadata"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	templateMetadata, _ := template["metadata"].(map[string]any)
	w.Site = siteOf(siteLabels, metadata, templateMetadata)
	selector, _ := spec["selector"].(map[string]any)
	stringsInto(w.SelectorLabels, selector["matchLabels"])
	podSpec, _ := template["spec"].(map[string]any)
	stringsInto(w.NodeSelector, podSpec["nodeSelector"])
	w.Volumes = namesIn(podSpec, "volumes")
	w.InitContainers = containersInto(&w, podSpec["initContainers"])
	w.Containers = containersInto(&w, podSpec["containers"])
	affinity, _ := podSpec["affinity"].(map[string]any)
	nodeAffinity, _ := affinity["nodeAffinity"].(map[string]any)
	required, _ := nodeAffinity["requiredDuringSchedulingIgnoredDuringExecution"].(map[string]any)
	terms, _ := required["nodeSelectorTerms"].([]any)
	w.RequiredNodeTerms = len(terms)
	sort.Strings(w.Volumes)
	return w
}

// siteOf is the value of the first of keys that the labels of one of
// metadatas carry, the workload's own before its pod template's.
func siteOf(keys []string, metadatas ...map[string]any) string {
	for _, key := range keys {
		for _, metadata := range metadatas {
			labels, _ := metadata["labels"].(map[string]any)
			if site, ok := labels[key].(string); ok && site != "" {
				return site
			}
		}
	}
	return ""
}

// containersInto records the mounts and env of the containers of one list
// (containers or initContainers) in w and returns their names, sorted.
func containersInto(w *overrides.Workload, list any) []string {
	items, _ := list.([]any)
	var names []string
	for _, item := range items {
		c, _ := item.(map[string]any)
		name, _ := c["name"].(string)
		if name == "" || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
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
		env, _ := c["env"].([]any)
		for _, e := range env {
			v, _ := e.(map[string]any)
			envName, _ := v["name"].(string)
			if envName == "" {
				continue
			}
			var source overrides.EnvSource
			if value, _ := v["value"].(string); value != "" {
				source |= overrides.EnvValue
			}
			if v["valueFrom"] != nil {
				source |= overrides.EnvValueFrom
			}
			if source == 0 {
				continue
			}
			if w.Env[name] == nil {
				w.Env[name] = map[string]overrides.EnvSource{}
			}
			w.Env[name][envName] = source
		}
	}
	sort.Strings(names)
	return names
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
