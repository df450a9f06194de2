// The defaulting: a per-field deep merge of the defaults table into a Pod.
//
// Reads and writes: spec.securityContext.{runAsUser, runAsGroup, fsGroup,
// fsGroupChangePolicy, runAsNonRoot, seccompProfile.type}; in every entry of
// spec.initContainers, spec.containers and spec.ephemeralContainers,
// securityContext.{runAsNonRoot, seccompProfile.type,
// allowPrivilegeEscalation, capabilities.drop}. Reads spec.os.name, and
// securityContext.privileged and capabilities.add of each container.
// Allows: anything. A stated field is kept; an unset one is filled in; a
// securityContext, seccompProfile or capabilities that is not an object is
// left alone (see doc.go).

package podsecurity

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// capSysAdmin is the one capability name next to which the API server
// rejects allowPrivilegeEscalation: false (it compares the exact string).
const capSysAdmin = "CAP_SYS_ADMIN"

// DefaultPod applies the defaults to a Pod object (obj is the whole Pod), in
// place: the pod-level spec.securityContext fields runAsUser, runAsGroup,
// fsGroup, fsGroupChangePolicy, runAsNonRoot and seccompProfile.type, then in
// every init, regular and ephemeral container securityContext.runAsNonRoot,
// seccompProfile.type, allowPrivilegeEscalation and capabilities.drop. It
// reports whether anything changed; on its own output it reports false and
// changes nothing.
func DefaultPod(obj map[string]any, d Defaults) bool {
	spec, ok := fields.Map(obj, "spec")
	if !ok {
		return false
	}
	linux := !isWindows(spec)
	root := rootInUserNamespaceOf(spec)
	changed := defaultPodSecurityContext(spec, d, linux, root.pod)
	inherit := inheritedFrom(spec, d)
	for _, list := range workload.ContainerLists {
		items, _ := fields.Slice(spec, list)
		for _, item := range items {
			if c, ok := item.(map[string]any); ok && defaultContainer(c, inherit, d, linux, root.container(c)) {
				changed = true
			}
		}
	}
	return changed
}

// DefaultNewEphemeralContainers is for pods/ephemeralcontainers UPDATE: it
// defaults, in place, the securityContext of only those ephemeral containers
// in obj whose name does not appear among oldObj's ephemeral containers
// (existing ones are immutable). The pod level is read, to inherit from, but
// never changed (it is immutable on that subresource). It reports whether
// anything changed.
func DefaultNewEphemeralContainers(obj, oldObj map[string]any, d Defaults) bool {
	spec, ok := fields.Map(obj, "spec")
	if !ok {
		return false
	}
	linux := !isWindows(spec)
	root := rootInUserNamespaceOf(spec)
	inherit := inheritedFrom(spec, d)
	changed := false
	for _, c := range newEphemeralContainers(field.NewPath("spec"), spec, oldObj) {
		if defaultContainer(c.Obj, inherit, d, linux, root.container(c.Obj)) {
			changed = true
		}
	}
	return changed
}

// defaultPodSecurityContext fills in spec.securityContext; runAsNonRoot
// only unless keepRunAsNonRoot (usernamespace.go).
func defaultPodSecurityContext(spec map[string]any, d Defaults, linux, keepRunAsNonRoot bool) bool {
	sc, changed, ok := objectField(spec, "securityContext")
	if !ok {
		return false
	}
	if linux {
		changed = setDefault(sc, "runAsUser", d.RunAsUser) || changed
		changed = setDefault(sc, "runAsGroup", d.RunAsGroup) || changed
		changed = setDefault(sc, "fsGroup", d.FSGroup) || changed
		changed = setDefault(sc, "fsGroupChangePolicy", d.FSGroupChangePolicy) || changed
	}
	if !keepRunAsNonRoot {
		changed = setDefault(sc, "runAsNonRoot", d.RunAsNonRoot) || changed
	}
	if linux {
		if !stated(sc, "seccompProfile") {
			sc["seccompProfile"] = map[string]any{"type": d.SeccompProfileType}
			changed = true
		} else {
			changed = defaultSeccompType(sc["seccompProfile"], d) || changed
		}
	}
	return changed
}

// inherited is what a container that states nothing gets from the pod
// level: the pod's effective runAsNonRoot and seccompProfile.
type inherited struct {
	runAsNonRoot bool
	// seccompProfile is the pod's profile when it states a type; nil means
	// the configured type.
	seccompProfile map[string]any
}

// inheritedFrom reads what containers inherit from the (already defaulted)
// pod level of spec. Where the pod level states nothing usable, the
// configured default applies.
func inheritedFrom(spec map[string]any, d Defaults) inherited {
	in := inherited{runAsNonRoot: d.RunAsNonRoot}
	sc, ok := fields.Map(spec, "securityContext")
	if !ok {
		return in
	}
	if v, ok := sc["runAsNonRoot"].(bool); ok {
		in.runAsNonRoot = v
	}
	if profile, ok := sc["seccompProfile"].(map[string]any); ok && seccompTypeStated(profile) {
		in.seccompProfile = profile
	}
	return in
}

// seccompProfileFor returns a fresh seccompProfile for one container: a copy
// of the pod's, or one of the configured type.
func (in inherited) seccompProfileFor(d Defaults) map[string]any {
	if in.seccompProfile != nil {
		return copyJSON(in.seccompProfile).(map[string]any)
	}
	return map[string]any{"type": d.SeccompProfileType}
}

// defaultContainer fills in one container's securityContext; runAsNonRoot
// only unless keepRunAsNonRoot (usernamespace.go).
func defaultContainer(c map[string]any, inherit inherited, d Defaults, linux, keepRunAsNonRoot bool) bool {
	sc, changed, ok := objectField(c, "securityContext")
	if !ok {
		return false
	}
	if !keepRunAsNonRoot {
		changed = setDefault(sc, "runAsNonRoot", inherit.runAsNonRoot) || changed
	}
	if !linux {
		return changed
	}
	if !stated(sc, "seccompProfile") {
		sc["seccompProfile"] = inherit.seccompProfileFor(d)
		changed = true
	} else {
		changed = defaultSeccompType(sc["seccompProfile"], d) || changed
	}
	allowEscalation := d.AllowPrivilegeEscalation
	if mustAllowEscalation(sc) {
		allowEscalation = true
	}
	changed = setDefault(sc, "allowPrivilegeEscalation", allowEscalation) || changed
	if caps, created, ok := objectField(sc, "capabilities"); ok {
		changed = created || changed
		if !stated(caps, "drop") {
			caps["drop"] = dropList(d)
			changed = true
		}
	}
	return changed
}

// defaultSeccompType sets the type of a stated seccompProfile object that
// lacks one to the configured type. A seccompProfile that is not an object is
// left alone.
func defaultSeccompType(v any, d Defaults) bool {
	profile, ok := v.(map[string]any)
	if !ok || seccompTypeStated(profile) {
		return false
	}
	if s, _ := profile["type"].(string); stated(profile, "type") && s == d.SeccompProfileType {
		// Only an unusable configuration (an empty type) gets here; writing
		// the same value again is no change.
		return false
	}
	profile["type"] = d.SeccompProfileType
	return true
}

// mustAllowEscalation reports whether the API server would reject
// allowPrivilegeEscalation: false in sc: the container is privileged or adds
// CAP_SYS_ADMIN.
func mustAllowEscalation(sc map[string]any) bool {
	if privileged, _ := sc["privileged"].(bool); privileged {
		return true
	}
	add, _ := fields.Slice(sc, "capabilities", "add")
	for _, c := range add {
		if s, _ := c.(string); s == capSysAdmin {
			return true
		}
	}
	return false
}

// dropList returns a fresh list of the capabilities to drop, shaped as
// decoded JSON. It is never nil, so that an empty configuration still writes
// a stated (empty) list.
func dropList(d Defaults) []any {
	out := make([]any, len(d.CapabilitiesDrop))
	for i, c := range d.CapabilitiesDrop {
		out[i] = c
	}
	return out
}
