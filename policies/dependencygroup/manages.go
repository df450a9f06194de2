// This file holds the grammar of a CustomResourceDefinitionSource's
// spec.manages and the scope label every group name or scope implies. It
// allows:
//
//   - "<group>": group is a DependencyGroup name, a DNS-1123 subdomain;
//   - "<group> as <alias>": the words separated by exactly one space each,
//     alias a DNS-1123 label.
//
// Anything else is invalid: empty, leading or trailing white space, doubled
// spaces, "a as", "a as b as c".
package dependencygroup

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ScopeLabelPrefix is the prefix of the scope label a group or alias implies
// (upstream, helmetica).
const ScopeLabelPrefix = "requires.helmetica.io/"

// Errors of ParseManages. They never carry the value parsed, so that a
// finding can use them as its message.
var (
	ErrManagesEmpty      = errors.New(`manages is empty; write "<group>" or "<group> as <alias>"`)
	ErrManagesWhiteSpace = errors.New("manages has leading or trailing white space")
	ErrManagesForm       = errors.New(`manages is "<group>" or "<group> as <alias>", words separated by single spaces`)
	ErrManagesGroup      = errors.New("the group of manages is not a DependencyGroup name (a lowercase DNS-1123 subdomain)")
	ErrManagesAlias      = errors.New("the alias of manages is not a lowercase DNS-1123 label")
)

// ParseManages splits "<group>" or "<group> as <alias>". Alias is "" for the
// first form. The scope the source manages is alias when set, else group.
func ParseManages(s string) (group, alias string, err error) {
	if s == "" {
		return "", "", ErrManagesEmpty
	}
	if strings.TrimSpace(s) != s {
		return "", "", ErrManagesWhiteSpace
	}
	words := strings.Split(s, " ")
	switch {
	case len(words) == 1:
		group = words[0]
	case len(words) == 3 && words[1] == "as":
		group, alias = words[0], words[2]
	default:
		return "", "", ErrManagesForm
	}
	if !ValidGroupName(group) {
		return "", "", ErrManagesGroup
	}
	if alias != "" && len(validation.IsDNS1123Label(alias)) != 0 {
		return "", "", ErrManagesAlias
	}
	return group, alias, nil
}

// ValidGroupName reports whether name can name a DependencyGroup (a
// cluster-scoped object): a lowercase DNS-1123 subdomain.
func ValidGroupName(name string) bool {
	return name != "" && len(validation.IsDNS1123Subdomain(name)) == 0
}

// ScopeLabel returns the label key requires.helmetica.io/<scope> and whether
// it is a valid label key.
func ScopeLabel(scope string) (string, bool) {
	key := ScopeLabelPrefix + scope
	return key, len(validation.IsQualifiedName(key)) == 0
}
