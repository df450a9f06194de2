package harness

import (
	"errors"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// Objects shared by the table tests, the golden fixtures, the fuzz targets
// and the benchmarks. Every builder returns a fresh object.

// fakeState is a map-backed State, indexed as the webhook's informer
// indexes are: by scope label, by (namespace, service account), and by
// namespace for whole-namespace claims and for any claim.
type fakeState struct {
	byLabel        map[string][]string
	byAccount      map[[2]string][]string
	wholeNamespace map[string][]string
	anyInNamespace map[string][]string
	// clusterRoles and roles are stored RBAC roles; rolesErr makes the view
	// of roles fail while the view of harnesses answers.
	clusterRoles []map[string]any
	roles        []map[string]any
	rolesErr     error
}

func newFakeState() *fakeState {
	return &fakeState{
		byLabel:        map[string][]string{},
		byAccount:      map[[2]string][]string{},
		wholeNamespace: map[string][]string{},
		anyInNamespace: map[string][]string{},
	}
}

func (s *fakeState) add(name, label, namespace string, accounts ...string) *fakeState {
	if label != "" {
		s.byLabel[label] = append(s.byLabel[label], name)
	}
	s.anyInNamespace[namespace] = append(s.anyInNamespace[namespace], name)
	if len(accounts) == 0 {
		s.wholeNamespace[namespace] = append(s.wholeNamespace[namespace], name)
	}
	for _, a := range accounts {
		s.byAccount[[2]string{namespace, a}] = append(s.byAccount[[2]string{namespace, a}], name)
	}
	return s
}

func (s *fakeState) HarnessesWithScopeLabel(label string) ([]string, error) {
	return s.byLabel[label], nil
}

func (s *fakeState) HarnessesClaiming(namespace, account string) ([]string, error) {
	if account == "" {
		return s.anyInNamespace[namespace], nil
	}
	return append(append([]string(nil), s.byAccount[[2]string{namespace, account}]...), s.wholeNamespace[namespace]...), nil
}

func (s *fakeState) ClusterRolesNamed(name string) ([]map[string]any, error) {
	return named(s.clusterRoles, name), s.rolesErr
}

func (s *fakeState) ClusterRoles() ([]map[string]any, error) { return s.clusterRoles, s.rolesErr }

func (s *fakeState) RolesNamed(name string) ([]map[string]any, error) {
	return named(s.roles, name), s.rolesErr
}

func named(objs []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if nameOf(o) == name {
			out = append(out, o)
		}
	}
	return out
}

// withRolesError makes the view of roles fail.
func (s *fakeState) withRolesError() *fakeState {
	s.rolesErr = errUnsynced
	return s
}

// withRoles adds stored roles (built by clusterRole and role).
func (s *fakeState) withRoles(objs ...map[string]any) *fakeState {
	for _, o := range objs {
		if o["kind"] == kindRole {
			s.roles = append(s.roles, o)
		} else {
			s.clusterRoles = append(s.clusterRoles, o)
		}
	}
	return s
}

// failingState cannot answer, like an unsynced cache.
type failingState struct{}

var errUnsynced = errors.New("cache not synced")

func (failingState) HarnessesWithScopeLabel(string) ([]string, error)   { return nil, errUnsynced }
func (failingState) HarnessesClaiming(string, string) ([]string, error) { return nil, errUnsynced }
func (failingState) ClusterRolesNamed(string) ([]map[string]any, error) { return nil, errUnsynced }
func (failingState) ClusterRoles() ([]map[string]any, error)            { return nil, errUnsynced }
func (failingState) RolesNamed(string) ([]map[string]any, error)        { return nil, errUnsynced }

// clusterRole builds a stored ClusterRole; aggregateTo, when set, is the
// label value selector of an aggregationRule ("rbac.example/aggregate-to-<x>").
func clusterRole(name string, labels map[string]any, aggregateTo string, rules ...map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	obj := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kindClusterRole, "metadata": meta, "rules": anys(rules)}
	if aggregateTo != "" {
		obj["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{
			map[string]any{"matchLabels": map[string]any{"rbac.example/aggregate-to-" + aggregateTo: "true"}},
		}}
	}
	return obj
}

// role builds a stored Role.
func role(namespace, name string, rules ...map[string]any) map[string]any {
	return map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kindRole,
		"metadata": map[string]any{"name": name, "namespace": namespace}, "rules": anys(rules)}
}

func anys(rules []map[string]any) []any {
	out := []any{}
	for _, r := range rules {
		out = append(out, r)
	}
	return out
}

// storedRoles are the roles of seededState: cluster-admin; admin and view,
// aggregated (rules not filled yet, as on a control plane without
// kube-controller-manager) from aggregate-to-* roles with a subset of the
// rules Kubernetes' own admin and view grant; a harmless ClusterRole; and
// Roles named mariadb-tenant in two namespaces, one of them dangerous.
func storedRoles() []map[string]any {
	core := strs("")
	aggregated := map[string]any{"rbac.example/aggregate-to-admin": "true"}
	return []map[string]any{
		clusterRole("cluster-admin", nil, "", rule(strs("*"), strs("*"), strs("*")), map[string]any{"nonResourceURLs": strs("*"), "verbs": strs("*")}),
		clusterRole("admin", nil, "admin"),
		clusterRole("system:aggregate-to-edit", aggregated, "",
			rule(core, strs("pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"), strs("get", "list", "watch")),
			rule(core, strs("serviceaccounts"), strs("impersonate")),
			rule(core, strs("pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"), strs("create", "delete", "deletecollection", "patch", "update")),
			rule(core, strs("serviceaccounts/token"), strs("create"))),
		clusterRole("view", nil, "view"),
		clusterRole("system:aggregate-to-view", map[string]any{"rbac.example/aggregate-to-admin": "true", "rbac.example/aggregate-to-view": "true"}, "",
			rule(core, strs("configmaps", "endpoints", "persistentvolumeclaims", "services"), strs("get", "list", "watch"))),
		clusterRole("mariadb-reader", nil, "", rule(strs("k8s.mariadb.com"), strs("*"), strs("get", "list", "watch"))),
		role("tenant-a", "mariadb-tenant", rule(core, strs("configmaps"), strs("get", "list"))),
		role("tenant-b", "mariadb-tenant", rule(core, strs("pods"), strs("create"))),
	}
}

// seededState holds the mariadb-operator harness (as on UPDATE), a strimzi
// harness, a harness claiming the whole namespace ops, and storedRoles.
func seededState() *fakeState {
	return newFakeState().
		add("mariadb-operator", scopeLabel, "mariadb-operator", "operator-mariadb-operator").
		add("strimzi-operator", "requires.helmetica.io/operator-strimzi", "strimzi", "strimzi-cluster-operator").
		add("ops-tools", "requires.helmetica.io/ops", "ops").
		withRoles(storedRoles()...)
}

const scopeLabel = "requires.helmetica.io/operator-mariadb"

func strs(v ...string) []any {
	out := []any{}
	for _, s := range v {
		out = append(out, s)
	}
	return out
}

func rule(groups, resources, verbs []any, names ...string) map[string]any {
	r := map[string]any{"apiGroups": groups, "resources": resources, "verbs": verbs}
	if len(names) > 0 {
		r["resourceNames"] = strs(names...)
	}
	return r
}

// baseHarness is the mariadb-operator harness, in the shape of
// api/harness/v1 (the pass fixtures decode strictly into it), except that
// its roleBindings bind the aggregated ClusterRole view where seedHarness
// binds admin: admin grants exec, impersonation and tokens in every scoped
// namespace, which is dangerous (see seedHarness).
func baseHarness() map[string]any {
	return map[string]any{
		"apiVersion": "vshn.net/v1",
		"kind":       "OperatorHarness",
		"metadata":   map[string]any{"name": "mariadb-operator"},
		"spec": map[string]any{
			"scopeToLabel": scopeLabel,
			"operator": map[string]any{
				"namespace":                "mariadb-operator",
				"serviceAccounts":          strs("operator-mariadb-operator"),
				"injectProxyConfiguration": true,
			},
			"admissions": []any{map[string]any{
				"apiVersion":             "admissionregistration.k8s.io/v1",
				"kind":                   "ValidatingWebhookConfiguration",
				"name":                   "mariadb-operator-webhook",
				"labelInjectionStrategy": "ApplyPatch",
			}},
			"roleBindings": map[string]any{"roleRefs": []any{roleRefTo(kindClusterRole, "view")}},
			"roles": map[string]any{"rules": []any{
				rule(strs("k8s.mariadb.com"), strs("*"), strs("*")),
				rule(strs(""), strs("pods", "services", "endpoints", "persistentvolumeclaims", "events", "configmaps", "secrets"), strs("*")),
			}},
			"clusterRoleBindings": []any{},
			"clusterRoles": map[string]any{"rules": []any{
				rule(strs("admissionregistration.k8s.io"), strs("validatingwebhookconfigurations"),
					strs("get", "create", "update", "patch", "delete"), "mariadb-operator-webhook"),
				rule(strs(""), strs("pods", "services", "endpoints", "persistentvolumeclaims", "events", "configmaps", "secrets"),
					strs("scopedlist"), scopeLabel),
			}},
		},
	}
}

// seedHarness is the mariadb-operator harness binding ClusterRole admin
// in every scoped namespace.
func seedHarness() map[string]any {
	obj := baseHarness()
	spec(obj)["roleBindings"] = map[string]any{"roleRefs": []any{roleRefTo(kindClusterRole, "admin")}}
	return obj
}

func roleRefTo(kind, name string) map[string]any {
	return map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

// clusterRules returns spec.clusterRoles.rules.
func clusterRules(obj map[string]any) []any {
	return spec(obj)["clusterRoles"].(map[string]any)["rules"].([]any)
}

// addClusterRule appends r to spec.clusterRoles.rules (the first added is
// rule 2).
func addClusterRule(obj map[string]any, r map[string]any) {
	roles := spec(obj)["clusterRoles"].(map[string]any)
	roles["rules"] = append(roles["rules"].([]any), r)
}

// ack builds an acknowledgedGrants entry.
func ack(name string, groups, resources, verbs []any, reason string) map[string]any {
	return map[string]any{"name": name, "apiGroups": groups, "resources": resources, "verbs": verbs, "reason": reason}
}

// The table tests compare golden.Result: severity, code and field, no prose.
type result = golden.Result

var (
	deny    = golden.Deny
	warn    = golden.Warn
	results = golden.Results
)
