// Package celtext holds what the contracts' CEL renderings share: a Go
// message format as a CEL string expression (so that a message the
// evaluator writes with fmt and the in-process policy writes in CEL is
// written once), and the predicates on a request's resource and an
// object's fields that matchConditions and admission policies use.
package celtext

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Format is the CEL string expression that format (a fmt format with %s,
// %q and %d verbs only) renders with args, each a CEL expression: %s is
// the string arg, %q the string arg in double quotes (unescaped: CEL has no
// %q), %d the integer arg as a string. A verb without its arg, or another
// verb, is kept as text; %% is "%".
func Format(format string, args ...string) string {
	var parts []string
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, strconv.Quote(text.String()))
			text.Reset()
		}
	}
	next := 0
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) && format[i+1] == '%' {
			text.WriteByte('%')
			i++
			continue
		}
		if format[i] != '%' || i+1 == len(format) || next == len(args) {
			text.WriteByte(format[i])
			continue
		}
		switch format[i+1] {
		case 's':
			flush()
			parts = append(parts, args[next])
		case 'q':
			text.WriteByte('"')
			flush()
			parts = append(parts, args[next])
			text.WriteByte('"')
		case 'd':
			flush()
			parts = append(parts, "string("+args[next]+")")
		default:
			text.WriteByte(format[i])
			continue
		}
		next++
		i++
	}
	flush()
	if len(parts) == 0 {
		return `""`
	}
	return strings.Join(parts, " + ")
}

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
