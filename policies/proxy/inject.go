// The mutation and its one denial.
//
// Reads and writes: spec.automountServiceAccountToken, spec.volumes, and
// volumeMounts and env of every init and regular container (see volume.go).
// Allows: any pod, except one declaring a volume named proxy-api-access
// that is not exactly the injected one (ProxyVolumeNameTaken).

package proxy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// ProxyVolumeNameTaken: the pod declares its own volume named
// proxy-api-access, which the injected volume would collide with.
const ProxyVolumeNameTaken policies.Code = "ProxyVolumeNameTaken"

// Inject applies §4 to a harnessed pod (the caller decided it is harnessed),
// in place, and reports whether it changed anything. On its own output it
// reports false and changes nothing. When it returns a denial it has changed
// nothing.
func Inject(pod map[string]any, c Config) (changed bool, findings []policies.Finding) {
	spec, ok := fields.Map(pod, "spec")
	if !ok {
		return false, nil
	}
	rawVolumes, present := spec["volumes"]
	volumes, ok := rawVolumes.([]any)
	if present && rawVolumes != nil && !ok {
		return false, nil
	}
	want := injectedVolume(c)
	haveVolume := false
	for i, item := range volumes {
		v, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if name, _ := fields.String(v, "name"); name != VolumeName {
			continue
		}
		if !haveVolume && jsonEqual(v, want) {
			haveVolume = true
			continue
		}
		findings = append(findings, policies.Denial(ProxyVolumeNameTaken,
			field.NewPath("spec", "volumes").Index(i).Child("name"), VolumeName,
			"volume name %s is reserved for the harness proxy's service account volume; rename this volume", VolumeName))
	}
	if len(findings) > 0 {
		return false, findings
	}

	if v, ok := spec["automountServiceAccountToken"].(bool); !ok || v {
		spec["automountServiceAccountToken"] = false
		changed = true
	}
	for _, list := range rewritten {
		containers, _ := fields.Slice(spec, list)
		for _, item := range containers {
			ctr, ok := item.(map[string]any)
			if !ok {
				continue
			}
			if fixMounts(ctr) {
				changed = true
			}
			if fixEnv(ctr, c) {
				changed = true
			}
		}
	}
	if kept, dropped := dropServiceAccountVolumes(spec, volumes); dropped {
		volumes = kept
		changed = true
	}
	if !haveVolume {
		volumes = append(volumes, want)
		changed = true
	}
	if changed {
		spec["volumes"] = volumes
	}
	return changed, nil
}
