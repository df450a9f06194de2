// Package celtext holds what the contracts' CEL renderings share: the
// predicates on a request's resource and an object's fields that
// matchConditions and admission policies use.
package celtext

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceIs is the CEL predicate that the request's resource (any
// subresource) is gvr's group and resource.
func ResourceIs(gvr schema.GroupVersionResource) string {
	return fmt.Sprintf("(request.resource.group == %q && request.resource.resource == %q)", gvr.Group, gvr.Resource)
}

// HasPath is has() for every step of a path below object.
func HasPath(path []string) string {
	terms := make([]string, len(path))
	for i := range path {
		terms[i] = "has(object." + strings.Join(path[:i+1], ".") + ")"
	}
	return strings.Join(terms, " && ")
}
