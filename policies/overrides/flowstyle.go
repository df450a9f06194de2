// This file extends the block-style reader to the flow collections people
// write inside a block document, as in
//
//	patch: {spec: {template: {spec: {containers: [{name: run, args: [--v, "2"]}]}}}}
//
// which would otherwise send the whole document to yaml/v3. It reads flow
// mappings and lists of plain or quoted keys, plain scalars (a ':' inside
// one, as in an image's tag or a URL, included), and quoted scalars without
// escapes, a trailing comma allowed, written on the line of their key or
// "-", or continued on lines indented deeper when a line ends with ",", "["
// or "{". Anything else declines the document, which then goes to yaml/v3
// as before: a plain scalar holding '?' (which ends a plain scalar in a
// flow collection), ": ", a quote or a line break, a key holding ':', an
// empty value ({a: }, {a}), an empty entry ([a, , b]), a single-pair
// mapping in a list ([a: b]), text after the collection, and a line break
// anywhere but after ",", "[" or "{". TestBlockStyleReads and
// FuzzMatchesBefore compare what it reads with yaml/v3.

package overrides

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// isFlowStart reports whether value starts a flow collection.
func isFlowStart(value string) bool { return value[0] == '[' || value[0] == '{' }

// flow reads the flow collection that starts value, the rest of the line of
// a key or list item at column col (the current line is already the next
// one). A collection still open at the end of a line that ends with ",", "["
// or "{" continues on the next line when that line is indented deeper than
// col.
func (p *blockParser) flow(value string, col int) (*node, bool) {
	text, complete := p.joinFlow(value, col)
	f := flowReader{p: p, src: text}
	n, ok := f.value()
	if f.tooDeep {
		// Whatever follows: yaml/v3 reads the text in order, and all of it
		// up to here is text it reads without an error.
		p.tooDeep = true
		return nil, false
	}
	if !complete || !ok || f.skipSpace() < len(f.src) {
		return nil, false
	}
	return n, true
}

// joinFlow returns the text of the flow collection that starts value, with
// the lines that continue it; complete is false when it ends still open.
func (p *blockParser) joinFlow(value string, col int) (text string, complete bool) {
	open := flowOpen(value)
	if open == 0 {
		return value, true
	}
	var joined strings.Builder
	joined.WriteString(value)
	for last := value; open > 0; {
		end := last[len(last)-1]
		if !p.more || p.indent <= col || (end != ',' && end != '[' && end != '{') {
			break
		}
		last = p.text
		p.advance()
		joined.WriteByte('\n')
		joined.WriteString(last)
		open += flowOpen(last)
	}
	return joined.String(), open == 0
}

// flowQuoted is flowOpen's answer for a line that ends inside a quoted
// scalar: more closed than any line can open, so that the caller declines.
const flowQuoted = -1 << 30

// flowOpen returns how many more flow collections line opens than it
// closes, quoted scalars skipped; flowQuoted when it ends inside one.
func flowOpen(line string) int {
	open := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '[', '{':
			open++
		case ']', '}':
			open--
		case '"', '\'':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return flowQuoted
			}
			i += 1 + end
		}
	}
	return open
}

// maxFlowLevel is how many flow collections yaml/v3 reads inside one
// another; it refuses a document that opens one more, with "exceeded max
// depth".
const maxFlowLevel = 10000

// flowReader reads one flow collection from src.
type flowReader struct {
	p   *blockParser
	src string
	off int
	// level is the number of collections open; tooDeep is set when one
	// more than maxFlowLevel opens.
	level   int
	tooDeep bool
}

// skipSpace moves past spaces and line breaks and returns the offset.
func (f *flowReader) skipSpace() int {
	for f.off < len(f.src) && (f.src[f.off] == ' ' || f.src[f.off] == '\n') {
		f.off++
	}
	return f.off
}

// value reads a flow collection or a scalar.
func (f *flowReader) value() (*node, bool) {
	if f.skipSpace() == len(f.src) {
		return nil, false
	}
	switch f.src[f.off] {
	case '[':
		return f.collection(yaml.SequenceNode, tagSeq, ']')
	case '{':
		return f.collection(yaml.MappingNode, tagMap, '}')
	case '"', '\'':
		return f.quoted()
	}
	token, ok := f.plain()
	if !ok {
		return nil, false
	}
	return f.p.plain(token), true
}

// collection reads a flow list or mapping whose opening bracket is next
// and that close ends: its items separated by ",", a trailing one allowed.
func (f *flowReader) collection(kind yaml.Kind, tag string, close byte) (*node, bool) {
	if f.level == maxFlowLevel {
		f.tooDeep = true
		return nil, false
	}
	f.level++
	defer func() { f.level-- }()
	n := f.p.slab.take(kind, tag, "")
	start := len(f.p.pending)
	f.off++
	if f.skipSpace() < len(f.src) && f.src[f.off] == close {
		f.off++
		return n, true
	}
	for {
		if kind == yaml.MappingNode {
			key, ok := f.key()
			if !ok {
				return nil, false
			}
			f.p.pending = append(f.p.pending, key)
		}
		item, ok := f.value()
		if !ok {
			return nil, false
		}
		f.p.pending = append(f.p.pending, item)
		if f.skipSpace() == len(f.src) {
			return nil, false
		}
		switch f.src[f.off] {
		case close:
			f.off++
			n.content = f.p.children(start)
			return n, true
		case ',':
			// A comma may end the collection, as yaml/v3 reads it.
			if f.off++; f.skipSpace() < len(f.src) && f.src[f.off] == close {
				f.off++
				n.content = f.p.children(start)
				return n, true
			}
		default:
			return nil, false
		}
	}
}

// key reads a flow mapping's key, plain or quoted, and the ": " after it.
func (f *flowReader) key() (*node, bool) {
	if f.skipSpace() == len(f.src) {
		return nil, false
	}
	start := f.off
	var key *node
	if c := f.src[f.off]; c == '"' || c == '\'' {
		inner, ok := f.quotedText()
		if !ok || inner == mergeKey {
			return nil, false
		}
		key = f.p.slab.take(yaml.ScalarNode, tagString, inner)
	} else {
		f.scanPlain(false)
		text := f.src[start:f.off]
		if text == "" || !isPlainStart(text) || strings.HasSuffix(text, " ") || text == mergeKey {
			return nil, false
		}
		key = f.p.plain(text)
	}
	if f.off-start > maxBlockKey || !strings.HasPrefix(f.src[f.off:], ": ") {
		return nil, false
	}
	f.off += 2
	return key, true
}

// flowEnds are the bytes that end a plain scalar or key for this reader
// (in a flow collection yaml/v3 ends one at ",", "?" and brackets, and at
// ": "), and flowDeclines those of them after which it declines. In a
// value, a ':' followed by none of colonEnds is part of the scalar, as in
// an image's tag or a URL.
var flowEnds, flowDeclines, colonEnds = byteSet(":?,[]{}\n\"'"), byteSet(":?\"'"), byteSet(" \n,[]{}?:")

// afterQuoted are the bytes that may follow a quoted scalar here.
var afterQuoted = byteSet(" \n,]}")

func byteSet(bytes string) (set [256]bool) {
	for i := range len(bytes) {
		set[bytes[i]] = true
	}
	return set
}

// scanPlain moves to the byte that ends a plain key, or a plain value
// (which may hold a ':' that none of colonEnds follows), or to the end.
func (f *flowReader) scanPlain(value bool) {
	for f.off < len(f.src) {
		if c := f.src[f.off]; flowEnds[c] && (c != ':' || !value || f.off+1 == len(f.src) || colonEnds[f.src[f.off+1]]) {
			return
		}
		f.off++
	}
}

// plain reads a plain scalar up to the "," or bracket that ends it, its
// trailing spaces dropped.
func (f *flowReader) plain() (string, bool) {
	start := f.off
	f.scanPlain(true)
	token := strings.TrimRight(f.src[start:f.off], " ")
	if token == "" || !isPlainStart(token) || (f.off < len(f.src) && flowDeclines[f.src[f.off]]) {
		return "", false
	}
	return token, true
}

// quoted reads a quoted scalar value.
func (f *flowReader) quoted() (*node, bool) {
	inner, ok := f.quotedText()
	if !ok || (f.off < len(f.src) && !afterQuoted[f.src[f.off]]) {
		return nil, false
	}
	return f.p.slab.take(yaml.ScalarNode, tagString, inner), true
}

// quotedText reads a quoted scalar without escapes or line breaks (in a
// single-quoted one, a doubled quote is an escape) and returns its text.
func (f *flowReader) quotedText() (string, bool) {
	quote := f.src[f.off]
	end := strings.IndexByte(f.src[f.off+1:], quote)
	if end < 0 {
		return "", false
	}
	inner := f.src[f.off+1 : f.off+1+end]
	f.off += end + 2
	if strings.IndexByte(inner, '\n') >= 0 || (quote == '"' && strings.IndexByte(inner, '\\') >= 0) ||
		(f.off < len(f.src) && f.src[f.off] == quote) {
		return "", false
	}
	return inner, true
}
