package app

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
)

// errBadSeparator is a line that starts with "---" but has more than a
// comment after it (read returns its line).
var errBadSeparator = errors.New(`a line starting with "---" is not a document separator`)

// documentReader splits a multi-document YAML stream exactly as
// k8s.io/apimachinery's YAMLReader does (FuzzDocumentReaderAsUpstream holds
// it to that) and also counts lines, so that each document knows the line of
// its file where it starts: SARIF and JUnit output point there. The
// upstream reader drops separator lines and does not say how many.
type documentReader struct {
	reader *bufio.Reader
	line   int // lines consumed so far
}

func newDocumentReader(r *bufio.Reader) *documentReader {
	return &documentReader{reader: r}
}

// readLine is apimachinery's LineReader.Read: one line, "\n"-terminated
// whatever ended it, and the reader's error.
func (r *documentReader) readLine() ([]byte, error) {
	var (
		isPrefix = true
		err      error
		line     []byte
		buffer   bytes.Buffer
	)
	for isPrefix && err == nil {
		line, isPrefix, err = r.reader.ReadLine()
		buffer.Write(line)
	}
	buffer.WriteByte('\n')
	return buffer.Bytes(), err
}

// read returns the next document and the 1-based line of its first line,
// or io.EOF; with errBadSeparator, the line of the separator.
func (r *documentReader) read() ([]byte, int, error) {
	var buffer bytes.Buffer
	start := 0
	for {
		line, err := r.readLine()
		if err != nil && err != io.EOF { //nolint:errorlint // as upstream
			return nil, 0, err
		}
		if err == nil {
			r.line++
		}
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := bytes.TrimSpace(line[3:])
			if len(trimmed) > 0 && trimmed[0] != '#' {
				at := r.line
				if err == io.EOF { //nolint:errorlint // as upstream
					at++ // a last line without a line break is not counted yet
				}
				return nil, at, errBadSeparator
			}
			if buffer.Len() != 0 {
				return buffer.Bytes(), start, nil
			}
			if err == io.EOF { //nolint:errorlint // as upstream
				return nil, 0, err
			}
		}
		if err == io.EOF { //nolint:errorlint // as upstream
			if buffer.Len() != 0 {
				return buffer.Bytes(), start, nil
			}
			return nil, 0, err
		}
		if buffer.Len() == 0 {
			start = r.line
		}
		buffer.Write(line)
	}
}

// leadingNonContentLines counts the blank, comment and separator lines a
// document starts with (like upstream, the reader keeps a separator that
// opens a document in it).
func leadingNonContentLines(raw []byte) int {
	n := 0
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(line, []byte("---")) {
			break
		}
		n++
		raw = rest
	}
	return n
}

// listLines is where the items of a List start: items[i] is the line of
// item i, nested[i] the lines of its own items when it is a List.
type listLines struct {
	items  []int
	nested []*listLines
}

// itemLines finds the lines of a List document's items, the document's
// first line being firstLine. It reads the document a second time, as YAML
// nodes (which know their lines), so only List documents pay for it; nil
// when the nodes do not read as a mapping with an items sequence.
func itemLines(raw []byte, firstLine int) *listLines {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(raw, &doc); err != nil || doc.Kind != yamlv3.DocumentNode || len(doc.Content) != 1 {
		return nil
	}
	return listLinesOf(doc.Content[0], firstLine-1, 0)
}

func listLinesOf(n *yamlv3.Node, offset, depth int) *listLines {
	if n.Kind == yamlv3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yamlv3.MappingNode || depth > maxListDepth {
		return nil
	}
	var items *yamlv3.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "items" { // the last one wins, as in decoding
			items = n.Content[i+1]
		}
	}
	if items != nil && items.Kind == yamlv3.AliasNode && items.Alias != nil {
		items = items.Alias
	}
	if items == nil || items.Kind != yamlv3.SequenceNode {
		return nil
	}
	out := &listLines{}
	for _, item := range items.Content {
		out.items = append(out.items, offset+item.Line)
		out.nested = append(out.nested, listLinesOf(item, offset, depth+1))
	}
	return out
}
