package harness

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

func fixtures() []golden.Fixture {
	fx := func(name string, expect golden.Outcome, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(baseHarness, tweak)}
	}
	pass, fail := golden.Pass, golden.Fail
	core := strs("")
	addRule := func(r map[string]any, more ...func(map[string]any)) func(map[string]any) {
		return func(obj map[string]any) {
			addClusterRule(obj, r)
			for _, m := range more {
				m(obj)
			}
		}
	}
	seed := func(name string, expect golden.Outcome, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(seedHarness, tweak)}
	}
	listSecrets := rule(core, strs("secrets"), strs("get", "list", "watch"))
	return []golden.Fixture{
		seed("seed-mariadb-operator", fail, nil),
		seed("seed-mariadb-operator-acknowledged", pass, withAcks(adminAcks()...)),
		fx("mariadb-operator-binds-view", pass, nil),
		fx("cluster-role-binding-harmless", pass, func(obj map[string]any) {
			spec(obj)["clusterRoleBindings"] = []any{roleRefTo(kindClusterRole, "mariadb-reader")}
		}),
		fx("wildcard-resources-own-group", pass, addRule(rule(strs("k8s.mariadb.com"), strs("*"), strs("get", "list", "watch")))),
		fx("scopedlist-secrets", pass, addRule(rule(core, strs("secrets"), strs("scopedlist"), scopeLabel))),
		fx("seed-report-mode", pass, func(obj map[string]any) {
			report(obj)
			delete(spec(obj), "scopeToLabel")
			delete(spec(obj), "clusterRoles")
		}),
		fx("report-mode-dangerous-grant", pass, addRule(listSecrets, report)),
		fx("acknowledged-grant", pass, addRule(listSecrets, withAcks(ackSecrets("get", "list", "watch")))),
		fx("acknowledged-by-two-entries", pass, addRule(listSecrets,
			withAcks(ackSecrets("get", "list"), ack("watches-secrets", core, strs("secrets"), strs("watch"), reason)))),
		fx("acknowledged-wildcard-literally", pass, addRule(rule(strs("*"), strs("*"), strs("*")),
			withAcks(ack("everything", strs("*"), strs("*"), strs("*"), reason)))),
		// Every verb of the operator's own resources: the scopedlist it
		// covers adds nothing to the list and watch it also grants.
		fx("grant-own-group-wildcards", pass, addRule(rule(strs("k8s.mariadb.com"), strs("*"), strs("*")))),
		fx("acknowledgement-unused", pass, withAcks(ack("lists-pods", core, strs("pods"), strs("list"), reason))),
		fx("named-secrets", pass, addRule(rule(core, strs("secrets"), strs("get"), "mariadb-root"))),
		fx("whole-namespace", pass, func(obj map[string]any) {
			spec(obj)["operator"] = map[string]any{"namespace": "mariadb-operator"}
		}),

		fx("mode-invalid", fail, func(obj map[string]any) { spec(obj)["mode"] = "Audit" }),
		fx("scope-label-missing", fail, func(obj map[string]any) {
			delete(spec(obj), "scopeToLabel")
			delete(spec(obj), "clusterRoles")
		}),
		fx("scope-label-invalid", fail, func(obj map[string]any) {
			spec(obj)["scopeToLabel"] = "requires.helmetica.io/Operator MariaDB"
			delete(spec(obj), "clusterRoles")
		}),
		fx("scope-label-claimed", fail, func(obj map[string]any) {
			spec(obj)["scopeToLabel"] = "requires.helmetica.io/operator-strimzi"
			delete(spec(obj), "clusterRoles")
		}),
		fx("service-account-claimed", fail, func(obj map[string]any) {
			spec(obj)["operator"] = map[string]any{"namespace": "strimzi", "serviceAccounts": strs("strimzi-cluster-operator")}
		}),
		fx("namespace-claimed-whole", fail, func(obj map[string]any) {
			spec(obj)["operator"] = map[string]any{"namespace": "ops", "serviceAccounts": strs("mariadb")}
		}),
		fx("operator-namespace-missing", fail, func(obj map[string]any) { delete(spec(obj), "operator") }),
		fx("grant-escalate", fail, addRule(rule(strs("rbac.authorization.k8s.io"), strs("clusterroles"), strs("escalate", "bind")))),
		fx("grant-impersonate", fail, addRule(rule(core, strs("users", "groups", "serviceaccounts"), strs("impersonate")))),
		fx("grant-scopedlist-other-label", fail, addRule(rule(strs("k8s.mariadb.com"), strs("backups"), strs("scopedlist"), "other/label"))),
		fx("grant-list-secrets", fail, addRule(listSecrets)),
		fx("grant-list-secrets-unnamed", fail, addRule(rule(core, strs("secrets"), strs("list", "watch"), ""))),
		fx("grant-exec", fail, addRule(rule(core, strs("pods/exec", "pods/attach"), strs("create")))),
		fx("grant-admission-policies", fail, addRule(rule(strs("admissionregistration.k8s.io"),
			strs("validatingadmissionpolicies", "validatingadmissionpolicybindings"), strs("create", "update", "patch", "delete")))),
		fx("cluster-role-binding-cluster-admin", fail, func(obj map[string]any) {
			spec(obj)["clusterRoleBindings"] = []any{roleRefTo(kindClusterRole, "cluster-admin")}
		}),
		fx("cluster-role-binding-missing", fail, func(obj map[string]any) {
			spec(obj)["clusterRoleBindings"] = []any{roleRefTo(kindClusterRole, "created-later")}
		}),
		fx("role-binding-role", fail, func(obj map[string]any) {
			spec(obj)["roleBindings"] = map[string]any{"roleRefs": []any{roleRefTo(kindRole, "mariadb-tenant")}}
		}),
		fx("scope-label-reserved", fail, func(obj map[string]any) {
			spec(obj)["scopeToLabel"] = "kubernetes.io/metadata.name"
			delete(spec(obj), "clusterRoles")
		}),
		fx("grant-scopedlist-unscoped", fail, addRule(rule(core, strs("secrets"), strs("scopedlist")))),
		fx("acknowledgement-reason-short", fail, addRule(listSecrets,
			withAcks(ack("reads-secrets", core, strs("secrets"), strs("get", "list", "watch"), "because")))),
		fx("acknowledgement-partial", fail, addRule(listSecrets, withAcks(ackSecrets("get", "list")))),
		fx("acknowledgement-wildcard-not-any", fail, addRule(listSecrets, withAcks(ackSecrets("*")))),
		fx("acknowledgement-invalid", fail, addRule(listSecrets, withAcks(
			map[string]any{"name": "reads-secrets", "apiGroups": []any{}, "resources": strs("secrets"), "verbs": strs("get", "list", "watch"), "reason": reason}))),
		fx("cluster-roles-malformed", fail, func(obj map[string]any) {
			spec(obj)["clusterRoles"] = map[string]any{"rules": map[string]any{"verbs": strs("*")}}
		}),
		fx("cluster-roles-list", fail, func(obj map[string]any) {
			spec(obj)["clusterRoles"] = []any{map[string]any{"name": "mariadb-operator-cluster", "rules": []any{listSecrets}}}
		}),
	}
}

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", fixtures(), func(obj map[string]any) []policies.Finding {
		return ValidateHarness(obj, seededState())
	})
}
