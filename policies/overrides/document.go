// This file reads the value of one data key as YAML. It allows exactly one
// YAML document per key (upstream: a second document, even an empty one
// after a trailing "---", is an error, because the operator would silently
// ignore it). A value that is empty or only white space is ignored, as the
// operator ignores it, with a warning; a value with only comments or
// document markers is an error (the operator rejects it as empty).
//
// A document in plain block style is read by blockstyle.go, which builds the
// tree yaml/v3 would; every other document, and so every parse error, is
// yaml/v3's. A parse failure, and the parser's own nesting limit, are
// findings about the review rather than about a value: they never ratchet on
// UPDATE.
//
// Parse errors are reported in words of this package, with the line number
// when the parser gives one: YAML parser messages can quote the document
// (anchor names, offending tokens), and a document can hold a secret.

package overrides

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages about a document as a whole.
const (
	msgDocumentEmpty = "this key is empty and the operator ignores it; remove the key or give it an overrides document"
	msgNoDocument    = "this key holds no YAML document, only comments or document markers, and the operator rejects it; " +
		"write one overrides document (apiVersion: " + APIVersion + ")"
	msgSyntax            = "this key is not valid YAML%s; the document text is not repeated here, check it with a YAML linter"
	msgMultipleDocuments = "this key holds more than one YAML document (separated by ---), and the operator reads exactly one " +
		"document per key; put each document under its own key"
	msgRootNotMapping = "the document must be a mapping holding apiVersion and overrides"
)

// syntaxLine finds the line number that starts a parser error
// ("yaml: line 3: ...").
var syntaxLine = regexp.MustCompile(`^yaml: line ([0-9]{1,9}): `)

// syntaxProblems are parser problem descriptions that are fixed text, never
// taken from the document, and so may be repeated in a message.
var syntaxProblems = []string{
	"mapping values are not allowed in this context",
	"did not find expected key",
	"did not find expected node content",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"could not find expected ':'",
	"found character that cannot start any token",
	"found a tab character that violates indentation",
	"found unexpected end of stream",
	"found undefined tag handle",
	"block sequence entries are not allowed in this context",
	"control characters are not allowed",
	"invalid leading UTF-8 octet",
	"invalid trailing UTF-8 octet",
	"exceeded max depth",
	"unknown anchor",
}

// document checks the value of the data key at path.
func (w *walker) document(path *field.Path, raw string) {
	w.doc, w.depth, w.stopped, w.docFindings = path, 0, false, 0
	w.docBudget = visitsPerByte*len(raw) + visitsPerDocument
	if strings.TrimSpace(raw) == "" {
		w.warn(OverrideDocumentEmpty, path, raw, msgDocumentEmpty)
		return
	}
	if w.documentTooLong(path, raw) {
		return
	}
	root, ok := w.parse(path, raw)
	if !ok || !w.checkStructure(path, root) {
		return
	}
	root, ok = w.enter(root)
	if !ok {
		return
	}
	if root.kind != yaml.MappingNode {
		w.deny(OverrideDocumentInvalid, path, raw, msgRootNotMapping)
		return
	}
	w.envelope(root, path)
}

// parse returns the root node of the only document in raw.
func (w *walker) parse(path *field.Path, raw string) (*node, bool) {
	switch root, read := readBlockStyle(raw); read {
	case blockTree:
		return root, true
	case blockTooDeep:
		w.limit(OverrideDocumentTooDeep, path, msgTooDeep)
		return nil, false
	}
	decoder := yaml.NewDecoder(strings.NewReader(raw))
	var doc, extra yaml.Node
	err := decodeNode(decoder, &doc)
	if errors.Is(err, io.EOF) {
		w.deny(OverrideDocumentInvalid, path, raw, msgNoDocument)
		return nil, false
	}
	if err == nil {
		err = decodeNode(decoder, &extra)
		if err == nil {
			w.deny(OverrideMultipleDocuments, path, raw, msgMultipleDocuments)
			return nil, false
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	switch {
	case err != nil && strings.Contains(err.Error(), parserDepthLimit):
		// The parser's own nesting limit: a limit, not a syntax error.
		w.limit(OverrideDocumentTooDeep, path, msgTooDeep)
		return nil, false
	case err != nil:
		// A parse failure says the text could not be read, not what a value
		// is: it never ratchets.
		w.limit(OverrideDocumentInvalid, path, msgSyntax, syntaxDetail(err))
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		w.deny(OverrideDocumentInvalid, path, raw, msgRootNotMapping)
		return nil, false
	}
	return fromYAML(doc.Content[0]), true
}

// parserDepthLimit is how the YAML parser words its own nesting limit (10000
// levels), which flow collections reach within a ConfigMap's size.
const parserDepthLimit = "exceeded max depth"

// errParserPanic stands for a panic of the YAML parser on hostile input.
var errParserPanic = errors.New("parser failure")

// decodeNode reads the next document into n. The parser is third-party code
// fed with whatever a ConfigMap holds; should it panic, the key is reported
// as not valid YAML rather than the request failing.
func decodeNode(decoder *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if recover() != nil {
			err = errParserPanic
		}
	}()
	return decoder.Decode(n)
}

// syntaxDetail renders what may be said of a parse error: its line and a
// fixed description of the problem, never text from the document.
func syntaxDetail(err error) string {
	text := err.Error()
	var parts []string
	if m := syntaxLine.FindStringSubmatch(text); m != nil {
		parts = append(parts, "line "+m[1])
	}
	for _, problem := range syntaxProblems {
		if strings.Contains(text, problem) {
			parts = append(parts, problem)
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s)", strings.Join(parts, ": "))
}
