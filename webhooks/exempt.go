package webhooks

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// DecisionExempt is the decision of a member on an exempt request.
const DecisionExempt = "exempt"

// exempt reports whether req is exempt: by its requester, or by the name or
// labels of its namespace as the API server's namespaceSelector sees them;
// a Namespace's own request (of any subresource) by the Namespace's labels,
// old and new, as the objectSelector of its entries sees them: exempt only
// when both are. The namespace's labels are read only when an exemption
// names labels; when they cannot be read the request is judged, as it was
// sent.
func (c *chain) exempt(req *admission.Request, ns *namespaceView) bool {
	o := &c.opts
	if o.ExemptRequester(req) {
		return true
	}
	if req.Namespace == "" || (!route.NamespacedRequest(req) && !route.IsNamespace(req.Resource.Group, req.Resource.Resource)) {
		return false
	}
	if slices.Contains(o.ConfiguredExemptNamespaces(), req.Namespace) {
		return true
	}
	if len(o.Exemptions.NamespaceLabels) == 0 {
		return false
	}
	if route.IsNamespace(req.Resource.Group, req.Resource.Resource) {
		labels, oldLabels, hasOld := route.NamespaceObjectLabels(req)
		return o.ExemptLabels(labels) && (!hasOld || o.ExemptLabels(oldLabels))
	}
	labels, err := ns.labels()
	if err != nil {
		return false
	}
	return o.ExemptLabels(labels)
}
