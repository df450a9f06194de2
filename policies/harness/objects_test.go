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

// failingState cannot answer, like an unsynced cache.
type failingState struct{}

var errUnsynced = errors.New("cache not synced")

func (failingState) HarnessesWithScopeLabel(string) ([]string, error)   { return nil, errUnsynced }
func (failingState) HarnessesClaiming(string, string) ([]string, error) { return nil, errUnsynced }

// seededState holds the seed's mariadb-operator (as on UPDATE), a strimzi
// harness and a harness claiming the whole namespace ops.
func seededState() *fakeState {
	return newFakeState().
		add("mariadb-operator", scopeLabel, "mariadb-operator", "operator-mariadb-operator").
		add("strimzi-operator", "requires.helmetica.io/operator-strimzi", "strimzi", "strimzi-cluster-operator").
		add("ops-tools", "requires.helmetica.io/ops", "ops")
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

// baseHarness is the seed's mariadb-operator harness, in the shape of
// api/harness/v1 (the pass fixtures decode strictly into it).
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
			"roleBindings": map[string]any{"roleRefs": []any{map[string]any{
				"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin",
			}}},
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
