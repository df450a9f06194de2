package harness

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

const (
	rule2  = "spec.clusterRoles.rules[2]"
	ackAt0 = "spec.acknowledgedGrants[0]"
	refAt0 = "spec.roleBindings.roleRefs[0]"
	crbAt0 = "spec.clusterRoleBindings[0]"
	reason = "the operator rotates every TLS secret"
)

func tweak(f func(obj map[string]any)) func() map[string]any {
	return func() map[string]any {
		obj := baseHarness()
		f(obj)
		return obj
	}
}

func withRule(r map[string]any, more ...func(map[string]any)) func() map[string]any {
	return tweak(func(obj map[string]any) {
		addClusterRule(obj, r)
		for _, m := range more {
			m(obj)
		}
	})
}

func withAcks(acks ...any) func(map[string]any) {
	return func(obj map[string]any) { spec(obj)["acknowledgedGrants"] = acks }
}

func report(obj map[string]any) { spec(obj)["mode"] = ModeReport }

// reservedLabel sets the scope label (and drops the scoped list, which
// would name the old one).
func reservedLabel(key string) func() map[string]any {
	return tweak(func(o map[string]any) {
		spec(o)["scopeToLabel"] = key
		delete(spec(o), "clusterRoles")
	})
}

// bindings sets spec.clusterRoleBindings; roleBindings spec.roleBindings.roleRefs.
func bindings(refs ...any) func() map[string]any {
	return tweak(func(o map[string]any) { spec(o)["clusterRoleBindings"] = refs })
}

func roleBindings(refs ...any) func() map[string]any {
	return tweak(func(o map[string]any) { spec(o)["roleBindings"] = map[string]any{"roleRefs": refs} })
}

// adminAcks acknowledge every dangerous grant of storedRoles' admin.
func adminAcks() []any {
	core := strs("")
	return []any{
		ack("tenant-secrets", core, strs("secrets"), strs("get", "list", "watch"), reason),
		ack("tenant-pods", core, strs("pods", "pods/attach", "pods/exec", "pods/portforward"), strs("create"), reason),
		ack("tenant-identities", core, strs("serviceaccounts", "serviceaccounts/token"), strs("impersonate", "create"), reason),
	}
}

// many returns n distinct strings with prefix.
func many(prefix string, n int) []any {
	out := []any{}
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

func TestValidateHarness(t *testing.T) {
	core := strs("")
	listSecrets := rule(core, strs("secrets"), strs("list"))
	readSecrets := rule(core, strs("secrets"), strs("get", "list", "watch"))
	tests := []struct {
		name  string
		obj   func() map[string]any
		state State
		want  []result
	}{
		{name: "seed harness", obj: baseHarness},
		{name: "mode Enforce", obj: tweak(func(o map[string]any) { spec(o)["mode"] = ModeEnforce })},
		{name: "mode invalid", obj: tweak(func(o map[string]any) { spec(o)["mode"] = "report" }),
			want: []result{deny(HarnessModeInvalid, "spec.mode")}},
		{name: "scope label missing in Enforce", obj: tweak(func(o map[string]any) { delete(spec(o), "scopeToLabel") }),
			want: []result{deny(HarnessGrantDangerous, "spec.clusterRoles.rules[1]"), deny(HarnessScopeLabelInvalid, "spec.scopeToLabel")}},
		{name: "scope label missing in Report, seed report example", obj: tweak(func(o map[string]any) {
			report(o)
			delete(spec(o), "scopeToLabel")
			delete(spec(o), "clusterRoles")
		})},
		{name: "scope label invalid", obj: tweak(func(o map[string]any) { spec(o)["scopeToLabel"] = "requires.helmetica.io/" + strings.Repeat("a", 64) }),
			want: []result{deny(HarnessGrantDangerous, "spec.clusterRoles.rules[1]"), deny(HarnessScopeLabelInvalid, "spec.scopeToLabel")}},
		{name: "scope label claimed", obj: tweak(func(o map[string]any) {
			spec(o)["scopeToLabel"] = "requires.helmetica.io/operator-strimzi"
			clusterRules(o)[1].(map[string]any)["resourceNames"] = strs("requires.helmetica.io/operator-strimzi")
		}), want: []result{deny(HarnessScopeLabelClaimed, "spec.scopeToLabel")}},
		{name: "renamed harness clashes on label and account", obj: tweak(func(o map[string]any) { o["metadata"].(map[string]any)["name"] = "other" }),
			want: []result{deny(HarnessServiceAccountClaimed, "spec.operator.serviceAccounts[0]"), deny(HarnessScopeLabelClaimed, "spec.scopeToLabel")}},
		{name: "account claimed", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "strimzi", "serviceAccounts": strs("other", "strimzi-cluster-operator", "other")}
		}), want: []result{deny(HarnessServiceAccountClaimed, "spec.operator.serviceAccounts[1]")}},
		{name: "whole namespace against an account", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "strimzi"}
		}), want: []result{deny(HarnessServiceAccountClaimed, "spec.operator.serviceAccounts")}},
		{name: "account against a whole namespace", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "ops", "serviceAccounts": strs("x")}
		}), want: []result{deny(HarnessServiceAccountClaimed, "spec.operator.serviceAccounts[0]")}},
		{name: "whole free namespace", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "free", "serviceAccounts": []any{}}
		})},
		{name: "operator invalid", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "Bad", "serviceAccounts": strs("x")}
		}), want: []result{deny(HarnessOperatorInvalid, "spec.operator.namespace")}},
		{name: "operator missing", obj: tweak(func(o map[string]any) { delete(spec(o), "operator") }),
			want: []result{deny(HarnessOperatorInvalid, "spec.operator.namespace")}},
		{name: "service account invalid", obj: tweak(func(o map[string]any) {
			spec(o)["operator"] = map[string]any{"namespace": "free", "serviceAccounts": []any{"Bad", 1.0, "ok"}}
		}), want: []result{deny(HarnessOperatorInvalid, "spec.operator.serviceAccounts[0]"), deny(HarnessOperatorInvalid, "spec.operator.serviceAccounts[1]")}},

		// Grants.
		{name: "escalate", obj: withRule(rule(strs("rbac.authorization.k8s.io"), strs("clusterroles"), strs("escalate"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "bind", obj: withRule(rule(strs("rbac.authorization.k8s.io"), strs("clusterroles"), strs("bind"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "impersonate", obj: withRule(rule(core, strs("users"), strs("impersonate"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		// verb * lists and watches the operator's own resource already, so
		// the scopedlist it also covers adds nothing.
		{name: "verb * of the operator's own resource", obj: withRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("*")))},
		{name: "scopedlist beside list without watch", obj: withRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("list", "scopedlist"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "scopedlist beside list and watch", obj: withRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("list", "watch", "scopedlist")))},
		{name: "scopedlist of another label beside named list and watch", obj: withRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("list", "watch", "scopedlist"), "other/label")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "resource * of the operator's own group covers no dangerous request", obj: withRule(rule(strs("k8s.mariadb.com"), strs("*"), strs("get")))},
		{name: "resource * of every group reads secrets", obj: withRule(rule(strs("*"), strs("*"), strs("get"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "resource */scale covers no dangerous request", obj: withRule(rule(strs("apps"), strs("*/scale"), strs("update")))},
		{name: "resource */exec", obj: withRule(rule(core, strs("*/exec"), strs("create"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "resource */token", obj: withRule(rule(core, strs("*/token"), strs("create"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "pods/exec of one named pod", obj: withRule(rule(core, strs("pods/exec"), strs("create"), "db-0")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "pods/log is no exec", obj: withRule(rule(core, strs("pods/log"), strs("get", "create")))},
		{name: "resourceNames \"\" lists every secret", obj: withRule(rule(core, strs("secrets"), strs("list"), "")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "resourceNames \"*\" is a name, not a wildcard", obj: withRule(rule(core, strs("secrets"), strs("get", "list", "watch"), "*"))},
		{name: "get of several named secrets", obj: withRule(rule(core, strs("secrets"), strs("get", "watch"), "a", "b"))},
		{name: "impersonate one named service account", obj: withRule(rule(core, strs("serviceaccounts"), strs("impersonate"), "default")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "impersonate uids", obj: withRule(rule(strs("authentication.k8s.io"), strs("uids"), strs("impersonate"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "impersonate one user extra", obj: withRule(rule(strs("authentication.k8s.io"), strs("userextras/scopes"), strs("impersonate"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "impersonate userextras without a key covers no extra", obj: withRule(rule(strs("authentication.k8s.io"), strs("userextras"), strs("impersonate")))},
		{name: "impersonate in another group", obj: withRule(rule(strs("example.io"), strs("users"), strs("impersonate")))},
		{name: "nodes/proxy", obj: withRule(rule(core, strs("nodes/proxy"), strs("get"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "create pods", obj: withRule(rule(core, strs("pods"), strs("create"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "create pods limited to names creates none", obj: withRule(rule(core, strs("pods"), strs("create"), "db-0"))},
		{name: "delete every admission policy", obj: withRule(rule(strs("admissionregistration.k8s.io"), strs("validatingadmissionpolicies"), strs("delete"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "deletecollection of webhook configurations", obj: withRule(rule(strs("admissionregistration.k8s.io"), strs("mutatingwebhookconfigurations"), strs("deletecollection"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "read admission configurations", obj: withRule(rule(strs("admissionregistration.k8s.io"), strs("*"), strs("get", "list", "watch")))},
		{name: "verb * scopedlists every scope", obj: withRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("*"), scopeLabel))},
		{name: "too many combinations to enumerate", obj: withRule(rule(many("g", 70), many("r", 70), strs("scopedlist"))),
			want: []result{deny(HarnessGrantTooLarge, rule2)}},
		{name: "too many combinations deny in Report mode too", obj: withRule(rule(many("g", 70), many("r", 70), strs("scopedlist")), report),
			want: []result{deny(HarnessGrantTooLarge, rule2)}},
		{name: "list secrets", obj: withRule(rule(core, strs("secrets"), strs("list"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "watch secrets in any group", obj: withRule(rule(strs("*"), strs("secrets"), strs("watch"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "get named secrets", obj: withRule(rule(core, strs("secrets"), strs("get"), "mariadb-root"))},
		{name: "secrets of another group", obj: withRule(rule(strs("example.io"), strs("secrets"), strs("list")))},
		{name: "create secrets", obj: withRule(rule(core, strs("secrets"), strs("create")))},
		{name: "list and scopedlist on secrets with the label", obj: withRule(rule(core, strs("secrets"), strs("list", "scopedlist"), scopeLabel))},
		{name: "list and scopedlist on secrets without names", obj: withRule(rule(core, strs("secrets"), strs("list", "scopedlist"))),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "scopedlist of another label", obj: withRule(rule(core, strs("pods"), strs("scopedlist"), "requires.helmetica.io/operator-strimzi")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "scopedlist of own and another label", obj: withRule(rule(core, strs("pods"), strs("scopedlist"), scopeLabel, "x")),
			want: []result{deny(HarnessGrantDangerous, rule2)}},
		{name: "verbs are case-sensitive as in RBAC", obj: withRule(rule(core, strs("secrets"), strs("LIST", "Escalate")))},
		{name: "non-string items skipped", obj: withRule(map[string]any{"verbs": []any{1.0, nil}, "resources": []any{"secrets"}})},
		{name: "report mode warns", obj: withRule(listSecrets, report),
			want: []result{warn(HarnessGrantDangerous, rule2)}},
		{name: "acknowledged", obj: withRule(listSecrets, withAcks(ackSecrets("list"))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "acknowledged in report mode", obj: withRule(listSecrets, report, withAcks(ackSecrets("list"))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "entry wider than the rule covers it", obj: withRule(listSecrets,
			withAcks(ack("wide", strs("", "apps"), strs("pods", "secrets"), strs("create", "list", "get"), reason))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "triples covered by different entries", obj: withRule(readSecrets,
			withAcks(ack("a", core, strs("secrets"), strs("get", "list"), reason), ack("b", core, strs("secrets"), strs("watch"), reason))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "one triple uncovered: denied, the partial entry unused", obj: withRule(readSecrets, withAcks(ackSecrets("get", "list"))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), deny(HarnessGrantDangerous, rule2)}},
		{name: "one triple uncovered in report mode", obj: withRule(readSecrets, report, withAcks(ackSecrets("get", "list"))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), warn(HarnessGrantDangerous, rule2)}},
		{name: "a verb * acknowledges nothing but a literal *", obj: withRule(listSecrets, withAcks(ackSecrets("*"))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), deny(HarnessGrantDangerous, rule2)}},
		{name: "an apiGroup * acknowledges nothing but a literal *", obj: withRule(listSecrets,
			withAcks(ack("any-group", strs("*"), strs("secrets"), strs("list"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), deny(HarnessGrantDangerous, rule2)}},
		{name: "a literal * acknowledges a literal *", obj: withRule(rule(strs("*"), strs("*"), strs("*")),
			withAcks(ack("everything", strs("*"), strs("*"), strs("*"), reason))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "watch secrets in group * acknowledged literally", obj: withRule(rule(strs("*"), strs("secrets"), strs("watch")),
			withAcks(ack("watch-secrets", strs("*"), strs("secrets"), strs("watch"), reason))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "resource */exec acknowledged", obj: withRule(rule(core, strs("*/exec"), strs("create")),
			withAcks(ack("exec", core, strs("*/exec"), strs("create"), reason))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "only the dangerous triples need an entry", obj: withRule(rule(core, strs("secrets", "configmaps"), strs("list", "create")),
			withAcks(ackSecrets("list"))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "escalate and bind need both", obj: withRule(rule(strs("rbac.authorization.k8s.io"), strs("clusterroles"), strs("escalate", "bind")),
			withAcks(ack("escalate", strs("rbac.authorization.k8s.io"), strs("clusterroles"), strs("escalate"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), deny(HarnessGrantDangerous, rule2)}},
		{name: "a non-resource rule covers no resource request", obj: withRule(
			map[string]any{"nonResourceURLs": strs("*"), "verbs": strs("*")},
			withAcks(ack("all", strs("*"), strs("*"), strs("*"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0)}},
		{name: "one entry acknowledges two rules", obj: withRule(listSecrets, func(o map[string]any) {
			addClusterRule(o, rule(core, strs("secrets"), strs("list", "create")))
			withAcks(ackSecrets("list"))(o)
		}), want: []result{warn(HarnessGrantAcknowledged, rule2), warn(HarnessGrantAcknowledged, "spec.clusterRoles.rules[3]")}},
		{name: "acknowledgement of a safe rule", obj: tweak(withAcks(ack("pods", core, strs("pods"), strs("list"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0)}},
		{name: "acknowledgement of a scoped list", obj: tweak(withAcks(ack("scoped", core, strs("secrets"), strs("scopedlist"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0)}},
		{name: "second acknowledgement of one grant", obj: withRule(listSecrets,
			withAcks(ackSecrets("list"), ack("again", core, strs("secrets"), strs("list"), reason))),
			want: []result{warn(HarnessAcknowledgementUnused, "spec.acknowledgedGrants[1]"), warn(HarnessGrantAcknowledged, rule2)}},
		{name: "reason too short denies and acknowledges nothing", obj: withRule(listSecrets,
			withAcks(ack("reads-secrets", core, strs("secrets"), strs("list"), "  because  "))),
			want: []result{deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[0].reason"), deny(HarnessGrantDangerous, rule2)}},
		{name: "reason of 1024 characters", obj: withRule(listSecrets,
			withAcks(ack("reads-secrets", core, strs("secrets"), strs("list"), strings.Repeat("é", MaxReasonLength)))),
			want: []result{warn(HarnessGrantAcknowledged, rule2)}},
		{name: "reason too long denies and acknowledges nothing", obj: withRule(listSecrets,
			withAcks(ack("reads-secrets", core, strs("secrets"), strs("list"), strings.Repeat("a", MaxReasonLength+1)))),
			want: []result{deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[0].reason"), deny(HarnessGrantDangerous, rule2)}},
		{name: "invalid entry acknowledges nothing", obj: withRule(listSecrets,
			withAcks(ack("reads-secrets", core, strs("secrets"), strs("list"), reason), ack("reads-secrets", core, strs("secrets"), strs("list"), reason)),
			func(o map[string]any) {
				spec(o)["acknowledgedGrants"].([]any)[0].(map[string]any)["resources"] = []any{}
			}),
			want: []result{
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[0].resources"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[1].name"),
				deny(HarnessGrantDangerous, rule2),
			}},
		{name: "acknowledgement malformed", obj: tweak(withAcks(
			ack("Bad_Name", core, strs("secrets"), strs("list"), reason),
			map[string]any{"name": "x", "apiGroups": []any{1.0}, "resources": "secrets", "reason": reason},
			map[string]any{},
			"x")),
			want: []result{
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[0].name"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[1].apiGroups"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[1].resources"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[1].verbs"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[2].apiGroups"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[2].name"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[2].reason"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[2].resources"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[2].verbs"),
				deny(HarnessAcknowledgementInvalid, "spec.acknowledgedGrants[3]"),
			}},
		{name: "malformed rules", obj: tweak(func(o map[string]any) {
			spec(o)["clusterRoles"] = map[string]any{"rules": []any{
				1.0,
				map[string]any{"verbs": "*"},
				map[string]any{"apiGroups": map[string]any{}, "resources": "x", "resourceNames": 1.0},
				listSecrets,
			}}
		}), want: []result{
			deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules[0]"),
			deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules[1].verbs"),
			deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules[2].apiGroups"),
			deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules[2].resourceNames"),
			deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules[2].resources"),
			deny(HarnessGrantDangerous, "spec.clusterRoles.rules[3]"),
		}},
		{name: "rules not a list", obj: tweak(func(o map[string]any) { spec(o)["clusterRoles"] = map[string]any{"rules": "x"} }),
			want: []result{deny(HarnessClusterRolesInvalid, "spec.clusterRoles.rules")}},
		{name: "cluster roles as a list of named roles", obj: tweak(func(o map[string]any) {
			spec(o)["clusterRoles"] = []any{map[string]any{"name": "r", "rules": []any{listSecrets}}}
		}), want: []result{deny(HarnessClusterRolesInvalid, "spec.clusterRoles")}},
		{name: "cluster roles a string", obj: tweak(func(o map[string]any) { spec(o)["clusterRoles"] = "x" }),
			want: []result{deny(HarnessClusterRolesInvalid, "spec.clusterRoles")}},
		{name: "cluster roles empty", obj: tweak(func(o map[string]any) { spec(o)["clusterRoles"] = map[string]any{} })},
		{name: "cluster roles without rules", obj: tweak(func(o map[string]any) { spec(o)["clusterRoles"] = map[string]any{"rules": []any{}} })},
		{name: "namespaced roles are not reviewed", obj: baseHarness},

		// Scope label keys Kubernetes reserves.
		{name: "scope label kubernetes.io/metadata.name", obj: reservedLabel("kubernetes.io/metadata.name"),
			want: []result{deny(HarnessScopeLabelReserved, "spec.scopeToLabel")}},
		{name: "scope label of a kubernetes.io subdomain", obj: reservedLabel("node.kubernetes.io/exclude"),
			want: []result{deny(HarnessScopeLabelReserved, "spec.scopeToLabel")}},
		{name: "scope label k8s.io", obj: reservedLabel("k8s.io/x"),
			want: []result{deny(HarnessScopeLabelReserved, "spec.scopeToLabel")}},
		{name: "scope label of a k8s.io subdomain", obj: reservedLabel("policy.k8s.io/x"),
			want: []result{deny(HarnessScopeLabelReserved, "spec.scopeToLabel")}},
		{name: "scope label merely ending in kubernetes.io", obj: reservedLabel("notkubernetes.io/x")},
		{name: "scope label without prefix", obj: reservedLabel("kubernetes.io")},

		// Bindings.
		{name: "seed binds admin in every scoped namespace", obj: seedHarness,
			want: []result{deny(HarnessGrantDangerous, refAt0)}},
		{name: "seed in Report mode", obj: func() map[string]any { o := seedHarness(); report(o); return o },
			want: []result{warn(HarnessGrantDangerous, refAt0)}},
		{name: "seed acknowledged", obj: func() map[string]any { o := seedHarness(); withAcks(adminAcks()...)(o); return o },
			want: []result{warn(HarnessGrantAcknowledged, refAt0)}},
		{name: "seed partly acknowledged", obj: func() map[string]any { o := seedHarness(); withAcks(adminAcks()[:2]...)(o); return o },
			want: []result{warn(HarnessAcknowledgementUnused, ackAt0), warn(HarnessAcknowledgementUnused, "spec.acknowledgedGrants[1]"), deny(HarnessGrantDangerous, refAt0)}},
		{name: "cluster-wide binding to cluster-admin", obj: bindings(roleRefTo(kindClusterRole, "cluster-admin")),
			want: []result{deny(HarnessGrantDangerous, crbAt0)}},
		{name: "cluster-wide binding to a harmless role", obj: bindings(roleRefTo(kindClusterRole, "mariadb-reader"))},
		{name: "cluster-wide binding to the aggregated view", obj: bindings(roleRefTo(kindClusterRole, "view"))},
		{name: "cluster-wide binding to a missing role", obj: bindings(roleRefTo(kindClusterRole, "created-later")),
			want: []result{deny(HarnessRoleNotFound, crbAt0)}},
		{name: "cluster-wide binding to a Role", obj: bindings(roleRefTo(kindRole, "mariadb-tenant")),
			want: []result{deny(HarnessRoleRefInvalid, crbAt0+".kind")}},
		{name: "roleRef malformed", obj: bindings(map[string]any{"apiGroup": "rbac", "kind": "Group", "name": "a/b"}, "x"),
			want: []result{deny(HarnessRoleRefInvalid, crbAt0+".apiGroup"), deny(HarnessRoleRefInvalid, crbAt0+".kind"),
				deny(HarnessRoleRefInvalid, crbAt0+".name"), deny(HarnessRoleRefInvalid, "spec.clusterRoleBindings[1]")}},
		{name: "clusterRoleBindings not a list", obj: tweak(func(o map[string]any) { spec(o)["clusterRoleBindings"] = map[string]any{} }),
			want: []result{deny(HarnessRoleRefInvalid, "spec.clusterRoleBindings")}},
		{name: "roleBindings not an object", obj: tweak(func(o map[string]any) { spec(o)["roleBindings"] = []any{} }),
			want: []result{deny(HarnessRoleRefInvalid, "spec.roleBindings")}},
		{name: "roleRefs not a list", obj: tweak(func(o map[string]any) { spec(o)["roleBindings"] = map[string]any{"roleRefs": "admin"} }),
			want: []result{deny(HarnessRoleRefInvalid, "spec.roleBindings.roleRefs")}},
		{name: "binding to Roles of one name, one dangerous", obj: roleBindings(roleRefTo(kindRole, "mariadb-tenant")),
			want: []result{deny(HarnessGrantDangerous, refAt0)}},
		{name: "binding to a missing Role", obj: roleBindings(roleRefTo(kindRole, "nowhere")),
			want: []result{deny(HarnessRoleNotFound, refAt0)}},
		{name: "a role bound twice is reported at each binding", obj: roleBindings(roleRefTo(kindClusterRole, "cluster-admin"), roleRefTo(kindClusterRole, "cluster-admin")),
			want: []result{deny(HarnessGrantDangerous, refAt0), deny(HarnessGrantDangerous, "spec.roleBindings.roleRefs[1]")}},
		{name: "view of roles fails", obj: baseHarness, state: seededState().withRolesError(),
			want: []result{deny(policies.StateUnavailable, refAt0)}},
		{name: "aggregation selector unreadable", obj: bindings(roleRefTo(kindClusterRole, "odd")), state: seededState().withRoles(
			map[string]any{"kind": kindClusterRole, "metadata": map[string]any{"name": "odd"},
				"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchExpressions": []any{
					map[string]any{"key": "a", "operator": "Bogus"}}}}}}),
			want: []result{deny(HarnessRoleUnreadable, crbAt0)}},
		{name: "stored rules unreadable", obj: bindings(roleRefTo(kindClusterRole, "odd")), state: seededState().withRoles(
			map[string]any{"kind": kindClusterRole, "metadata": map[string]any{"name": "odd"}, "rules": "x"}),
			want: []result{deny(HarnessRoleUnreadable, crbAt0)}},
		{name: "aggregation cycle ends", obj: bindings(roleRefTo(kindClusterRole, "loop-a")), state: seededState().withRoles(
			clusterRole("loop-a", map[string]any{"rbac.example/aggregate-to-b": "true"}, "a"),
			clusterRole("loop-b", map[string]any{"rbac.example/aggregate-to-a": "true"}, "b", rule(core, strs("pods"), strs("create")))),
			want: []result{deny(HarnessGrantDangerous, crbAt0)}},
		{name: "aggregated role without sources grants nothing", obj: bindings(roleRefTo(kindClusterRole, "empty")),
			state: seededState().withRoles(clusterRole("empty", nil, "nothing"))},

		// State.
		{name: "state error: one denial at the first lookup", obj: baseHarness, state: failingState{},
			want: []result{deny(policies.StateUnavailable, "spec.scopeToLabel")}},
		{name: "state error in Report mode without label", state: failingState{}, obj: tweak(func(o map[string]any) {
			report(o)
			delete(spec(o), "scopeToLabel")
		}), want: []result{warn(HarnessGrantDangerous, "spec.clusterRoles.rules[1]"), deny(policies.StateUnavailable, "spec.operator.serviceAccounts[0]")}},
		{name: "nil object", obj: func() map[string]any { return nil },
			want: []result{deny(HarnessOperatorInvalid, "spec.operator.namespace"), deny(HarnessScopeLabelInvalid, "spec.scopeToLabel")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.state
			if state == nil {
				state = seededState()
			}
			if got := results(ValidateHarness(tt.obj(), state)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestMessages: claims name the other harnesses; grant findings name role,
// rule, reasons and acknowledgement names but never the acknowledgement's reason.
func TestMessages(t *testing.T) {
	state := newFakeState().add("b", scopeLabel, "x").add("a", scopeLabel, "y").withRoles(storedRoles()...)
	findings := ValidateHarness(baseHarness(), state)
	if len(findings) != 1 || !strings.Contains(findings[0].Message, "OperatorHarness objects a, b;") {
		t.Errorf("findings = %+v", findings)
	}
	obj := withRule(rule(strs(""), strs("secrets", "serviceaccounts"), strs("list", "impersonate")), withAcks(
		ackSecrets("list"),
		ack("operator-impersonates", strs(""), strs("serviceaccounts"), strs("impersonate"), reason+" and impersonates")))()
	findings = ValidateHarness(obj, seededState())
	if len(findings) != 1 || findings[0].Code != HarnessGrantAcknowledged {
		t.Fatalf("findings = %+v", findings)
	}
	msg := findings[0].Message
	for _, want := range []string{"this cluster-wide rule grants", dangerImpersonate, dangerSecretsRead,
		"acknowledgements reads-secrets, operator-impersonates"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, reason) {
		t.Errorf("message %q echoes the reason", msg)
	}

	findings = ValidateHarness(seedHarness(), seededState())
	if len(findings) != 1 {
		t.Fatalf("findings = %+v", findings)
	}
	msg = findings[0].Message
	for _, want := range []string{"the ClusterRole this binding in every scoped namespace references (through rule 0 of ClusterRole system:aggregate-to-edit, rule 1 of ClusterRole system:aggregate-to-edit",
		dangerSecretsRead, dangerImpersonate, dangerPodAccess, dangerTokens, dangerCreatePods} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// ackSecrets acknowledges verbs on core secrets.
func ackSecrets(verbs ...string) map[string]any {
	return ack("reads-secrets", strs(""), strs("secrets"), strs(verbs...), reason)
}
