package scopelabel

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/celtext"
)

// serviceAccountUsers is the user name prefix of every service account.
const serviceAccountUsers = "system:serviceaccount:"

// namespacesResource is the Namespace resource, whose own requests LABEL
// takes when the namespace labels are managed.
var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// ActsCEL is LABEL's narrowing predicate (the matchCondition
// "gatehouse-acts"): its CREATE rule acts on a namespaced object (its
// namespace may carry a scope label; namespaced is the CEL test of a
// namespaced request, which the webhook's routing owns) and on a
// cluster-scoped object a service account creates (it may be a harnessed
// one); a Namespace is cluster-scoped, though its request names it as its
// namespace. With managed namespace labels it also acts on every CREATE and
// UPDATE of a Namespace, which may need a managed label.
func ActsCEL(namespaced string, managedSelections bool) string {
	acts := fmt.Sprintf("request.operation == \"CREATE\" && (%s || request.userInfo.username.startsWith(%q))",
		namespaced, serviceAccountUsers)
	if managedSelections {
		acts = fmt.Sprintf("(%s) || %s", acts, celtext.ResourceIs(namespacesResource))
	}
	return acts
}
