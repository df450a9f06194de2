// This file reads a document written in plain block style, as kubectl and
// most people write one, without the general YAML parser, which spends most
// of a review building its tokens and events. It reads block mappings and
// lists, plain scalars, quoted scalars without escapes, and the simple flow
// collections of flowstyle.go. On anything else it declines, and the
// document goes to go.yaml.in/yaml/v3 as always: anchors, aliases, tags,
// comments, block and multi-line scalars, complex and quoted keys, a list
// item that is a list, document markers, tabs, carriage returns and any
// byte outside printable ASCII. So every parse error and every parser limit
// stays the parser's own.
//
// What it returns is what yaml/v3's tree for the same text converts to
// (node.go). TestBlockStyleReads and FuzzMatchesBefore compare the two on
// every document this reader accepts.

package overrides

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Resolved tags of the collections this reader builds (a scalar's is
// resolved by plain, or is !!str for a quoted one).
const (
	tagMap = "!!map"
	tagSeq = "!!seq"
)

const (
	// maxBlockDepth bounds the nesting this reader follows; deeper documents
	// (far past maxDepth, so denied anyway) go to yaml/v3.
	maxBlockDepth = 1000
	// maxBlockKey is the longest key this reader reads: yaml/v3 refuses a
	// key of more than 1024 characters.
	maxBlockKey = 1000
)

// blockParser reads one document. It holds the current line: the next line
// that is not blank.
type blockParser struct {
	src string
	// more is set while there is a current line; indent is its indentation,
	// text its content without indentation and trailing spaces, and next
	// where the line after it starts.
	more   bool
	indent int
	text   string
	next   int
	// declined is set once a line is found this reader does not read.
	declined bool
	// tooDeep is set once a flow collection opens past yaml/v3's limit
	// (flowstyle.go).
	tooDeep bool
	depth   int
	slab    nodeSlab
	// pending holds the children of the collections being read, in order;
	// a collection takes its own off the end when it is complete, into
	// content slices cut from contents.
	pending  []*node
	contents []*node
}

// blockRead is what the block-style reader made of a document.
type blockRead int

const (
	// blockDeclined: the document is not one this reader reads.
	blockDeclined blockRead = iota
	// blockTree: the reader returned the document's tree.
	blockTree
	// blockTooDeep: yaml/v3 refuses the document for nesting flow
	// collections past its limit (maxFlowLevel), before anything else.
	blockTooDeep
)

// readBlockStyle returns the root node of src, a mapping, when src is a
// document in the block style this reader reads.
func readBlockStyle(src string) (*node, blockRead) {
	// A node takes at least a few bytes of text.
	p := &blockParser{src: src, slab: nodeSlab{size: min(len(src)/4+2, nodesPerSlab)}, pending: make([]*node, 0, 64)}
	p.load(0)
	if !p.more || p.indent != 0 {
		return nil, blockDeclined
	}
	root, ok := p.mapping(0, "")
	switch {
	case p.tooDeep:
		return nil, blockTooDeep
	case !ok || p.more || p.declined:
		return nil, blockDeclined
	}
	return root, blockTree
}

// parseBlockStyle returns the root node of src when readBlockStyle returns
// its tree; ok is false otherwise.
func parseBlockStyle(src string) (root *node, ok bool) {
	root, read := readBlockStyle(src)
	return root, read == blockTree
}

// load makes the first line at or after pos that is not blank the current
// line. A line holding a byte this reader does not read (anything but
// printable ASCII without '#') or starting like a document marker ends the
// document, declined.
func (p *blockParser) load(pos int) {
	for pos < len(p.src) && !p.declined {
		line, next := p.src[pos:], len(p.src)
		if end := strings.IndexByte(line, '\n'); end >= 0 {
			line, next = line[:end], pos+end+1
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		text, ok := blockText(line[indent:])
		switch {
		case !ok || (indent == 0 && (strings.HasPrefix(text, "---") || strings.HasPrefix(text, "..."))):
			p.declined = true
		case text != "":
			p.more, p.indent, p.text, p.next = true, indent, text, next
			return
		}
		pos = next
	}
	p.more, p.indent, p.text, p.next = false, 0, "", len(p.src)
}

// blockText returns text without its trailing spaces; ok is false when it
// holds a byte this reader does not read: anything but printable ASCII
// without '#'.
func blockText(text string) (trimmed string, ok bool) {
	end := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c < ' ' || c > '~' || c == '#':
			return "", false
		case c != ' ':
			end = i + 1
		}
	}
	return text[:end], true
}

// advance moves to the next line that is not blank.
func (p *blockParser) advance() { p.load(p.next) }

// mapping reads a block mapping whose keys start at column col. first is
// the text of its first entry when that follows "- " on the current line;
// "" when the entry is the current line itself.
func (p *blockParser) mapping(col int, first string) (*node, bool) {
	if !p.enter() {
		return nil, false
	}
	defer p.leave()
	n := p.slab.take(yaml.MappingNode, tagMap, "")
	start := len(p.pending)
	text := first
	for {
		if text == "" {
			if !p.more || p.indent < col {
				break
			}
			if p.indent > col {
				return nil, false
			}
			text = p.text
		}
		key, value, found, ok := splitEntry(text)
		if !found || !ok {
			return nil, false
		}
		keyNode := p.plain(key)
		p.advance()
		var valueNode *node
		if value != "" {
			valueNode, ok = p.inline(value, col)
		} else {
			valueNode, ok = p.below(col, true)
		}
		if !ok {
			return nil, false
		}
		p.pending = append(p.pending, keyNode, valueNode)
		text = ""
	}
	n.content = p.children(start)
	return n, true
}

// sequence reads a block list whose "-" are at column col.
func (p *blockParser) sequence(col int) (*node, bool) {
	if !p.enter() {
		return nil, false
	}
	defer p.leave()
	n := p.slab.take(yaml.SequenceNode, tagSeq, "")
	start := len(p.pending)
	for p.more && p.indent == col && isListItem(p.text) {
		content := strings.TrimLeft(p.text[1:], " ")
		var item *node
		ok := false
		switch _, _, found, valid := splitEntry(content); {
		case content == "":
			p.advance()
			item, ok = p.below(col, false)
		case isFlowStart(content):
			p.advance()
			item, ok = p.flow(content, col)
		case isListItem(content) || (found && !valid):
			return nil, false
		case found:
			// A mapping that starts on the item's line, its keys at the
			// column of the first.
			item, ok = p.mapping(col+len(p.text)-len(content), content)
		default:
			p.advance()
			item, ok = p.inline(content, col)
		}
		if !ok {
			return nil, false
		}
		p.pending = append(p.pending, item)
	}
	n.content = p.children(start)
	return n, true
}

// below reads the value of a key (mapping set) or list item at column col
// that ends its line: a collection indented deeper on the next lines, a
// list at col itself for a key, or else nothing, an empty value (null).
func (p *blockParser) below(col int, mapping bool) (*node, bool) {
	switch {
	case p.more && p.indent > col && isListItem(p.text):
		return p.sequence(p.indent)
	case p.more && p.indent > col:
		return p.mapping(p.indent, "")
	case mapping && p.more && p.indent == col && isListItem(p.text):
		return p.sequence(col)
	}
	return p.plain(""), true
}

// inline reads a value written on the line of its key or "-" at column
// col: a flow collection (flowstyle.go), a quoted scalar without escapes,
// or a plain scalar.
func (p *blockParser) inline(value string, col int) (*node, bool) {
	switch quote := value[0]; {
	case isFlowStart(value):
		return p.flow(value, col)
	case quote == '"' || quote == '\'':
		inner := value[1:]
		end := strings.IndexByte(inner, quote)
		if end < 0 || end != len(inner)-1 || (quote == '"' && strings.IndexByte(inner, '\\') >= 0) {
			return nil, false
		}
		return p.slab.take(yaml.ScalarNode, tagString, inner[:end]), true
	case !isPlainStart(value) || strings.Contains(value, ": ") || strings.HasSuffix(value, ":"):
		return nil, false
	}
	return p.plain(value), true
}

// plain returns a plain scalar, tagged as yaml/v3 resolves it.
func (p *blockParser) plain(value string) *node {
	var tag string
	switch {
	case isPlainString(value):
		tag = tagString
	case isDecimal(value):
		tag = tagInt
	default:
		tag = (&yaml.Node{Kind: yaml.ScalarNode, Value: value}).ShortTag()
	}
	return p.slab.take(yaml.ScalarNode, tag, value)
}

// isPlainString reports whether yaml/v3 resolves a plain scalar to a string
// without looking further than this does; for the others the caller asks
// yaml/v3 (Node.ShortTag). yaml/v3's resolve goes by the first character: a
// value that does not start like a number, a boolean or null ("+-.0123456789"
// and "yYnNtTfFoO~") is a string. Of those that do, a value starting with a
// letter or ~ is something else only when it is one of a few words (true,
// null, ~ and the like), none longer than five characters; and a number or
// a timestamp has no character but those isNumberChar accepts.
func isPlainString(value string) bool {
	if value == "" {
		return false
	}
	switch value[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		return len(value) > 5
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		for i := 1; i < len(value); i++ {
			if !isNumberChar(value[i]) {
				return true
			}
		}
		return false
	case '.':
		return false
	}
	return true
}

// isDecimal reports whether value is a decimal integer that yaml/v3
// resolves to an int as it is: 0, or up to 18 digits without a leading zero
// (a leading zero makes it octal, or a float).
func isDecimal(value string) bool {
	if value == "0" {
		return true
	}
	if value == "" || len(value) > 18 || value[0] == '0' {
		return false
	}
	for i := 0; i < len(value); i++ {
		if value[i] < '0' || value[i] > '9' {
			return false
		}
	}
	return true
}

// isNumberChar reports whether c is one of the characters of the numbers,
// timestamps, infinities and NaNs yaml/v3 resolves a plain scalar to (in
// any base, with underscores and exponents), or one of a few more.
func isNumberChar(c byte) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		return true
	}
	switch c {
	case 'x', 'X', 'o', 'O', 't', 'T', 'z', 'Z', 'i', 'I', 'n', 'N', '+', '-', '.', '_', ':', ' ':
		return true
	}
	return false
}

// splitEntry splits the text of a mapping entry at its ": " (or final
// ":"). found is false when the text holds none: it is then a scalar. ok is
// false when it holds one but the key before it is not a plain key this
// reader reads.
func splitEntry(text string) (key, value string, found, ok bool) {
	at := -1
	for i := strings.IndexByte(text, ':'); i >= 0; {
		if i+1 == len(text) || text[i+1] == ' ' {
			at = i
			break
		}
		next := strings.IndexByte(text[i+1:], ':')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if at < 0 {
		return "", "", false, false
	}
	key, value = text[:at], strings.TrimLeft(text[at+1:], " ")
	ok = key != "" && isPlainStart(key) && !strings.HasSuffix(key, " ") && len(key) <= maxBlockKey && key != mergeKey
	return key, value, true, ok
}

// isListItem reports whether text starts a list item: "-" alone or "- ".
func isListItem(text string) bool {
	return text == "-" || strings.HasPrefix(text, "- ")
}

// isPlainStart reports whether text starts with a character this reader
// accepts at the start of a plain scalar: a letter, a digit, one of
// "./_$~+=", or a "-" that does not start a list item. YAML's indicators
// are left to yaml/v3.
func isPlainStart(text string) bool {
	switch c := text[0]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '.', c == '/', c == '_', c == '$', c == '~', c == '+', c == '=':
		return true
	case c == '-':
		return len(text) > 1 && text[1] != ' '
	}
	return false
}

// children takes the pending children from start on as a content slice.
func (p *blockParser) children(start int) []*node {
	count := len(p.pending) - start
	if count == 0 {
		return nil
	}
	if len(p.contents) < count {
		p.contents = make([]*node, max(count, p.slab.size))
	}
	content := p.contents[:count:count]
	p.contents = p.contents[count:]
	copy(content, p.pending[start:])
	p.pending = p.pending[:start]
	return content
}

func (p *blockParser) enter() bool {
	p.depth++
	return p.depth <= maxBlockDepth
}

func (p *blockParser) leave() { p.depth-- }
