// User namespaces: where runAsNonRoot is neither defaulted nor required.
//
// Reads: spec.hostUsers; runAsUser of the pod's securityContext and of each
// init, regular and ephemeral container's securityContext.
// Allows: in a pod with spec.hostUsers: false (its own user namespace, where
// uid 0 is unprivileged on the host and Pod Security Admission's restricted
// level admits it), a container whose effective runAsUser (its own, else the
// pod's) is an explicit 0 keeps whatever runAsNonRoot it states, unset
// included; so does the pod level when any container's is, since that
// container would inherit the pod's value. Every other field of the defaults
// table is still defaulted and required.

package podsecurity

import (
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// rootInUserNamespace says, for one pod spec, where runAsNonRoot is left
// alone: at the pod level (pod) and in which containers (container).
type rootInUserNamespace struct {
	userNamespace bool
	podUserIsRoot bool
	pod           bool
}

// rootInUserNamespaceOf reads spec as it is; the defaults never change a
// stated runAsUser, so the answer is the same before and after DefaultPod.
func rootInUserNamespaceOf(spec map[string]any) rootInUserNamespace {
	hostUsers, stated := spec["hostUsers"].(bool)
	r := rootInUserNamespace{userNamespace: stated && !hostUsers}
	if !r.userNamespace {
		return r
	}
	podSC, _ := fields.Map(spec, "securityContext")
	user, ok := numberOf(podSC["runAsUser"])
	r.podUserIsRoot = ok && user == 0
	for _, list := range workload.ContainerLists() {
		items, _ := fields.Slice(spec, list)
		for _, item := range items {
			if c, ok := item.(map[string]any); ok && r.container(c) {
				r.pod = true
				return r
			}
		}
	}
	return r
}

// container reports whether runAsNonRoot is left alone in container c.
func (r rootInUserNamespace) container(c map[string]any) bool {
	if !r.userNamespace {
		return false
	}
	sc, _ := fields.Map(c, "securityContext")
	if user, ok := numberOf(sc["runAsUser"]); ok {
		return user == 0
	}
	return r.podUserIsRoot
}
