package policies

import "strings"

// DefaultProductGroupSuffix selects kubedoop product custom resources: every
// API group ending in it (hdfs.kubedoop.dev, trino.kubedoop.dev, ...).
const DefaultProductGroupSuffix = ".kubedoop.dev"

// ProductSelector says which API groups hold product custom resources, for
// SCOPE's CR walk and SA's derived-name rules. It is configuration, passed in
// by the caller.
type ProductSelector struct {
	// GroupSuffixes are matched against the end of an API group; a suffix
	// starting with "." never matches the bare domain itself.
	GroupSuffixes []string
}

// DefaultProducts is the selection used when the server configuration names
// none (a new value each call).
func DefaultProducts() ProductSelector {
	return ProductSelector{GroupSuffixes: []string{DefaultProductGroupSuffix}}
}

// Matches reports whether group holds product custom resources.
func (s ProductSelector) Matches(group string) bool {
	for _, suffix := range s.GroupSuffixes {
		if suffix != "" && strings.HasSuffix(group, suffix) && len(group) > len(suffix) {
			return true
		}
	}
	return false
}
