// Whether a harness's pods are guarded while gatehouse is unavailable.
//
// Reads, in an OperatorHarness: spec.operator.injectProxyConfiguration and
// spec.operator.namespace; and the labels of that namespace. Allows:
// anything; warns (ProxyNamespaceFailsOpen) when the namespace lacks the
// label under which harness-proxy fails closed.

package proxy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// ProxyNamespaceFailsOpen: the harnessed operator's namespace does not carry
// the label under which harness-proxy fails closed, so a pod created there
// while gatehouse is unavailable starts without the harness proxy.
const ProxyNamespaceFailsOpen policies.Code = "ProxyNamespaceFailsOpen"

// Namespaces answers a namespace's labels: none, without error, for one
// that does not exist yet.
type Namespaces interface {
	NamespaceLabels(namespace string) (map[string]string, error)
}

// FailOpenWarning warns when harness h injects the proxy into a namespace
// whose labels lack failClosedLabel (a namespace that does not exist yet
// lacks it too). It is advice: when namespaces cannot answer it says
// nothing.
func FailOpenWarning(h map[string]any, namespaces Namespaces, failClosedLabel string) []policies.Finding {
	inject, _ := fields.Bool(h, "spec", "operator", "injectProxyConfiguration")
	namespace, _ := fields.String(h, "spec", "operator", "namespace")
	if !inject || namespace == "" {
		return nil
	}
	labels, err := namespaces.NamespaceLabels(namespace)
	if err != nil {
		return nil
	}
	if _, ok := labels[failClosedLabel]; ok {
		return nil
	}
	return []policies.Finding{policies.Warning(ProxyNamespaceFailsOpen, field.NewPath("spec", "operator", "namespace"), "",
		"namespace %s does not carry the label %s, so a pod created there while gatehouse is unavailable starts without "+
			"the harness proxy; label the namespace", namespace, failClosedLabel)}
}
