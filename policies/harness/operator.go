// This file checks what the harnessed operator runs as. It reads
// spec.operator.namespace and spec.operator.serviceAccounts[*], and allows:
//
//   - namespace: a namespace name (DNS-1123 label), required, because every
//     harness claims something in it;
//   - serviceAccounts: service account names (DNS-1123 subdomains); an
//     empty or missing list claims the whole namespace;
//   - no claim that clashes with another harness's
//     (State.HarnessesClaiming): the same service account, or a whole
//     namespace against any claim in it.
package harness

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

var (
	pathNamespace       = field.NewPath("spec", "operator", "namespace")
	pathServiceAccounts = field.NewPath("spec", "operator", "serviceAccounts")
)

func (r *review) checkOperator(obj map[string]any) {
	namespace, _ := fields.String(obj, "spec", "operator", "namespace")
	if namespace == "" || len(validation.IsDNS1123Label(namespace)) != 0 {
		r.findings = append(r.findings, policies.Denial(HarnessOperatorInvalid, pathNamespace, namespace,
			"operator.namespace must name the operator's namespace (a lowercase DNS-1123 label)"))
		return
	}
	accounts, _ := fields.Slice(obj, "spec", "operator", "serviceAccounts")
	if len(accounts) == 0 {
		r.checkClaim(pathServiceAccounts, namespace, "")
		return
	}
	seen := make(map[string]bool, len(accounts))
	for i, item := range accounts {
		account, _ := item.(string)
		path := pathServiceAccounts.Index(i)
		if account == "" || len(validation.IsDNS1123Subdomain(account)) != 0 {
			r.findings = append(r.findings, policies.Denial(HarnessOperatorInvalid, path, account,
				"a service account name is a lowercase DNS-1123 subdomain"))
			continue
		}
		if seen[account] {
			continue
		}
		seen[account] = true
		r.checkClaim(path, namespace, account)
	}
}

// checkClaim reports the harnesses whose claim clashes with (namespace,
// account); an empty account is the whole namespace.
func (r *review) checkClaim(path *field.Path, namespace, account string) {
	if r.unavailable {
		return
	}
	harnesses, err := r.state.HarnessesClaiming(namespace, account)
	if err != nil {
		r.fail(path, viewHarnesses)
		return
	}
	claimed := others(harnesses, r.self)
	if len(claimed) == 0 {
		return
	}
	what := "service account " + account + " in namespace " + namespace
	if account == "" {
		what = "the whole namespace " + namespace + " (no serviceAccounts listed)"
	}
	r.findings = append(r.findings, policies.Denial(HarnessServiceAccountClaimed, path, namespace+"/"+account,
		"%s clashes with the claim of %s %s; an operator identity belongs to one harness",
		what, policies.Plural(len(claimed), "OperatorHarness object"), strings.Join(claimed, ", ")))
}
