// The injected volume, mount and env, and the kube-api-access cleanup.
//
// Reads and writes: spec.volumes; in every entry of spec.initContainers and
// spec.containers, volumeMounts and env. Reads volumeMounts[].name and
// volumeDevices[].name of every container, including ephemeral ones.
// Allows: anything; lists that are not lists and entries that are not
// objects are left alone (see doc.go).

package proxy

import (
	"path"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

const (
	// VolumeName is the projected volume Inject adds.
	VolumeName = "proxy-api-access"
	// MountPath is where Kubernetes clients look for the service account
	// token, CA and namespace.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// EnvHost and EnvPort are the variables client-go reads to find the API
	// server.
	EnvHost = "KUBERNETES_SERVICE_HOST"
	EnvPort = "KUBERNETES_SERVICE_PORT"

	// saVolumePrefix names the volume the ServiceAccount admission plugin
	// adds (upstream: kube-api-access-<5 random chars>).
	saVolumePrefix = "kube-api-access-"
)

// rewritten are the container lists Inject rewrites (§4: init and regular).
var rewritten = []string{"initContainers", "containers"}

// injectedVolume is the volume Inject adds, built fresh for each use.
func injectedVolume(c Config) map[string]any {
	return map[string]any{
		"name": VolumeName,
		"projected": map[string]any{
			"defaultMode": int64(420),
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": int64(3607)}},
				map[string]any{"configMap": map[string]any{
					"name":  c.CAConfigMap,
					"items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}},
				}},
				map[string]any{"downwardAPI": map[string]any{
					"items": []any{map[string]any{
						"path":     "namespace",
						"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"},
					}},
				}},
			},
		},
	}
}

func injectedMount() map[string]any {
	return map[string]any{"name": VolumeName, "mountPath": MountPath, "readOnly": true}
}

func atMountPath(m map[string]any) bool {
	p, ok := fields.String(m, "mountPath")
	return ok && path.Clean(p) == MountPath
}

// fixMounts leaves exactly one injected mount at MountPath in container c.
func fixMounts(c map[string]any) bool {
	raw, present := c["volumeMounts"]
	items, ok := raw.([]any)
	if present && raw != nil && !ok {
		return false
	}
	want := injectedMount()
	out := make([]any, 0, len(items)+1)
	kept, changed := false, false
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok || !atMountPath(m) {
			out = append(out, item)
			continue
		}
		if !kept && jsonEqual(m, want) {
			kept = true
			out = append(out, item)
			continue
		}
		changed = true
	}
	if !kept {
		out = append(out, want)
		changed = true
	}
	if changed {
		c["volumeMounts"] = out
	}
	return changed
}

// fixEnv sets EnvHost and EnvPort in container c.
func fixEnv(c map[string]any, cfg Config) bool {
	raw, present := c["env"]
	items, ok := raw.([]any)
	if present && raw != nil && !ok {
		return false
	}
	want := []map[string]any{
		{"name": EnvHost, "value": cfg.Host},
		{"name": EnvPort, "value": strconv.Itoa(int(cfg.Port))},
	}
	seen := make([]bool, len(want))
	out := make([]any, 0, len(items)+len(want))
	changed := false
	for _, item := range items {
		e, ok := item.(map[string]any)
		if !ok {
			out = append(out, item)
			continue
		}
		name, _ := fields.String(e, "name")
		i := envIndex(want, name)
		switch {
		case i < 0:
			out = append(out, item)
		case seen[i]:
			changed = true // a later duplicate
		default:
			seen[i] = true
			if jsonEqual(e, want[i]) {
				out = append(out, item)
			} else {
				out = append(out, want[i])
				changed = true
			}
		}
	}
	for i, w := range want {
		if !seen[i] {
			out = append(out, w)
			changed = true
		}
	}
	if changed {
		c["env"] = out
	}
	return changed
}

func envIndex(want []map[string]any, name string) int {
	for i, w := range want {
		if w["name"] == name {
			return i
		}
	}
	return -1
}

// usedVolumes returns the names mounted or attached by any container.
func usedVolumes(spec map[string]any) map[string]bool {
	used := map[string]bool{}
	for _, list := range workload.ContainerLists() {
		containers, _ := fields.Slice(spec, list)
		for _, item := range containers {
			c, ok := item.(map[string]any)
			if !ok {
				continue
			}
			for _, key := range []string{"volumeMounts", "volumeDevices"} {
				refs, _ := fields.Slice(c, key)
				for _, r := range refs {
					if m, ok := r.(map[string]any); ok {
						if n, ok := fields.String(m, "name"); ok {
							used[n] = true
						}
					}
				}
			}
		}
	}
	return used
}

// dropServiceAccountVolumes removes kube-api-access-* projected volumes that
// no container uses any more.
func dropServiceAccountVolumes(spec map[string]any, volumes []any) ([]any, bool) {
	used := usedVolumes(spec)
	out := make([]any, 0, len(volumes))
	changed := false
	for _, item := range volumes {
		v, ok := item.(map[string]any)
		if ok {
			name, _ := fields.String(v, "name")
			_, projected := fields.Map(v, "projected")
			if strings.HasPrefix(name, saVolumePrefix) && projected && !used[name] {
				changed = true
				continue
			}
		}
		out = append(out, item)
	}
	return out, changed
}
