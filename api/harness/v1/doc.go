// Package v1 contains the OperatorHarness API (vshn.net/v1), the permission
// harness that confines an operator to the namespaces of its scope. gatehouse
// does not reconcile harnesses; it ships the CRD (deploy/crds) and reviews the
// objects at admission (docs/contracts.md §4 PROXY, §5 LABEL, §8 HARNESS).
//
// # Shapes
//
// The shapes follow the design's keys and dashes literally: spec.roles and spec.clusterRoles are objects holding
// "rules" (no dash before "rules"), spec.roleBindings is an object holding
// "roleRefs", and spec.clusterRoleBindings is a list (written "[]" when empty),
// here a list of role references bound cluster-wide. spec.admissions is a
// list of {apiVersion, kind, name, labelInjectionStrategy}.
//
// spec.scopeToLabel is required in Enforce mode only: a harness that only
// reports scopes nothing. A CEL
// rule on spec states this; mode defaults to Enforce before it runs.
//
// # Acknowledging dangerous cluster-wide grants
//
// docs/contracts.md §8 denies, in Enforce mode, cluster-wide grants in
// spec.clusterRoles that can compromise the cluster (the verbs escalate,
// bind and impersonate, a "*" verb or resource, and get/list/watch on secrets
// without resourceNames) unless the harness carries an explicit, named
// acknowledgement. That acknowledgement is spec.acknowledgedGrants, a list
// keyed by name:
//
//	acknowledgedGrants:
//	- name: cert-manager-reads-secrets
//	  apiGroups: [""]
//	  resources: ["secrets"]
//	  verbs: ["get", "list", "watch"]
//	  reason: "issues certificates for every namespace; reviewed in PLAT-1234"
//
// A dangerous finding is one (rule, apiGroup, resource, verb) of
// spec.clusterRoles.rules. It is acknowledged when a single entry lists that
// apiGroup, that resource and that verb, compared as literal strings: "*" in
// an acknowledgement matches only a literal "*" in the rule, never "any", so
// acknowledging one grant can never silently cover a wider one added later.
// The grant is named by its content, not by a rule index, so reordering
// the rules keeps the acknowledgement and editing a rule into something new
// loses it. Every entry needs a reason of at least 10 characters; its name
// appears in the webhook's warnings and audit annotations (a name is not a
// secret, the reason is never echoed). In Report mode the findings are
// warnings with or without an acknowledgement. An acknowledgement that matches
// no rule is harmless; the webhook may warn about it.
//
// An annotation was not chosen: it has no schema, so the API server could not
// require the reason or reject a malformed entry, and a spec field is covered
// by the generation (UPDATE ratcheting keys on it).
//
// +kubebuilder:object:generate=true
// +groupName=vshn.net
package v1
