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
	"maps"
	"slices"

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
// changes nothing. It is Defaulted with the result written back into obj.
func DefaultPod(obj map[string]any, d Defaults) bool {
	out, changed := Defaulted(obj, d)
	if changed {
		maps.Copy(obj, out)
	}
	return changed
}

// Defaulted is DefaultPod without changing obj: it returns the defaulted
// Pod and whether it differs from obj. The result shares with obj every
// object and list on which nothing was defaulted, and holds new copies of
// those on the way to a change (copy on write), so whoever compares the two
// can skip every part that is the same object in both.
func Defaulted(obj map[string]any, d Defaults) (map[string]any, bool) {
	specObj, ok := fields.Map(obj, "spec")
	if !ok {
		return obj, false
	}
	spec := cow{m: specObj}
	linux := !isWindows(specObj)
	root := rootInUserNamespaceOf(specObj)
	defaultPodSecurityContext(&spec, d, linux, root.pod)
	inherit := inheritedFrom(spec.m, d)
	for _, list := range workload.ContainerLists() {
		items, _ := fields.Slice(spec.m, list)
		var changed []any
		for i, item := range items {
			c, ok := item.(map[string]any)
			if !ok {
				continue
			}
			container := cow{m: c}
			if defaultContainer(&container, inherit, d, linux, root.container(c)) {
				if changed == nil {
					changed = slices.Clone(items)
				}
				changed[i] = container.m
			}
		}
		if changed != nil {
			spec.set(list, changed)
		}
	}
	return withSpec(obj, spec)
}

// DefaultNewEphemeralContainers is for pods/ephemeralcontainers UPDATE: it
// defaults, in place, the securityContext of only those ephemeral containers
// in obj whose name does not appear among oldObj's ephemeral containers
// (existing ones are immutable). The pod level is read, to inherit from, but
// never changed (it is immutable on that subresource). It reports whether
// anything changed. It is DefaultedNewEphemeralContainers with the result
// written back into obj.
func DefaultNewEphemeralContainers(obj, oldObj map[string]any, d Defaults) bool {
	out, changed := DefaultedNewEphemeralContainers(obj, oldObj, d)
	if changed {
		maps.Copy(obj, out)
	}
	return changed
}

// DefaultedNewEphemeralContainers is DefaultNewEphemeralContainers without
// changing obj, copying on write as Defaulted does.
func DefaultedNewEphemeralContainers(obj, oldObj map[string]any, d Defaults) (map[string]any, bool) {
	specObj, ok := fields.Map(obj, "spec")
	if !ok {
		return obj, false
	}
	spec := cow{m: specObj}
	linux := !isWindows(specObj)
	root := rootInUserNamespaceOf(specObj)
	inherit := inheritedFrom(specObj, d)
	old := ephemeralContainerNames(oldObj)
	items, _ := fields.Slice(specObj, "ephemeralContainers")
	var changed []any
	for i, item := range items {
		c, ok := item.(map[string]any)
		if !ok || !isNewEphemeralContainer(c, old) {
			continue
		}
		container := cow{m: c}
		if defaultContainer(&container, inherit, d, linux, root.container(c)) {
			if changed == nil {
				changed = slices.Clone(items)
			}
			changed[i] = container.m
		}
	}
	if changed != nil {
		spec.set("ephemeralContainers", changed)
	}
	return withSpec(obj, spec)
}

// withSpec is obj with spec in place of its spec when spec was written, and
// whether it was.
func withSpec(obj map[string]any, spec cow) (map[string]any, bool) {
	if !spec.copied {
		return obj, false
	}
	out := maps.Clone(obj)
	out["spec"] = spec.m
	return out, true
}

// defaultPodSecurityContext fills in spec.securityContext; runAsNonRoot
// only unless keepRunAsNonRoot (usernamespace.go).
func defaultPodSecurityContext(spec *cow, d Defaults, linux, keepRunAsNonRoot bool) bool {
	sc, ok := objectField(spec, "securityContext")
	if !ok {
		return false
	}
	if linux {
		setDefault(&sc, "runAsUser", d.RunAsUser)
		setDefault(&sc, "runAsGroup", d.RunAsGroup)
		setDefault(&sc, "fsGroup", d.FSGroup)
		setDefault(&sc, "fsGroupChangePolicy", d.FSGroupChangePolicy)
	}
	if !keepRunAsNonRoot {
		setDefault(&sc, "runAsNonRoot", d.RunAsNonRoot)
	}
	if linux {
		if !stated(sc.m, "seccompProfile") {
			sc.set("seccompProfile", map[string]any{"type": d.SeccompProfileType})
		} else {
			defaultSeccompType(&sc, d)
		}
	}
	return setObjectField(spec, "securityContext", sc)
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
func defaultContainer(c *cow, inherit inherited, d Defaults, linux, keepRunAsNonRoot bool) bool {
	sc, ok := objectField(c, "securityContext")
	if !ok {
		return false
	}
	if !keepRunAsNonRoot {
		setDefault(&sc, "runAsNonRoot", inherit.runAsNonRoot)
	}
	if linux {
		if !stated(sc.m, "seccompProfile") {
			sc.set("seccompProfile", inherit.seccompProfileFor(d))
		} else {
			defaultSeccompType(&sc, d)
		}
		allowEscalation := d.AllowPrivilegeEscalation
		if mustAllowEscalation(sc.m) {
			allowEscalation = true
		}
		setDefault(&sc, "allowPrivilegeEscalation", allowEscalation)
		if caps, ok := objectField(&sc, "capabilities"); ok {
			if !stated(caps.m, "drop") {
				caps.set("drop", dropList(d))
			}
			setObjectField(&sc, "capabilities", caps)
		}
	}
	return setObjectField(c, "securityContext", sc)
}

// defaultSeccompType sets the type of the stated seccompProfile of sc when
// it is an object that lacks one, to the configured type. A seccompProfile
// that is not an object is left alone.
func defaultSeccompType(sc *cow, d Defaults) {
	profile, ok := sc.m["seccompProfile"].(map[string]any)
	if !ok || seccompTypeStated(profile) {
		return
	}
	if s, _ := profile["type"].(string); stated(profile, "type") && s == d.SeccompProfileType {
		// Only an unusable configuration (an empty type) gets here; writing
		// the same value again is no change.
		return
	}
	withType := maps.Clone(profile)
	withType["type"] = d.SeccompProfileType
	sc.set("seccompProfile", withType)
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
