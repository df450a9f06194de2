package overrides

import (
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// Objects shared by the table tests, the golden fixtures, the fuzz target
// and the benchmarks. Every builder returns a fresh object, so a test may
// change it.

// fakeLive knows the live workloads of typical components, keyed
// "component/kind": one per Site for metalman and storage (edge-east and
// edge-west), which differ where Sites do. gantry is missing: its workload
// cannot be read, so its entries exercise OverrideResolutionSkipped.
type fakeLive map[string][]Workload

func (f fakeLive) Workloads(component, kind string) ([]Workload, bool) {
	ws, ok := f[component+"/"+kind]
	return ws, ok
}

func typicalLive() fakeLive {
	storage := func(site string, containers ...string) Workload {
		return Workload{
			Site:           site,
			Kind:           kindDaemonSet,
			SelectorLabels: map[string]string{"app": "storage", "unbounded-cloud.io/site": site},
			Volumes:        []string{"data", "config"},
			Containers:     append([]string{"run"}, containers...),
			InitContainers: []string{"init-perms"},
			Mounts:         map[string]map[string]string{"run": {"/var/lib/storage": "data", "/etc/storage": "config"}},
			Env:            map[string]map[string]EnvSource{"run": {"NODE_NAME": EnvValueFrom, "STORAGE_ROOT": EnvValue}},
			NodeSelector:   map[string]string{"unbounded-cloud.io/site": site},
			// The Site's node affinity: the canonical and the deprecated
			// Site label.
			RequiredNodeTerms: 2,
		}
	}
	metalman := func(site string) Workload {
		return Workload{
			Site:              site,
			Kind:              kindDeployment,
			SelectorLabels:    map[string]string{"app": "metalman", "site": site},
			Volumes:           []string{"tftp"},
			Containers:        []string{"metalman"},
			NodeSelector:      map[string]string{"unbounded-cloud.io/site": site},
			RequiredNodeTerms: 2,
		}
	}
	return fakeLive{
		"net/DaemonSet": {{
			Kind:           kindDaemonSet,
			SelectorLabels: map[string]string{"app": "net-node"},
			Volumes:        []string{"host-run", "cni-conf"},
			Containers:     []string{"node"},
			InitContainers: []string{"install-cni"},
			NodeSelector:   map[string]string{"kubernetes.io/os": "linux"},
		}},
		"net/Deployment": {{
			Kind:           kindDeployment,
			SelectorLabels: map[string]string{"app": "net-controller"},
			Volumes:        []string{"config"},
			Containers:     []string{"controller"},
		}},
		"machina/Deployment": {{
			Kind:           kindDeployment,
			SelectorLabels: map[string]string{"app": "machina-controller"},
			Volumes:        []string{"config"},
			Containers:     []string{"machina-controller"},
		}},
		// Listed out of Site order, as a cache may list them.
		"metalman/Deployment": {metalman("edge-west"), metalman("edge-east")},
		// Only edge-east runs the cache sidecar.
		"storage/DaemonSet": {storage("edge-west"), storage("edge-east", "cache")},
	}
}

// document is an overrides document holding entries.
func document(entries ...map[string]any) map[string]any {
	list := []any{}
	for _, e := range entries {
		list = append(list, e)
	}
	return map[string]any{"apiVersion": APIVersion, "overrides": list}
}

// entryOf is an override of component and kind with a patch (nil for none).
func entryOf(component, kind string, patch map[string]any) map[string]any {
	e := map[string]any{"component": component, "kind": kind}
	if patch != nil {
		e["patch"] = patch
	}
	return e
}

// storageEntry is an override of the storage DaemonSet with patch.
func storageEntry(patch map[string]any) map[string]any {
	return entryOf("storage", kindDaemonSet, patch)
}

// templateSpec is a patch of the pod template spec.
func templateSpec(fields map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": fields}}}
}

// templateMetadata is a patch of the pod template metadata.
func templateMetadata(fields map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": fields}}}
}

// workloadSpec is a patch of the workload spec.
func workloadSpec(fields map[string]any) map[string]any {
	return map[string]any{"spec": fields}
}

// containerPatch is a patch of container name (in list, containers or
// initContainers) setting fields.
func containerPatch(list, name string, fields map[string]any) map[string]any {
	c := map[string]any{"name": name}
	for k, v := range fields {
		c[k] = v
	}
	return templateSpec(map[string]any{list: []any{c}})
}

// runPatch sets fields of the storage DaemonSet's run container.
func runPatch(fields map[string]any) map[string]any {
	return containerPatch("containers", "run", fields)
}

// resourcesPatch is the everyday override: a memory limit on run.
func resourcesPatch() map[string]any {
	return runPatch(map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}}})
}

// validDocument is a document with one valid override of every component.
func validDocument() map[string]any {
	return document(
		storageEntry(resourcesPatch()),
		entryOf("net", kindDaemonSet, templateSpec(map[string]any{
			"tolerations": []any{map[string]any{"operator": "Exists"}},
		})),
		entryOf("machina", kindDeployment, workloadSpec(map[string]any{"replicas": 2})),
		withField(entryOf("metalman", kindDeployment, nil), "extraArgs", map[string]any{
			"metalman": []any{"--verbose"},
		}),
		withField(entryOf("metalman", kindDeployment, templateMetadata(map[string]any{
			"annotations": map[string]any{"example.com/owner": "platform"},
		})), "sites", []any{"edge-west"}),
	)
}

// withField sets one field of an entry (or document) and returns it.
func withField(obj map[string]any, key string, value any) map[string]any {
	obj[key] = value
	return obj
}

// render writes a document as the YAML a data key holds.
func render(doc map[string]any) string {
	data, err := yaml.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// configMap is the overrides ConfigMap holding data.
func configMap(data map[string]string) map[string]any {
	values := map[string]any{}
	for k, v := range data {
		values[k] = v
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "unbounded-component-overrides", "namespace": "unbounded-system"},
		"data":       values,
	}
}

// The table tests compare golden.Result: severity, code and field, no prose.
type result = golden.Result

var (
	deny    = golden.Deny
	warn    = golden.Warn
	results = golden.Results
)

// anyTable is the default component table, which every fixture is checked
// against.
var anyTable = MustPreset(PresetAny)
