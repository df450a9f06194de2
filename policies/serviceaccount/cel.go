package serviceaccount

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/celtext"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// The naming rules as CEL, for the webhook's narrowing and the in-process
// layout (webhooks/render/inprocess.go), from the same Naming the evaluator
// uses.

// CEL is the CEL expression of the ServiceAccount n gives the pods of the
// product that the ownerReference r names: each product's rule, by group
// and kind in a fixed order, else the fallback. The derived rule is CEL's
// only where no hash is needed (the in-process layout leaves longer names to
// the webhook).
func (n Naming) CEL() string {
	rule := func(r Rule) string {
		if r.Kind == Derived {
			return "(r.kind.lowerAscii() + '-' + r.name)"
		}
		var parts []string
		for i, literal := range strings.Split(r.Name, ClusterPlaceholder) {
			if i > 0 {
				parts = append(parts, "r.name")
			}
			if literal != "" {
				parts = append(parts, fmt.Sprintf("%q", literal))
			}
		}
		if len(parts) == 0 {
			return "''"
		}
		return "(" + strings.Join(parts, " + ") + ")"
	}
	products := slices.SortedFunc(maps.Keys(n.Products), func(a, b schema.GroupKind) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind))
	})
	var b strings.Builder
	for _, gk := range products {
		fmt.Fprintf(&b, "(r.apiVersion.startsWith(%q) && r.kind == %q) ? %s : ", gk.Group+"/", gk.Kind, rule(n.Products[gk]))
	}
	b.WriteString(rule(n.Fallback))
	return "(" + b.String() + ")"
}

// ProductControllerCEL is the CEL predicate on an ownerReference r that it
// is a controller reference with a product API group ("false" when no
// group is configured).
func ProductControllerCEL(products policies.ProductSelector) string {
	groups := productGroupTerms(products)
	if len(groups) == 0 {
		return "false"
	}
	return controllerCEL(groups)
}

// controllerCEL is the controller-reference test of r over group terms.
func controllerCEL(groups []string) string {
	return fmt.Sprintf("has(r.controller) && r.controller == true && has(r.apiVersion) && (%s)", strings.Join(groups, " || "))
}

// productGroupTerms are the CEL tests of r.apiVersion for each product
// group suffix: the group is what comes before the first "/" and must be
// longer than the suffix (policies.ProductSelector.Matches).
func productGroupTerms(products policies.ProductSelector) []string {
	var groups []string
	for _, s := range products.GroupSuffixes {
		if s != "" {
			groups = append(groups, fmt.Sprintf("r.apiVersion.matches(%q)", "^[^/]+"+regexp.QuoteMeta(s)+"/"))
		}
	}
	return groups
}

// ActsCEL is SA's narrowing predicate (the matchCondition
// "gatehouse-acts"): SA acts on a product custom resource (its
// podOverrides) and on a Pod or workload whose controller ownerReference has
// a product API group.
func ActsCEL(products policies.ProductSelector) string {
	owned := "false"
	if groups := productGroupTerms(products); len(groups) > 0 {
		owned = fmt.Sprintf("%s && object.metadata.ownerReferences.exists(r, %s)",
			celtext.HasPath([]string{"metadata", "ownerReferences"}), controllerCEL(groups))
	}
	var builtin []string
	for _, k := range workload.Kinds() {
		builtin = append(builtin, celtext.ResourceIs(k.Resource))
	}
	return fmt.Sprintf("(%s) ? (%s) : true", strings.Join(builtin, " || "), owned)
}
