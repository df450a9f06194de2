package harness

import "testing"

// TestRuleAllows states the RBAC authorizer's matching on the cases that
// decide the review; e2e/rbacdiff compares RuleAllows with the
// upstream function on generated rules and requests.
func TestRuleAllows(t *testing.T) {
	r := func(verbs, groups, resources, names []string) Rule {
		return Rule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
	}
	l := func(s ...string) []string { return s }
	listSecrets := Request{Verb: "list", Resource: "secrets"}
	getSecret := Request{Verb: "get", Resource: "secrets", Name: "db"}
	exec := Request{Verb: "create", Resource: "pods", Subresource: "exec", Name: "db-0"}
	extra := Request{Verb: "impersonate", APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: "example.com/scopes"}
	tests := []struct {
		name string
		rule Rule
		req  Request
		want bool
	}{
		{"exact", r(l("list"), l(""), l("secrets"), nil), listSecrets, true},
		{"verb *", r(l("*"), l(""), l("secrets"), nil), listSecrets, true},
		{"group *", r(l("list"), l("*"), l("secrets"), nil), listSecrets, true},
		{"resource *", r(l("list"), l(""), l("*"), nil), listSecrets, true},
		{"other verb", r(l("get"), l(""), l("secrets"), nil), listSecrets, false},
		{"verbs are case-sensitive", r(l("LIST"), l(""), l("secrets"), nil), listSecrets, false},
		{"other group", r(l("list"), l("apps"), l("secrets"), nil), listSecrets, false},
		{"no groups", r(l("list"), nil, l("secrets"), nil), listSecrets, false},
		{"no resources", r(l("list"), l(""), nil, nil), listSecrets, false},
		{"empty names cover every name", r(l("get"), l(""), l("secrets"), nil), getSecret, true},
		{"listed name", r(l("get"), l(""), l("secrets"), l("db")), getSecret, true},
		{"other name", r(l("get"), l(""), l("secrets"), l("other")), getSecret, false},
		{"\"\" covers the unnamed list", r(l("list"), l(""), l("secrets"), l("")), listSecrets, true},
		{"a name does not cover the unnamed list", r(l("list"), l(""), l("secrets"), l("db")), listSecrets, false},
		{"\"*\" is a name, not a wildcard", r(l("get"), l(""), l("secrets"), l("*")), getSecret, false},
		{"resource does not cover its subresource", r(l("create"), l(""), l("pods"), nil), exec, false},
		{"resource/subresource", r(l("create"), l(""), l("pods/exec"), nil), exec, true},
		{"*/subresource", r(l("create"), l(""), l("*/exec"), nil), exec, true},
		{"*/other subresource", r(l("create"), l(""), l("*/log"), nil), exec, false},
		{"*/subresource does not cover the resource", r(l("list"), l(""), l("*/secrets"), nil), listSecrets, false},
		{"resource * covers subresources", r(l("create"), l(""), l("*"), nil), exec, true},
		{"pods/* is no wildcard", r(l("create"), l(""), l("pods/*"), nil), exec, false},
		{"user extra with a slash", r(l("impersonate"), l("authentication.k8s.io"), l("userextras/example.com/scopes"), nil), extra, true},
		{"*/ user extra with a slash", r(l("impersonate"), l("authentication.k8s.io"), l("*/example.com/scopes"), nil), extra, true},
		{"userextras alone", r(l("impersonate"), l("authentication.k8s.io"), l("userextras"), nil), extra, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RuleAllows(tt.rule, tt.req); got != tt.want {
				t.Errorf("RuleAllows(%+v, %+v) = %v, want %v", tt.rule, tt.req, got, tt.want)
			}
		})
	}
}

// TestReviewRuleAgreesWithRuleAllows: the per-literal review finds a rule
// dangerous exactly when RuleAllows covers a dangerous request with the
// probed name, and each triple it returns covers one on its own.
func TestReviewRuleAgreesWithRuleAllows(t *testing.T) {
	values := map[string][]string{
		"verbs":     {"*", "get", "list", "create", "impersonate", "bind", "update", "deletecollection"},
		"groups":    {"", "*", "rbac.authorization.k8s.io", "authentication.k8s.io", "admissionregistration.k8s.io", "apps"},
		"resources": {"*", "secrets", "pods", "pods/exec", "*/exec", "*/token", "userextras/x", "clusterroles", "nodes/proxy", "validatingwebhookconfigurations", "configmaps"},
		"names":     {"", "db", "*"},
	}
	pick := func(list []string, seed, n int) []string {
		var out []string
		for i := range n {
			out = append(out, list[(seed*7+i*3)%len(list)])
		}
		return out
	}
	for seed := range 400 {
		rule := Rule{
			Verbs: pick(values["verbs"], seed, 1+seed%3), APIGroups: pick(values["groups"], seed+1, 1+seed%2),
			Resources: pick(values["resources"], seed+2, 1+seed%3), ResourceNames: pick(values["names"], seed, seed%3),
		}
		rv := reviewRule(rule, scopeLabel)
		want := false
		for _, d := range dangerousRequests {
			probes := []Request{d.req}
			if d.anySubresource {
				for _, r := range rule.Resources {
					if _, sub, ok := cutSlash(r); ok {
						p := d.req
						p.Subresource = sub
						probes = append(probes, p)
					}
				}
			}
			for _, p := range probes {
				names := []string{""}
				if d.naming == anyName {
					names = append(names, rule.ResourceNames...)
				}
				for _, n := range names {
					p.Name = n
					if d.naming == anyName || n == "" {
						want = want || RuleAllows(rule, p)
					}
				}
			}
		}
		// scopedlist beyond the label: covered with a name other than it,
		// where the rule does not already list and watch that resource.
		for _, n := range append([]string{"another/label"}, rule.ResourceNames...) {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					readsAll := RuleAllows(rule, Request{Verb: "list", APIGroup: groupOf(g), Resource: res}) &&
						RuleAllows(rule, Request{Verb: "watch", APIGroup: groupOf(g), Resource: res})
					if n != scopeLabel && !readsAll && RuleAllows(rule, Request{Verb: verbScopedList, APIGroup: groupOf(g), Resource: res, Name: n}) {
						want = true
					}
				}
			}
		}
		if got := len(rv.reasons) > 0; got != want {
			t.Errorf("rule %+v: dangerous = %v, RuleAllows says %v (reasons %v)", rule, got, want, rv.reasons)
		}
		if want && len(rv.triples) == 0 {
			t.Errorf("rule %+v: dangerous without a triple", rule)
		}
	}
}

func cutSlash(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], i+1 < len(s)
		}
	}
	return s, "", false
}

// groupOf turns a rule group into a group a request can have.
func groupOf(g string) string {
	if g == "*" {
		return "any.example"
	}
	return g
}
