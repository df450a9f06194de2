// This file holds the YAML walk that every other file builds on, and the
// checks that apply to every mapping and value of a document, wherever it
// sits. It reads YAML nodes and rejects, at any depth:
//
//   - a YAML merge key (<<, also quoted, as the operator does);
//   - a key given twice in one mapping;
//   - a key that is null or not a scalar;
//   - a key starting with "$", a strategic-merge directive;
//   - once aliases are expanded (the engine's own limits, on the tree as
//     written, are limits.go's), nesting deeper than maxDepth
//     (OverrideDocumentTooDeep), a document
//     whose aliases expand to more nodes than its walk budget allows
//     (OverrideDocumentTooLarge), and one with more than maxFindings findings
//     (OverrideTooManyFindings). Each of these limits denies with its own
//     code and never ratchets on UPDATE: it says what the walk could not see,
//     not what a value is.
//
// Aliases are followed: they are plain YAML and the operator's decoder
// expands them, so the walk checks the expanded document.

package overrides

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

const (
	// maxDepth bounds how deeply a document may nest. The deepest field an
	// override can reach (a matchExpressions value of a pod anti-affinity
	// term) sits at depth 17; the bound also ends alias cycles.
	maxDepth = 100
	// maxVisits bounds the nodes one Validate call walks (and renders as
	// evidence). A 1 MiB ConfigMap holds well under a million nodes.
	maxVisits = 1 << 22
	// visitsPerByte and visitsPerDocument bound the nodes one document may
	// walk: a node takes at least two bytes of YAML, so only alias expansion
	// (a "billion laughs" document) reaches this.
	visitsPerByte     = 8
	visitsPerDocument = 1024
	// maxFindings bounds the findings of one document. No document a person
	// writes comes near it; only aliases multiply findings that far.
	maxFindings = 1000
	// mergeKey is the YAML merge key.
	mergeKey = "<<"
	// directivePrefix starts every strategic-merge directive.
	directivePrefix = "$"
)

// YAML tags (short form) a value may carry.
const (
	tagNull      = "!!null"
	tagString    = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagMerge     = "!!merge"
	tagTimestamp = "!!timestamp"
)

// Messages of the checks in this file.
const (
	msgMergeKey = "YAML merge keys (<<) are not accepted: they pull content in from elsewhere in the document; " +
		"write the mapping out in full"
	msgDuplicateKey = "this key appears more than once in the same mapping, and YAML readers disagree about which value wins; " +
		"keep one"
	msgKeyNotString = "mapping keys must be plain strings"
	msgNull         = "explicit null is not accepted: strategic merge treats null as deletion, which cannot remove " +
		"operator-managed content; omit the field instead"
	msgDirective = "strategic-merge directives ($-prefixed keys such as $patch, $retainKeys, $setElementOrder) are not accepted: " +
		"they can delete or reorder operator-managed content"
	msgTooDeep           = "this document nests deeper than 100 levels, more than any override needs"
	msgTooLarge          = "this document is too large to check once its YAML aliases are expanded; write the repeated parts out"
	msgTooMany           = "this document has more than 1000 problems; the rest were not checked, fix these first"
	msgConfigMapTooLarge = "the documents of this ConfigMap are too large to check together once their YAML aliases are expanded; " +
		"this one was not checked"
)

// walker accumulates the findings of one Validate call. The per-document
// fields are reset by document().
type walker struct {
	table    *Table
	live     Live
	findings []policies.Finding
	// entries are the entries of every document whose component and kind
	// are known, in key and document order, for the checks across entries
	// (compose.go).
	entries []*entry
	// positions is the walk of claimsOf.
	positions positionWalk
	// steps are the keys and indexes below the place being walked.
	steps []step
	// budget is what is left of maxVisits.
	budget int
	// docBudget is what the current document may still walk.
	docBudget int

	// doc is the path of the current document, data[<key>].
	doc *field.Path
	// depth is the nesting depth of the node being walked.
	depth int
	// stopped is set once the current document was found too deep or too
	// large, or has too many findings; it is reported once and walked no
	// further.
	stopped bool
	// docFindings counts the findings of the current document.
	docFindings int
}

func (w *walker) deny(code policies.Code, path *field.Path, evidence string, format string, args ...any) {
	if w.count() {
		w.findings = append(w.findings, policies.Denial(code, path, evidence, format, args...))
	}
}

func (w *walker) warn(code policies.Code, path *field.Path, evidence string, format string, args ...any) {
	if w.count() {
		w.findings = append(w.findings, policies.Warning(code, path, evidence, format, args...))
	}
}

// count counts a finding of the current document and reports whether it is
// to be kept: past maxFindings the document is stopped instead, so that
// aliases cannot multiply findings beyond what a document could hold.
func (w *walker) count() bool {
	if w.docFindings == maxFindings {
		w.docFindings++
		w.stopped = true
		w.findings = append(w.findings, policies.Unratcheted(OverrideTooManyFindings, w.doc, msgTooMany))
		return false
	}
	if w.docFindings > maxFindings {
		return false
	}
	w.docFindings++
	return true
}

// enter returns n with an alias followed, charging the walk budget. It
// returns false, having reported why once per document, when the document is
// too large or too deep to walk further.
func (w *walker) enter(n *node) (*node, bool) {
	if w.stopped || n == nil {
		return nil, false
	}
	if !w.charge() {
		return nil, false
	}
	if w.depth > maxDepth {
		w.stop(OverrideDocumentTooDeep, msgTooDeep)
		return nil, false
	}
	return deref(n), true
}

// charge charges one node to the budgets, reporting false, and stopping
// the document, when one of them is spent.
func (w *walker) charge() bool {
	switch {
	case w.stopped:
		return false
	case w.docBudget <= 0:
		w.stop(OverrideDocumentTooLarge, msgTooLarge)
		return false
	case w.budget <= 0:
		w.stop(OverrideDocumentTooLarge, msgConfigMapTooLarge)
		return false
	}
	w.docBudget--
	w.budget--
	return true
}

// stop ends the walk of the current document at a limit. The finding is
// about what the walk could not see, not about a value, so it never ratchets:
// an UPDATE that keeps the document past the limit is denied as a CREATE is.
func (w *walker) stop(code policies.Code, msg string) {
	w.limit(code, w.doc, "%s", msg)
	w.stopped = true
}

// limit reports a finding about the review rather than a value of the
// document (a walk or parse limit, a parse failure): it carries no evidence
// and never ratchets on UPDATE.
func (w *walker) limit(code policies.Code, path *field.Path, format string, args ...any) {
	if w.count() {
		w.findings = append(w.findings, policies.Unratcheted(code, path, format, args...))
	}
}

// descend runs fn one level deeper.
func (w *walker) descend(fn func()) {
	w.depth++
	fn()
	w.depth--
}

// pairs calls fn for every key of mapping n (at p) in document order,
// after reporting, and skipping, the keys no document may hold anywhere:
// merge keys, repeated keys, keys that are null or not scalars, and
// directives. keyed renders key paths as path[key] (for maps whose keys are
// data, such as labels) instead of path.key.
func (w *walker) pairs(n *node, p place, keyed bool, fn func(key string, value *node)) {
	var seen map[string]bool
	for i := 0; i+1 < len(n.content); i += 2 {
		keyNode, value := deref(n.content[i]), n.content[i+1]
		switch {
		case keyNode.kind != yaml.ScalarNode:
			w.deny(OverrideTypeInvalid, w.path(p), w.evidence(keyNode), msgKeyNotString)
			continue
		case keyNode.tag == tagNull:
			w.deny(OverrideNull, w.path(p), "", msgNull)
			continue
		}
		key := keyNode.value
		switch {
		case keyNode.tag == tagMerge || key == mergeKey:
			w.deny(OverrideYAMLMergeKey, w.path(p).Key(mergeKey), w.evidence(value), msgMergeKey)
			continue
		case isDuplicate(n, i, key, &seen):
			w.deny(OverrideDuplicateKey, w.path(w.child(p, key, keyed)), w.evidence(value), msgDuplicateKey)
			continue
		case strings.HasPrefix(key, directivePrefix):
			w.deny(OverrideDirective, w.path(w.child(p, key, keyed)), w.evidence(value), msgDirective)
			continue
		}
		fn(key, value)
	}
}

// place is where the walk is in a document: a built path and, below it,
// the first depth steps of the walker's stack of keys and indexes. The walk
// of a patch visits hundreds of keys and finds few problems, so a path is
// built only for a finding (walker.path). A place is valid while the walk
// is at or below it: the steps below a place are rewritten as the walk
// moves on to its next key or item.
type place struct {
	base  *field.Path
	depth int
}

// step is a key or an index (at least 0) below a place.
type step struct {
	key   string
	index int
	keyed bool
}

// placeOf is the place of path itself.
func placeOf(path *field.Path) place { return place{base: path} }

// child is the place of key below p, rendered as pathOf renders it.
func (w *walker) child(p place, key string, keyed bool) place {
	w.steps = append(w.steps[:p.depth], step{key: key, index: -1, keyed: keyed})
	return place{base: p.base, depth: p.depth + 1}
}

// item is the place of the i-th item of the list at p.
func (w *walker) item(p place, i int) place {
	w.steps = append(w.steps[:p.depth], step{index: i})
	return place{base: p.base, depth: p.depth + 1}
}

// path builds the path of p.
func (w *walker) path(p place) *field.Path {
	path := p.base
	for _, s := range w.steps[:p.depth] {
		if s.index >= 0 {
			path = path.Index(s.index)
		} else {
			path = pathOf(path, s.key, s.keyed)
		}
	}
	return path
}

// isDuplicate reports whether the key at content[i] of mapping n repeats an
// earlier key. Small mappings are scanned; large ones use seen.
func isDuplicate(n *node, i int, key string, seen *map[string]bool) bool {
	const scanLimit = 32
	if len(n.content) <= 2*scanLimit {
		for j := 0; j < i; j += 2 {
			if k := deref(n.content[j]); k.kind == yaml.ScalarNode && k.value == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, len(n.content)/2)
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

// pathOf is the path of key below path: path[key] when keyed or when the key
// is not shaped like a field name, path.key otherwise.
func pathOf(path *field.Path, key string, keyed bool) *field.Path {
	if keyed || !isFieldName(key) {
		return path.Key(key)
	}
	return path.Child(key)
}

// isFieldName reports whether key looks like a Kubernetes field name (or a
// directive), so that it reads well as a path segment.
func isFieldName(key string) bool {
	if key == "" {
		return false
	}
	for i, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '$' && i == 0:
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// deref follows an alias. Anchors are never aliases themselves, so one step
// is enough.
func deref(n *node) *node {
	if n != nil && n.kind == yaml.AliasNode && len(n.content) == 1 {
		return n.content[0]
	}
	return n
}

// isNull reports whether n (an entered node) is an explicit null: null, ~,
// an empty value, or a !!null tag.
func isNull(n *node) bool {
	return n.kind == yaml.ScalarNode && n.tag == tagNull
}

// scalarString returns the text of a scalar that a string field accepts:
// the operator decodes any plain scalar into a string field as written.
func scalarString(n *node) (string, bool) {
	if n.kind != yaml.ScalarNode {
		return "", false
	}
	switch n.tag {
	case tagString, tagInt, tagFloat, tagBool, tagTimestamp:
		return n.value, true
	}
	return "", false
}

// isString reports whether n is a string scalar.
func isString(n *node) bool {
	return n.kind == yaml.ScalarNode && n.tag == tagString
}

// isNumber reports whether n is a finite number.
func isNumber(n *node) bool {
	if n.kind != yaml.ScalarNode {
		return false
	}
	switch n.tag {
	case tagInt:
		return true
	case tagFloat:
		return isFinite(n.value)
	}
	return false
}

// isFinite reports whether a YAML float is neither infinite nor NaN, which
// JSON (and so the operator's merge) cannot represent.
func isFinite(value string) bool {
	v := strings.ToLower(value)
	return !strings.Contains(v, "inf") && !strings.Contains(v, "nan")
}

// lookup returns the value of key in mapping n, following aliases, or nil.
// It is for reading a document after it was walked: the first of repeated
// keys wins, and merge keys are not expanded (both are denied anyway).
func lookup(n *node, keys ...string) *node {
	for _, key := range keys {
		n = deref(n)
		if n == nil || n.kind != yaml.MappingNode {
			return nil
		}
		var value *node
		for i := 0; i+1 < len(n.content); i += 2 {
			if k := deref(n.content[i]); k.kind == yaml.ScalarNode && k.value == key && k.tag != tagMerge {
				value = n.content[i+1]
				break
			}
		}
		n = value
	}
	return deref(n)
}

// kindName names a node's YAML type for messages.
func kindName(n *node) string {
	switch n.kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a single value"
	}
}

// evidence renders a value for Finding.Evidence, which hashes it: every
// scalar with its resolved tag, mappings and lists in document order,
// aliases expanded. Rendering charges the walk budget like walking does, so
// evidence of an alias-expanded value cannot outgrow it; once the document
// is stopped or its findings are capped, evidence is not rendered. Evidence
// is never cut short silently: a value nesting past maxDepth, or past the
// budget, stops the document with a limit finding that never ratchets.
func (w *walker) evidence(n *node) string {
	if w.stopped || w.docFindings >= maxFindings {
		return ""
	}
	return string(appendCanonical(nil, n, "...", func(n *node, depth int) bool {
		if n != nil && w.depth+depth > maxDepth && !w.stopped {
			// Evidence that stopped short of the value would let an UPDATE
			// that changes only what lies past the limit ratchet: the
			// document is too deep, and that finding never ratchets.
			w.stop(OverrideDocumentTooDeep, msgTooDeep)
		}
		return n != nil && !w.stopped && w.charge()
	}))
}

// appendCanonical appends n to b: every scalar with its resolved tag,
// mappings and lists in document order, aliases expanded. Before each node
// (at its depth below n) enter decides whether to write it; a node it
// refuses is written as refused.
func appendCanonical(b []byte, n *node, refused string, enter func(n *node, depth int) bool) []byte {
	return appendCanonicalAt(b, n, 0, refused, enter)
}

func appendCanonicalAt(b []byte, n *node, depth int, refused string, enter func(n *node, depth int) bool) []byte {
	n = deref(n)
	if !enter(n, depth) {
		return append(b, refused...)
	}
	switch n.kind {
	case yaml.ScalarNode:
		b = append(b, n.tag...)
		b = append(b, ':')
		b = strconv.AppendQuote(b, n.value)
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.content); i += 2 {
			b = appendCanonicalAt(b, n.content[i], depth+1, refused, enter)
			b = append(b, '=')
			b = appendCanonicalAt(b, n.content[i+1], depth+1, refused, enter)
			b = append(b, ',')
		}
		b = append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for _, item := range n.content {
			b = appendCanonicalAt(b, item, depth+1, refused, enter)
			b = append(b, ',')
		}
		b = append(b, ']')
	}
	return b
}
