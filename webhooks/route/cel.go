package route

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// The CEL that the webhook configurations in deploy/ carry: matchConditions
// for what rules cannot say, and the expression of each member of a combined
// endpoint. Intercept (intercept.go) routes the same requests in process.

// matchConditions renders what rules cannot say: product groups by suffix,
// updates by service accounts, updates that change labels, and the one
// object a webhook may watch.
func (in Intercept) matchConditions(opts Options) []admissionregistrationv1.MatchCondition {
	var out []admissionregistrationv1.MatchCondition
	if in.Beyond == ProductResources {
		out = append(out, admissionregistrationv1.MatchCondition{
			Name:       "gatehouse-resources",
			Expression: in.matchConditionExpression(opts.Products),
		})
	}
	if in.Updates.Has(UpdatesByServiceAccounts) {
		out = append(out, admissionregistrationv1.MatchCondition{
			Name:       "gatehouse-updates-by-service-accounts",
			Expression: fmt.Sprintf("request.operation != 'UPDATE' || request.userInfo.username.startsWith(%q)", ServiceAccountUsers),
		})
	}
	if in.Updates.Has(UpdatesChangingLabels) {
		out = append(out, admissionregistrationv1.MatchCondition{
			Name:       "gatehouse-label-changes",
			Expression: labelsChangedExpression,
		})
	}
	if in.Acts != nil {
		out = append(out, admissionregistrationv1.MatchCondition{
			Name:       "gatehouse-acts",
			Expression: in.Acts(opts),
		})
	}
	if in.Object == OverrideConfigMapOnly {
		out = append(out, admissionregistrationv1.MatchCondition{
			Name:       "gatehouse-object",
			Expression: fmt.Sprintf("request.namespace == %q && request.name == %q", opts.Overrides.Namespace, opts.Overrides.ConfigMapName),
		})
	}
	return out
}

// labelsChangedExpression is true for an UPDATE whose labels change; the
// API server sends the whole object on UPDATE of a status subresource too.
const labelsChangedExpression = "request.operation != 'UPDATE' || " +
	"((has(object.metadata) && has(object.metadata.labels)) ? object.metadata.labels : {}) != " +
	"((has(oldObject.metadata) && has(oldObject.metadata.labels)) ? oldObject.metadata.labels : {})"

// matchConditionExpression is the CEL expression that narrows the wildcard
// product rule to product groups and the listed built-in resources.
func (in Intercept) matchConditionExpression(products policies.ProductSelector) string {
	var terms []string
	for _, s := range products.GroupSuffixes {
		terms = append(terms, fmt.Sprintf("request.resource.group.endsWith(%q)", s))
	}
	byGroup := map[string][]string{}
	var groups []string
	for _, r := range in.Resources {
		g := r.GVR.Group
		if _, seen := byGroup[g]; !seen {
			groups = append(groups, g)
		}
		if !slices.Contains(byGroup[g], fmt.Sprintf("%q", r.GVR.Resource)) {
			byGroup[g] = append(byGroup[g], fmt.Sprintf("%q", r.GVR.Resource))
		}
	}
	for _, g := range groups {
		terms = append(terms, fmt.Sprintf("(request.resource.group == %q && request.resource.resource in [%s])", g, strings.Join(byGroup[g], ", ")))
	}
	return strings.Join(terms, " || ")
}

// MemberExpression is placeExpression of m's first placement.
func (m Member) MemberExpression(opts Options) string { return m.placeExpression(m.Places[0], opts) }

// placeExpression is the CEL expression that is true for the requests m's
// own entry for placement p would be sent (its rules and matchConditions;
// namespaces are decided by the server from its namespace cache).
func (m Member) placeExpression(p Placement, opts Options) string {
	in := m.Def.Intercept
	var alts []string
	for _, r := range in.Resources {
		alts = append(alts, fmt.Sprintf("(request.resource.group == %q && request.resource.resource == %q && %s && %s)",
			r.GVR.Group, r.GVR.Resource, subresourceIs(r.Subresource), operationsIn(r.operations(in))))
	}
	if in.Beyond.AllGroups() {
		subresources := subresourceIs("")
		if in.Beyond == EveryResourceAndStatus {
			subresources = "(" + subresources + " || " + subresourceIs("status") + ")"
		}
		alts = append(alts, fmt.Sprintf("(%s && %s)", subresources, operationsIn(in.Operations)))
	}
	if in.Beyond == ProductResources {
		var suffixes []string
		for _, s := range opts.Products.GroupSuffixes {
			suffixes = append(suffixes, fmt.Sprintf("request.resource.group.endsWith(%q)", s))
		}
		if len(suffixes) > 0 {
			alts = append(alts, fmt.Sprintf("(%s && %s && (%s))", subresourceIs(""), operationsIn(in.Operations), strings.Join(suffixes, " || ")))
		}
	}
	expr := "false"
	if len(alts) > 0 {
		expr = "(" + strings.Join(alts, " || ") + ")"
	}
	for _, c := range in.matchConditions(opts) {
		if c.Name == "gatehouse-resources" {
			continue // the product groups and resources are in alts
		}
		expr += " && (" + c.Expression + ")"
	}
	switch p.scope {
	case admissionregistrationv1.NamespacedScope:
		expr += " && " + namespacedRequestExpression
	case admissionregistrationv1.ClusterScope:
		expr += " && !" + namespacedRequestExpression
	}
	switch p.namespaceObjects {
	case onlyNamespaces:
		expr += " && " + ResourceIs(namespaces)
	case withoutNamespaces:
		expr += " && !" + ResourceIs(namespaces)
	}
	return expr
}

// namespacedRequestExpression is namespacedRequest in CEL: the rules' scope
// of a member, which the group's rules (a union) no longer carry.
var namespacedRequestExpression = fmt.Sprintf("(has(request.namespace) && request.namespace != \"\" && !%s)",
	ResourceIs(Resource{GVR: namespaceFinalize.GVR}))

// subresourceIs tests request.subResource, which the API server leaves out
// of the request (rather than empty) for the main resource.
func subresourceIs(sub string) string {
	if sub == "" {
		return "!has(request.subResource)"
	}
	return fmt.Sprintf("(has(request.subResource) && request.subResource == %q)", sub)
}

func operationsIn(ops []admissionregistrationv1.OperationType) string {
	quoted := make([]string, len(ops))
	for i, op := range ops {
		quoted[i] = fmt.Sprintf("%q", string(op))
	}
	return "request.operation in [" + strings.Join(quoted, ", ") + "]"
}
