// Whether a harness's pods can be injected at all.
//
// Reads, in an OperatorHarness: spec.operator.injectProxyConfiguration and
// spec.operator.namespace; and whether that namespace is exempt from
// gatehouse's webhooks. Denies (ProxyNamespaceExempt) a harness that
// injects the proxy into an exempt namespace: harness-proxy is never sent
// the pods there, so the proxy is never injected and the operator talks to
// the API server with its own rights. Denies (StateUnavailable) when the
// exemption cannot be decided.

package proxy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// ProxyNamespaceExempt: the harness injects the proxy into a namespace that
// gatehouse's webhooks never judge, so no pod there is ever injected.
const ProxyNamespaceExempt policies.Code = "ProxyNamespaceExempt"

// Exemptions says whether gatehouse's webhooks leave out the objects of a
// namespace, and why, in words naming no value ("by name", "by the label
// <key>"). An error means it cannot tell.
type Exemptions interface {
	NamespaceExempt(namespace string) (exempt bool, why string, err error)
}

var pathOperatorNamespace = field.NewPath("spec", "operator", "namespace")

// ExemptNamespace denies harness h when it injects the proxy into an
// exempt namespace. The finding's evidence is the namespace, so a harness
// stored before its namespace became exempt keeps being editable (its
// UPDATEs ratchet) until the namespace changes.
func ExemptNamespace(h map[string]any, exemptions Exemptions) []policies.Finding {
	inject, _ := fields.Bool(h, "spec", "operator", "injectProxyConfiguration")
	namespace, _ := fields.String(h, "spec", "operator", "namespace")
	if !inject || namespace == "" {
		return nil
	}
	exempt, why, err := exemptions.NamespaceExempt(namespace)
	if err != nil {
		return []policies.Finding{policies.Unratcheted(policies.StateUnavailable, pathOperatorNamespace,
			"the webhook's view of namespaces is not available (cache not synced or failed), so whether namespace %s "+
				"is exempt from gatehouse's webhooks is unknown; retry later", namespace)}
	}
	if !exempt {
		return nil
	}
	return []policies.Finding{policies.Denial(ProxyNamespaceExempt, pathOperatorNamespace, namespace,
		"namespace %s is exempt from gatehouse's webhooks (%s), so harness-proxy is never sent its pods and the proxy is "+
			"never injected: the operator would talk to the API server with its own rights; run the operator in a "+
			"namespace that is not exempt, or take this one out of the exemptions", namespace, why)}
}
