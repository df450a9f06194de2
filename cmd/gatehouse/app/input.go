package app

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// maxDocumentBytes bounds one YAML or JSON document, like the API server's
// request limit, so that a runaway file cannot exhaust memory.
const maxDocumentBytes = 3 * 1024 * 1024

// Document is one object read from an input, with where it came from.
type Document struct {
	Source string // file path, or "-" for standard input
	Index  int    // 0-based document index in the file
	// Item is the 0-based index inside a List document, or -1; Path holds
	// the index at every level when Lists are nested (Path[0] == Item).
	Item int
	Path []int
	// Line is the 1-based line of Source where the object starts: the
	// document's first line that is neither blank nor a comment, or, for
	// an item of a List, the item's first line. 0 when it is not known.
	Line   int
	Object map[string]any
}

// Where names the document in messages: "file.yaml, document 2".
// A document with a negative Index is not from a file: Source names it
// (audit: the object's resource in the cluster).
func (d Document) Where() string {
	if d.Index < 0 {
		return d.Source
	}
	return d.Source + ", " + d.name()
}

// name is "document 2", or "document 2, item 1.3" inside Lists.
func (d Document) name() string {
	w := fmt.Sprintf("document %d", d.Index+1)
	if len(d.Path) > 0 {
		parts := make([]string, len(d.Path))
		for i, n := range d.Path {
			parts[i] = fmt.Sprint(n + 1)
		}
		w += ", item " + strings.Join(parts, ".")
	}
	return w
}

// errorf is the one shape of an error about an input: the file and the
// line of the file (as the JUnit and SARIF output count lines; 0 when not
// known), the document, and why:
// "bad.yaml:7: document 2: not valid YAML or JSON: did not find expected key".
// Standard input is "stdin". Nothing of the document's content is quoted.
func (d Document) errorf(line int, format string, args ...any) error {
	file := d.Source
	if file == "-" {
		file = "stdin"
	}
	if line > 0 {
		file += ":" + strconv.Itoa(line)
	}
	return fmt.Errorf("%s: %s: %s", file, d.name(), fmt.Sprintf(format, args...))
}

// readInputs reads every path: a file, a directory (walked recursively for
// .yaml, .yml and .json files, in lexical order) or "-" for stdin.
func readInputs(paths []string, stdin io.Reader) ([]Document, error) {
	var out []Document
	err := visitInputs(paths, stdin, func(d Document) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// visitInputs reads every path as readInputs does and hands each document to
// visit as soon as it is read, so a caller that keeps less than the whole
// object (--state) never holds every document at once.
func visitInputs(paths []string, stdin io.Reader, visit func(Document) error) error {
	for _, p := range paths {
		if p == "-" {
			if err := visitDocuments("-", stdin, visit); err != nil {
				return err
			}
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return pathError(p, err)
		}
		files := []string{p}
		if info.IsDir() {
			if files, err = manifestFiles(p); err != nil {
				return pathError(p, err)
			}
			if len(files) == 0 {
				// A CI job pointed at the wrong directory must not pass.
				return fmt.Errorf("%s: a directory without .yaml, .yml or .json files", p)
			}
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return pathError(f, err)
			}
			err = visitDocuments(f, fh, visit)
			fh.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// pathError is an error opening or walking path: the path and the
// system's reason ("no such file or directory").
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// readDocuments splits a multi-document YAML (or JSON) stream into objects,
// unwrapping List kinds. Empty documents are skipped; anything that is not an
// object with apiVersion and kind is an error naming the document.
func readDocuments(source string, r io.Reader) ([]Document, error) {
	var out []Document
	err := visitDocuments(source, r, func(d Document) error {
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// visitDocuments is readDocuments handing each document to visit as it is
// read.
func visitDocuments(source string, r io.Reader, visit func(Document) error) error {
	reader := newDocumentReader(bufio.NewReaderSize(io.LimitReader(r, 64*maxDocumentBytes), 64*1024))
	for index := 0; ; index++ {
		raw, startLine, err := reader.read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		where := Document{Source: source, Index: index, Item: -1}
		if err != nil {
			return where.errorf(startLine, "%v", err)
		}
		if len(raw) > maxDocumentBytes {
			return where.errorf(startLine, "larger than %d bytes", maxDocumentBytes)
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			index-- // a comment-only chunk or a leading "---" is not a document
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			line, reason := describeParseError(err)
			if line > 0 {
				line += startLine - 1 // the parser counts from the document's first line
			}
			return where.errorf(line, "%s", reason)
		}
		if obj == nil {
			continue
		}
		where.Line = startLine + leadingNonContentLines(raw)
		if err := requireTypeMeta(obj); err != nil {
			return where.errorf(where.Line, "%v", err)
		}
		where.Object = obj
		var lines *listLines
		if obj["items"] != nil {
			lines = itemLines(raw, startLine)
		}
		if err := visitItems(where, lines, visit); err != nil {
			return err
		}
	}
}

// maxListDepth bounds Lists nested in Lists.
const maxListDepth = 8

// visitItems hands d to visit, or, when d is a list, each of its items, as
// kubectl reads them (its FlattenListVisitor and unstructured decoding): a
// document with an items field is a list whatever its kind; an item that is
// a list is unwrapped in turn; an item with neither apiVersion nor kind is of
// the list's apiVersion and its kind without the "List" suffix.
//
// lines, when not nil, says where each item starts; an item it does not
// cover starts, as far as Line says, where its List does.
func visitItems(d Document, lines *listLines, visit func(Document) error) error {
	if d.Object["items"] == nil {
		return visit(d)
	}
	kind, _ := d.Object["kind"].(string)
	items, ok := d.Object["items"].([]any)
	if !ok {
		return d.errorf(d.Line, "%s.items is not a list", kind)
	}
	if len(d.Path) >= maxListDepth {
		return d.errorf(d.Line, "lists nested more than %d deep", maxListDepth)
	}
	apiVersion, _ := d.Object["apiVersion"].(string)
	if lines != nil && len(lines.items) != len(items) {
		lines = nil // the nodes and the decoded object disagree: trust neither's lines
	}
	for i, item := range items {
		itemDoc := Document{Source: d.Source, Index: d.Index, Item: i, Path: append(slices.Clone(d.Path), i), Line: d.Line}
		itemDoc.Item = itemDoc.Path[0]
		var nested *listLines
		if lines != nil {
			itemDoc.Line, nested = lines.items[i], lines.nested[i]
		}
		m, ok := item.(map[string]any)
		if !ok {
			return itemDoc.errorf(itemDoc.Line, "not an object")
		}
		if m["apiVersion"] == nil && m["kind"] == nil && strings.HasSuffix(kind, "List") && kind != "List" {
			m["apiVersion"], m["kind"] = apiVersion, strings.TrimSuffix(kind, "List")
		}
		if err := requireTypeMeta(m); err != nil {
			return itemDoc.errorf(itemDoc.Line, "%v", err)
		}
		itemDoc.Object = m
		if err := visitItems(itemDoc, nested, visit); err != nil {
			return err
		}
	}
	return nil
}

// parseErrorLine finds the line number in a YAML parser error.
var parseErrorLine = regexp.MustCompile(`\bline (\d+): `)

// The words of a parser error that are the parser's own: words of letters
// ("mapping values are not allowed in this context"), a quoted punctuation
// character ("did not find expected ',' or ']'") and the core tags
// ("cannot decode !!str as a !!int"). Anything else may come from the
// document: a quoted scalar or anchor, a key, a Go rendering of a value.
var (
	parserWord = regexp.MustCompile(`^[a-zA-Z-]+[,:;]?$|^'[^a-zA-Z0-9\s']'[,:;]?$`)
	coreTags   = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!binary", "!!map", "!!seq", "!!timestamp", "!!merge"}
)

// describeParseError says why a document does not parse, in the parser's
// words less every word that could come from the document (a value from the
// input never appears in a diagnostic, even one about a broken file), and
// the line of the document the parser names (0 when it names none).
func describeParseError(err error) (int, string) {
	msg := err.Error()
	if strings.Contains(msg, "into Go value of type map[string]interface") {
		return 0, "not an object (a mapping with apiVersion and kind)"
	}
	line := 0
	if m := parseErrorLine.FindStringSubmatchIndex(msg); m != nil {
		line, _ = strconv.Atoi(msg[m[2]:m[3]])
		msg = msg[m[1]:]
	} else {
		for _, prefix := range []string{"error converting YAML to JSON: ", "yaml: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
	}
	msg, _, _ = strings.Cut(msg, "\n")
	var words []string
	for _, w := range strings.Fields(msg) {
		if parserWord.MatchString(w) || slices.Contains(coreTags, strings.TrimRight(w, ",:;")) {
			words = append(words, w)
		}
	}
	reason := strings.TrimRight(strings.Join(words, " "), " ,:;")
	if reason == "" {
		return line, "not valid YAML or JSON"
	}
	return line, "not valid YAML or JSON: " + reason
}

func requireTypeMeta(obj map[string]any) error {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		return errors.New("apiVersion and kind must be set")
	}
	return nil
}

func stripComments(raw []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' || bytes.Equal(t, []byte("---")) {
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return out
}
