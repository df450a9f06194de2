package overrides

// Documents at and past the overrides engine's parse limits (upstream
// internal/operator/override/parse.go @ 9064e3909e7f8ee96cc3a768b55a08eeb0d53348,
// Parse and checkStructure; parse_test.go there builds its own documents of
// this shape: one mapping of annotation keys, a list of entries). The
// documents here are written for gatehouse; their node counts and depths are
// measured as the engine measures them, on yaml/v3's node tree (engineShape),
// not by the code under test.

import (
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// engineShape is the engine's measure of a document: its nodes, its
// deepest node and its widest mapping, in a pre-order walk of yaml/v3's tree
// from the document node at depth 0 (aliases have no children there).
func engineShape(tb testing.TB, doc string) (nodes, depth, keys int) {
	tb.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		tb.Fatalf("not YAML: %v", err)
	}
	var walk func(n *yaml.Node, d int)
	walk = func(n *yaml.Node, d int) {
		nodes++
		depth = max(depth, d)
		if n.Kind == yaml.MappingNode {
			keys = max(keys, len(n.Content)/2)
		}
		for _, c := range n.Content {
			walk(c, d+1)
		}
	}
	walk(&root, 0)
	return nodes, depth, keys
}

// annotationsDocument is one net entry whose patch sets n annotations.
func annotationsDocument(n int) string {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n- component: net\n  kind: DaemonSet\n  patch:\n    metadata:\n      annotations:\n")
	for i := range n {
		fmt.Fprintf(&b, "        example.com/a%d: v\n", i)
	}
	return b.String()
}

// entriesDocument is n net entries.
func entriesDocument(n int) string {
	var b strings.Builder
	b.WriteString(apiLine + "overrides:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {component: net, kind: DaemonSet, patch: {metadata: {labels: {n%d: v}}}}\n", i)
	}
	return b.String()
}

// nestedDocument is a net entry whose spec.template.metadata.annotations
// nest inside each other until the deepest node is at depth (the values are
// open below annotations' keys, as far as the walk is concerned; the
// annotation is not a string, which is another finding).
func nestedDocument(tb testing.TB, depth int) string {
	tb.Helper()
	for levels := 0; levels < depth; levels++ {
		doc := apiLine + "overrides:\n- {component: net, kind: DaemonSet, patch: {spec: {updateStrategy: " +
			strings.Repeat("{a: ", levels) + "1" + strings.Repeat("}", levels) + "}}}\n"
		if _, d, _ := engineShape(tb, doc); d == depth {
			return doc
		}
	}
	tb.Fatalf("no document of depth %d", depth)
	return ""
}

// nodesDocument is a document of exactly n nodes: entries each setting
// labels, then one whose extraArgs (a node each) make up the rest.
func nodesDocument(tb testing.TB, n int) string {
	tb.Helper()
	var entries []string
	doc := func(extra string) string { return apiLine + "overrides:\n" + strings.Join(entries, "") + extra }
	const padding = "- {component: net, kind: DaemonSet, extraArgs: {node: [%s]}}\n"
	for {
		entry := fmt.Sprintf("- {component: net, kind: DaemonSet, patch: {metadata: {labels: {%s}}}}\n", labelsOf(len(entries), 60))
		if nodes, _, _ := engineShape(tb, doc(entry+fmt.Sprintf(padding, "a"))); nodes > n {
			break
		}
		entries = append(entries, entry)
	}
	one, _, _ := engineShape(tb, doc(fmt.Sprintf(padding, "a")))
	args := make([]string, 1+n-one)
	for i := range args {
		args[i] = fmt.Sprintf("a%d", i)
	}
	out := doc(fmt.Sprintf(padding, strings.Join(args, ", ")))
	if got, _, _ := engineShape(tb, out); got != n {
		tb.Fatalf("built %d nodes, want %d", got, n)
	}
	return out
}

func labelsOf(entry, k int) string {
	labels := make([]string, k)
	for i := range labels {
		labels[i] = fmt.Sprintf("l%d-%d: v", entry, i)
	}
	return strings.Join(labels, ", ")
}

// bytesDocument is a valid document of exactly n bytes: one net entry with
// an annotation padded to length.
func bytesDocument(tb testing.TB, n int) string {
	tb.Helper()
	head := apiLine + "overrides:\n- {component: net, kind: DaemonSet, patch: {metadata: {annotations: {example.com/pad: '"
	tail := "'}}}}\n"
	doc := head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	if len(doc) != n {
		tb.Fatalf("built %d bytes, want %d", len(doc), n)
	}
	return doc
}

// TestEngineLimitBoundaries: each limit admits a document at it and
// refuses one a node, key, entry, level or byte past it, with its own code,
// as the engine's "greater than" comparisons do.
func TestEngineLimitBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at, past map[string]string
		code     string
	}{
		{"mapping keys", one(annotationsDocument(engineMaxMappingKeys)), one(annotationsDocument(engineMaxMappingKeys + 1)), string(OverrideMappingTooManyKeys)},
		{"entries", one(entriesDocument(engineMaxEntries)), one(entriesDocument(engineMaxEntries + 1)), string(OverrideTooManyEntries)},
		{"depth", one(nestedDocument(t, engineMaxDepth)), one(nestedDocument(t, engineMaxDepth+1)), string(OverrideDocumentTooDeep)},
		{"nodes", one(nodesDocument(t, engineMaxNodes)), one(nodesDocument(t, engineMaxNodes+1)), string(OverrideDocumentTooManyNodes)},
		{"document bytes", one(bytesDocument(t, engineMaxDocumentBytes)), one(bytesDocument(t, engineMaxDocumentBytes+1)),
			string(OverrideDocumentTooLong)},
		{"ConfigMap bytes", map[string]string{"a.yaml": bytesDocument(t, engineMaxTotalBytes/4), "b.yaml": bytesDocument(t, engineMaxTotalBytes/4),
			"c.yaml": bytesDocument(t, engineMaxTotalBytes/4), "d.yaml": bytesDocument(t, engineMaxTotalBytes/4)},
			map[string]string{"a.yaml": bytesDocument(t, engineMaxTotalBytes/4), "b.yaml": bytesDocument(t, engineMaxTotalBytes/4),
				"c.yaml": bytesDocument(t, engineMaxTotalBytes/4), "d.yaml": bytesDocument(t, engineMaxTotalBytes/4+1)},
			string(OverrideConfigMapTooLarge)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range Validate(anyTable, tc.at, nil) {
				if f.Severity == 0 {
					t.Errorf("at the limit: %s at %s", f.Code, f.Field)
				}
			}
			past := Validate(anyTable, tc.past, nil)
			checkWellFormed(t, past)
			var codes []string
			for _, f := range past {
				codes = append(codes, string(f.Code))
				if f.Ratchets() {
					t.Errorf("%s ratchets", f.Code)
				}
			}
			if len(codes) != 1 || codes[0] != tc.code {
				t.Errorf("past the limit: %v, want exactly %s", codes, tc.code)
			}
		})
	}
}
