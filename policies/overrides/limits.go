// This file holds the overrides engine's parse limits (upstream
// internal/operator/override/parse.go @ 9064e3909e7f8ee96cc3a768b55a08eeb0d53348:
// Parse, parseDocument and checkStructure), refused at admission as the
// engine refuses them when it reads the ConfigMap, each with its own code.
// It reads the length of every data value and the YAML node tree of each
// document, aliases unexpanded (as the engine walks yaml.Node, whose alias
// nodes have no children), and rejects, in the engine's order:
//
//   - the values together over 1 MiB (maxTotalBytes, "total >
//     maxTotalBytes"): OverrideConfigMapTooLarge, and no document is read,
//     as the engine reads none; the API server's own ConfigMap limit
//     (data and binaryData together) keeps a stored ConfigMap inside it;
//   - a key's value over 256 KiB (maxDocumentBytes, "len(raw) >
//     maxDocumentBytes"): OverrideDocumentTooLong; a value that is empty or
//     white space is ignored first, as the engine ignores it;
//   - in a pre-order walk of the node tree, the document node at depth 0
//     and counted as a node: more than 20000 nodes (maxNodes, "nodes >
//     maxNodes"): OverrideDocumentTooManyNodes; a node deeper than 32
//     (maxDepth, "depth > maxDepth"): OverrideDocumentTooDeep; a mapping of
//     more than 1024 keys (maxMappingKeys, "len(n.Content)/2 >
//     maxMappingKeys"): OverrideMappingTooManyKeys. The first one the walk
//     meets is reported, as the engine returns the first;
//   - more than 256 entries in overrides (maxEntries, "len(doc.Overrides) >
//     maxEntries", once apiVersion is known): OverrideTooManyEntries.
//
// Each is about what the engine refuses to read, not about a value: it
// carries no evidence, never ratchets, and ends the check of the document
// (of the ConfigMap, for the total).

package overrides

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The engine's parse limits (upstream parse.go).
const (
	engineMaxTotalBytes    = 1 << 20
	engineMaxDocumentBytes = 256 << 10
	engineMaxEntries       = 256
	engineMaxMappingKeys   = 1024
	engineMaxNodes         = 20000
	engineMaxDepth         = 32
)

// Messages of the engine's parse limits.
const (
	msgConfigMapTooLong = "the values of this ConfigMap hold %d bytes together, more than the %d the overrides engine reads; " +
		"it reads none of them, so no document was checked"
	msgDocumentTooLong = "this key holds %d bytes, more than the %d the overrides engine reads in one document; " +
		"split it across ConfigMap keys"
	msgTooManyNodes = "this document has more than %d YAML nodes, the overrides engine's limit; split it across ConfigMap keys"
	msgEngineDepth  = "this document nests deeper than %d levels, the overrides engine's limit"
	msgTooManyKeys  = "a mapping of this document has %d keys, more than the %d the overrides engine reads in one mapping " +
		"(its duplicate-key check is quadratic); split it"
	msgTooManyEntries = "this document has %d overrides, more than the %d the overrides engine reads in one document; " +
		"split them across ConfigMap keys"
)

// configMapTooLong reports, and returns true, when the values of data
// together are past the engine's limit.
func (w *walker) configMapTooLong(data map[string]string) bool {
	total := 0
	for _, value := range data {
		total += len(value)
	}
	if total <= engineMaxTotalBytes {
		return false
	}
	w.doc, w.docFindings = field.NewPath("data"), 0
	w.limit(OverrideConfigMapTooLarge, w.doc, msgConfigMapTooLong, total, engineMaxTotalBytes)
	return true
}

// documentTooLong reports, and returns true, when one value is past the
// engine's limit.
func (w *walker) documentTooLong(path *field.Path, raw string) bool {
	if len(raw) <= engineMaxDocumentBytes {
		return false
	}
	w.limit(OverrideDocumentTooLong, path, msgDocumentTooLong, len(raw), engineMaxDocumentBytes)
	w.stopped = true
	return true
}

// checkStructure walks the node tree of the document at path, root its
// root node, as the engine's checkStructure walks it, and reports the first
// limit it passes. It returns false, having stopped the document, when one
// is passed.
func (w *walker) checkStructure(path *field.Path, root *node) bool {
	nodes := 1 // the document node, at depth 0
	var visit func(n *node, depth int) bool
	visit = func(n *node, depth int) bool {
		nodes++
		switch {
		case nodes > engineMaxNodes:
			w.limit(OverrideDocumentTooManyNodes, path, msgTooManyNodes, engineMaxNodes)
			return false
		case depth > engineMaxDepth:
			w.limit(OverrideDocumentTooDeep, path, msgEngineDepth, engineMaxDepth)
			return false
		case n.kind == yaml.MappingNode && len(n.content)/2 > engineMaxMappingKeys:
			w.limit(OverrideMappingTooManyKeys, path, msgTooManyKeys, len(n.content)/2, engineMaxMappingKeys)
			return false
		case n.kind == yaml.AliasNode:
			// An alias has no children in the engine's tree.
			return true
		}
		for _, child := range n.content {
			if !visit(child, depth+1) {
				return false
			}
		}
		return true
	}
	if !visit(root, 1) {
		w.stopped = true
		return false
	}
	return true
}

// tooManyEntries reports, and returns true, when the overrides list at
// path, list, has more entries than the engine reads.
func (w *walker) tooManyEntries(path *field.Path, list *node) bool {
	if len(list.content) <= engineMaxEntries {
		return false
	}
	w.limit(OverrideTooManyEntries, path, msgTooManyEntries, len(list.content), engineMaxEntries)
	w.stopped = true
	return true
}
