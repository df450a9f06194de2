// This file walks a product custom resource generically: every object at any
// depth, also inside lists, with keys visited in sorted order. It reads:
//
//   - a CredentialsScope holder, an object with a secretClass key and a scope
//     object: scope.services[*] must be Service names and
//     scope.listenerVolumes[*] volume names (names.go), so in particular
//     non-empty strings containing neither "," nor "=" (the CRD pattern
//     ^[^,=]+$), because operator-go renders them into the scope annotation
//     unescaped (RenderScope) and a "," would splice in extra scopes;
//   - any object with a volumeClaimTemplate key (podOverrides can carry
//     ephemeral volumes): volumeClaimTemplate.metadata.annotations, checked as
//     in annotations.go.
//
// Values of an unexpected type are skipped. "Any depth" is any depth the API
// server accepts: it decodes a custom resource's JSON with a nesting limit of
// 10000 levels (k8s.io/apimachinery pkg/util/json.Unmarshal, through
// sigs.k8s.io/json's scanner, maxNestingDepth; docs/secret-scope.md, "Edges").
// The walk is iterative, so it reads every one of those levels without
// exhausting the stack; an object or list nested deeper still (which no
// request the API server decoded can hold) is not entered and denies with
// ScopeWalkLimit at its path, never silently skipped.
package scope

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// maxWalkDepth is how many levels of nested objects and lists the walk
// enters, the object itself being level 1: as many as the API server's JSON
// decoder accepts in a request body.
const maxWalkDepth = 10000

// scopeLists are the CredentialsScope name lists, with the scope entry key
// each name is rendered under and the noun messages use for it.
var scopeLists = []struct {
	field, key, noun string
}{
	{field: "services", key: scopeService, noun: "service"},
	{field: "listenerVolumes", key: scopeListenerVolume, noun: "listener volume"},
}

const msgNameRule = "a scope name may contain neither \",\" nor \"=\""

// walkCustomResource checks every CredentialsScope holder and PVC template
// in obj.
func walkCustomResource(obj map[string]any) []policies.Finding {
	var findings []policies.Finding
	// Depth first, in sorted key order, with an explicit stack: the walk's
	// own depth never grows with the object's. The root has no path:
	// field.Path's Child on a nil path starts one, so the object's own
	// fields read "spec...", not ".spec...".
	type pending struct {
		path  *field.Path
		value any
		depth int
	}
	stack := []pending{{value: obj, depth: 1}}
	var keys []string
	for len(stack) > 0 {
		next := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := next.value.(type) {
		case map[string]any:
			if next.depth > maxWalkDepth {
				findings = append(findings, walkLimit(next.path))
				continue
			}
			findings = append(findings, checkCredentialsScope(next.path, v)...)
			if annotations := fields.StringMap(v, "volumeClaimTemplate", "metadata", "annotations"); annotations != nil {
				findings = append(findings, checkAnnotations(next.path.Child("volumeClaimTemplate", "metadata", "annotations"), annotations)...)
			}
			// Collected by hand: slices.Sorted(maps.Keys(v)) allocates
			// several times as much on this path.
			keys = keys[:0]
			for key := range v {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			// Pushed in reverse, so that they are visited in order.
			for i := len(keys) - 1; i >= 0; i-- {
				if child := v[keys[i]]; fields.IsContainer(child) {
					stack = append(stack, pending{next.path.Child(keys[i]), child, next.depth + 1})
				}
			}
		case []any:
			if next.depth > maxWalkDepth {
				findings = append(findings, walkLimit(next.path))
				continue
			}
			for i := len(v) - 1; i >= 0; i-- {
				if fields.IsContainer(v[i]) {
					stack = append(stack, pending{next.path.Index(i), v[i], next.depth + 1})
				}
			}
		}
	}
	return findings
}

// walkLimit is the finding for an object or list the walk did not enter. It
// is about the request, not the object's content, so it never ratchets.
func walkLimit(path *field.Path) policies.Finding {
	return policies.Unratcheted(ScopeWalkLimit, path,
		"the object nests deeper here than the %d levels the API server accepts, so secret-scope did not read "+
			"what is below; no CredentialsScope or PVC template nested this deep can be checked", maxWalkDepth)
}

// checkCredentialsScope checks the names of obj's scope when obj is a
// CredentialsScope holder.
func checkCredentialsScope(path *field.Path, obj map[string]any) []policies.Finding {
	if _, ok := obj["secretClass"]; !ok {
		return nil
	}
	scope, ok := fields.Map(obj, "scope")
	if !ok {
		return nil
	}
	var findings []policies.Finding
	for _, list := range scopeLists {
		names, _ := fields.Slice(scope, list.field)
		listPath := path.Child("scope", list.field)
		for i, name := range names {
			if f, bad := checkScopeName(listPath.Index(i), list.key, list.noun, name); bad {
				findings = append(findings, f)
			}
		}
	}
	return findings
}

// checkScopeName checks one name that operator-go renders as key=<name>.
func checkScopeName(path *field.Path, key, noun string, v any) (policies.Finding, bool) {
	name, ok := v.(string)
	switch {
	case !ok:
		return policies.Denial(ScopeNameEmpty, path, "",
			"the %s name must be a non-empty string", noun), true
	case name == "":
		return policies.Denial(ScopeNameEmpty, path, name,
			"the %s name is empty; operator-go would render a %s scope without a name", noun, key), true
	case strings.Contains(name, ","):
		return policies.Denial(ScopeNameHasDelimiter, path, name, "%s", describeSplice(key, name)), true
	case strings.Contains(name, "="):
		return policies.Denial(ScopeNameHasDelimiter, path, name,
			"the %s name contains \"=\", so secret-operator would read only the text before it and resolve a different %s; %s",
			noun, noun, msgNameRule), true
	case key == scopeService && !validServiceName(name):
		return policies.Denial(ScopeServiceNameInvalid, path, name,
			"the service name is not a Service name; secret-operator would put into the certificate %s; %s",
			describeServiceSAN(name), msgServiceNameRule), true
	case key == scopeListenerVolume && !validVolumeName(name):
		return policies.Denial(ScopeListenerVolumeNameInvalid, path, name,
			"the listener volume name is not a volume name; %s; %s", msgListenerVolumeUnmatched, msgVolumeNameRule), true
	}
	return policies.Finding{}, false
}

// describeSplice says which entries a name containing "," adds to the
// rendered scope, by kind only: the name itself is never repeated.
func describeSplice(key, name string) string {
	var rendered string
	if key == scopeService {
		rendered = RenderScope(false, false, []string{name}, nil)
	} else {
		rendered = RenderScope(false, false, nil, []string{name})
	}
	pieces := splitScope(rendered)
	var kinds []string
	widening := false
	for _, p := range pieces[1:] {
		if kind := describeEntry(p); !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		widening = widening || widens(p)
	}
	effect := "which secret-operator would read as separate entries"
	if widening {
		effect = "which widens the certificate"
	}
	// A name with "," always renders as at least two entries.
	return fmt.Sprintf("the name contains \",\" and would render as %d scope entries, splicing in %s, %s; %s",
		len(pieces), joinAnd(kinds), effect, msgNameRule)
}

// joinAnd joins phrases as "a", "a and b", "a, b and c".
func joinAnd(phrases []string) string {
	switch len(phrases) {
	case 0:
		return ""
	case 1:
		return phrases[0]
	}
	return strings.Join(phrases[:len(phrases)-1], ", ") + " and " + phrases[len(phrases)-1]
}
