// This file walks a product custom resource generically: every object at any
// depth, also inside lists, with keys visited in sorted order. It reads:
//
//   - a CredentialsScope holder, an object with a secretClass key and a scope
//     object: scope.services[*] and scope.listenerVolumes[*] must be
//     non-empty strings containing neither "," nor "=" (the CRD pattern
//     ^[^,=]+$), because operator-go renders them into the scope annotation
//     unescaped (RenderScope) and a "," would splice in extra scopes;
//   - any object with a volumeClaimTemplate key (podOverrides can carry
//     ephemeral volumes): volumeClaimTemplate.metadata.annotations, checked as
//     in annotations.go.
//
// Values of an unexpected type are skipped. Containers nested deeper than
// maxWalkDepth are not walked: no kubedoop CRD nests a CredentialsScope or a
// PVC template anywhere near that deep (a typed CRD schema fixes the depth at
// which an operator reads them), and the bound keeps hostile input from
// exhausting the stack.
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
// enters; the object itself is level 1.
const maxWalkDepth = 64

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
	// The root has no path: field.Path's Child on a nil path starts one, so
	// the object's own fields read "spec...", not ".spec...".
	walkObject(nil, obj, 1, &findings)
	return findings
}

// walkValue walks v, found at path at the given depth, if it is an object or
// a list.
func walkValue(path *field.Path, v any, depth int, findings *[]policies.Finding) {
	if depth > maxWalkDepth {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		walkObject(path, v, depth, findings)
	case []any:
		for i, item := range v {
			walkValue(path.Index(i), item, depth+1, findings)
		}
	}
}

func walkObject(path *field.Path, obj map[string]any, depth int, findings *[]policies.Finding) {
	*findings = append(*findings, checkCredentialsScope(path, obj)...)
	if annotations := fields.StringMap(obj, "volumeClaimTemplate", "metadata", "annotations"); annotations != nil {
		*findings = append(*findings, checkAnnotations(path.Child("volumeClaimTemplate", "metadata", "annotations"), annotations)...)
	}
	// Collected by hand: slices.Sorted(maps.Keys(obj)) allocates several
	// times as much on this path.
	keys := make([]string, 0, len(obj))
	for key := range obj {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		walkValue(path.Child(key), obj[key], depth+1, findings)
	}
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
