// This file reads the dependency references of a
// CustomResourceDefinitionSource in its two shapes. It reads spec.provides,
// spec.manages and spec.requires:
//
//   - helmetica's (upstream chrysopoeia): each a list of
//     {dependencyGroup: {name, as}}, "as" optional;
//   - the string shape: spec.provides a group name, spec.manages "<group>" or
//     "<group> as <alias>" (ParseManages), spec.requires a list as above.
//
// Which shape a field has is decided per field by its JSON type.
//
// Allows: anything; a field of another type, or a list entry that is not an
// object, reads as a reference with an empty name (which the review
// denies).
package dependencygroup

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// sourceRef is one dependency reference of a source.
type sourceRef struct {
	// namePath is where the group name is; aliasPath where the alias is
	// (both spec.manages for a manages string).
	namePath, aliasPath *field.Path
	name, alias         string
	// hasAlias: "as" is set (even to "", which upstream reads as unset);
	// aliasNotString: it is set to something other than a string.
	hasAlias, aliasNotString bool
	// seed: the string shape.
	seed bool
}

// scope is the name the scope label is built from: the alias, else the
// group.
func (r sourceRef) scope() string {
	if r.alias != "" {
		return r.alias
	}
	return r.name
}

// sourceRefs reads spec.<key>. present says whether the field states
// anything (a string, or a non-empty list); err is ParseManages' error for a
// seed manages string that does not parse.
func sourceRefs(source map[string]any, key string) (refs []sourceRef, present bool, err error) {
	spec, _ := fields.Map(source, "spec")
	path := field.NewPath("spec", key)
	switch v := spec[key].(type) {
	case string:
		if key == "requires" {
			// requires is a list in both shapes.
			return nil, false, nil
		}
		r := sourceRef{namePath: path, aliasPath: path, name: v, seed: true}
		if key == "manages" {
			group, alias, perr := ParseManages(v)
			if perr != nil {
				return nil, true, perr
			}
			r.name, r.alias, r.hasAlias = group, alias, alias != ""
		}
		return []sourceRef{r}, true, nil
	case []any:
		for i, item := range v {
			entry, _ := item.(map[string]any)
			group, _ := fields.Map(entry, "dependencyGroup")
			r := sourceRef{
				namePath:  path.Index(i).Child("dependencyGroup", "name"),
				aliasPath: path.Index(i).Child("dependencyGroup", "as"),
			}
			r.name, _ = fields.String(group, "name")
			if as, set := group["as"]; set && as != nil {
				r.hasAlias = true
				r.alias, r.aliasNotString = as.(string)
				r.aliasNotString = !r.aliasNotString
			}
			refs = append(refs, r)
		}
		return refs, len(refs) > 0, nil
	}
	return nil, false, nil
}
