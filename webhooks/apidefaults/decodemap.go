package apidefaults

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DecodeMap decodes raw, the JSON of an object of kind gvk, in one pass: into
// the map encoding/json's Unmarshal into a map[string]any makes of it, while
// checking, for a built-in kind, that Decode accepts it (every field of the
// Go type that raw states holds a value of a JSON type and range the type
// takes, and every custom decoder of a field type accepts its value). A
// review is then decoded once, not once into a map for the evaluators and
// again into the Go type only to learn that it decodes.
//
// ok is false, and obj nil, whenever DecodeMap is not sure of both: raw is
// not a JSON object, a value does not decode into its field, or raw uses
// something this pass leaves to the full decoders (an escape in a string is
// unquoted by encoding/json itself; a field type that decodes text, a
// fixed-size array, a map with non-string keys, a ",string" field and an
// ambiguous or pointer-embedded field are never judged here). The caller
// then decodes the slow way, with encoding/json and Decode, which also say
// why. So DecodeMap never accepts what the two would refuse and never
// answers differently from them: TestDecodeMapEqualsTheFullDecoders and
// FuzzDecodeMap compare them.
func DecodeMap(gvk schema.GroupVersionKind, raw []byte) (obj map[string]any, ok bool) {
	var s *shape
	if IsBuiltin(gvk) {
		if s = shapeOfKind(gvk); s == nil {
			return nil, false
		}
	}
	d := decoder{data: raw, text: string(raw)}
	d.skipSpace()
	if d.off >= len(d.data) || d.data[d.off] != '{' {
		return nil, false
	}
	v, ok := d.value(s)
	if !ok {
		return nil, false
	}
	if d.skipSpace(); d.off != len(d.data) {
		return nil, false
	}
	obj, _ = v.(map[string]any)
	return obj, obj != nil
}

// maxDepth bounds the nesting this pass follows; deeper documents are left
// to encoding/json (which accepts up to 10000 levels).
const maxDepth = 1000

// decoder is one pass over a JSON document.
type decoder struct {
	data []byte
	// text is data as one string: a string value or key without escapes is
	// a substring of it, which costs no allocation of its own (every such
	// string keeps the whole document alive, as long as the review's
	// object lives anyway).
	text  string
	off   int
	depth int
	// entries and items are stacks that objects and arrays fill while they
	// are read, so each map and slice is allocated once at its final size.
	entries []entry
	items   []any
}

type entry struct {
	key   string
	value any
}

func (d *decoder) skipSpace() {
	for d.off < len(d.data) {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

// value reads one JSON value, which must decode into s (nil: into any, as
// for a field the Go type does not have, or an object without a Go type).
func (d *decoder) value(s *shape) (any, bool) {
	d.skipSpace()
	if d.off >= len(d.data) {
		return nil, false
	}
	if s != nil && s.kind == shapePointer {
		if d.data[d.off] == 'n' {
			return d.literal(nil)
		}
		s = s.elem
	}
	if s != nil && s.kind == shapeCustom {
		start := d.off
		v, ok := d.value(nil)
		if !ok {
			return nil, false
		}
		u := reflect.New(s.typ).Interface().(json.Unmarshaler)
		if u.UnmarshalJSON(d.data[start:d.off]) != nil {
			return nil, false
		}
		return v, true
	}
	switch d.data[d.off] {
	case '{':
		return d.object(s)
	case '[':
		return d.array(s)
	case '"':
		return d.stringValue(s)
	default:
		return d.literal(s)
	}
}

// at reports whether the next byte is c.
func (d *decoder) at(c byte) bool { return d.off < len(d.data) && d.data[d.off] == c }

// members reads a JSON object whose '{' is next, calling member with each
// key when the reader stands before its value; member reads the value.
func (d *decoder) members(member func(key string) bool) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.off++ // {
	if d.skipSpace(); d.closes('}') {
		return true
	}
	for {
		d.skipSpace()
		if !d.at('"') {
			return false
		}
		key, ok := d.str()
		if !ok {
			return false
		}
		if d.skipSpace(); !d.at(':') {
			return false
		}
		d.off++
		if d.skipSpace(); !member(key) {
			return false
		}
		d.skipSpace()
		if more, ok := d.more('}'); !more {
			return ok
		}
	}
}

// elements reads a JSON array whose '[' is next, calling element when the
// reader stands before each element; element reads it.
func (d *decoder) elements(element func() bool) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.off++ // [
	if d.skipSpace(); d.closes(']') {
		return true
	}
	for {
		if d.skipSpace(); !element() {
			return false
		}
		d.skipSpace()
		if more, ok := d.more(']'); !more {
			return ok
		}
	}
}

// closes reads close, the end of the object or array being read, when it
// is next, and gives back that container's depth.
func (d *decoder) closes(close byte) bool {
	if !d.at(close) {
		return false
	}
	d.off++
	d.depth--
	return true
}

// more reads what follows an item (and its white space) of the object or
// array that close ends: a ',' before another item (more), or close
// (done). Anything else is not JSON (ok is false).
func (d *decoder) more(close byte) (more, ok bool) {
	if d.at(',') {
		d.off++
		return true, true
	}
	return false, d.closes(close)
}

func (d *decoder) object(s *shape) (any, bool) {
	if s != nil && s.kind != shapeStruct && s.kind != shapeMap && s.kind != shapeAny {
		return nil, false
	}
	base := len(d.entries)
	ok := d.members(func(key string) bool {
		var fs *shape
		if s != nil {
			switch s.kind {
			case shapeStruct:
				fs = s.fields[key]
			case shapeMap:
				fs = s.elem
			}
		}
		v, ok := d.value(fs)
		d.entries = append(d.entries, entry{key, v})
		return ok
	})
	if !ok {
		return nil, false
	}
	m := make(map[string]any, len(d.entries)-base)
	for _, e := range d.entries[base:] {
		m[e.key] = e.value // a key given twice keeps its last value, as encoding/json does
	}
	clear(d.entries[base:])
	d.entries = d.entries[:base]
	return m, true
}

func (d *decoder) array(s *shape) (any, bool) {
	var es *shape
	if s != nil {
		switch s.kind {
		case shapeSlice, shapeBytes:
			es = s.elem
		case shapeAny:
		default:
			return nil, false
		}
	}
	base := len(d.items)
	ok := d.elements(func() bool {
		v, ok := d.value(es)
		d.items = append(d.items, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	out := make([]any, len(d.items)-base) // never nil: [] decodes to an empty slice
	copy(out, d.items[base:])
	clear(d.items[base:])
	d.items = d.items[:base]
	return out, true
}

func (d *decoder) stringValue(s *shape) (any, bool) {
	v, ok := d.str()
	if !ok {
		return nil, false
	}
	if s == nil {
		return v, true
	}
	switch s.kind {
	case shapeString, shapeAny:
	case shapeBytes:
		// As encoding/json decodes a []byte.
		buf := make([]byte, base64.StdEncoding.DecodedLen(len(v)))
		if _, err := base64.StdEncoding.Decode(buf, []byte(v)); err != nil {
			return nil, false
		}
	case shapeText:
		u := reflect.New(s.typ).Interface().(encoding.TextUnmarshaler)
		if u.UnmarshalText([]byte(v)) != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	return v, true
}

// str reads a string literal as encoding/json unquotes it: one without
// escapes and of valid UTF-8 is its bytes; any other is unquoted by
// unquote.
func (d *decoder) str() (string, bool) {
	start := d.off
	d.off++ // "
	plain, ascii := true, true
	for d.off < len(d.data) {
		c := d.data[d.off]
		if !strSpecial[c] {
			d.off++
			continue
		}
		switch {
		case c == '"':
			d.off++
			body := d.data[start+1 : d.off-1]
			if plain && (ascii || utf8.Valid(body)) {
				return d.text[start+1 : d.off-1], true
			}
			return unquote(body)
		case c == '\\':
			plain = false
			d.off += 2
		case c < 0x20:
			return "", false
		default:
			ascii = false
			d.off++
		}
	}
	return "", false
}

// strSpecial are the bytes str looks at: '"', '\\', control characters
// and every byte outside ASCII.
var strSpecial = func() (set [256]bool) {
	for c := range 256 {
		set[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return set
}()

// unquote is encoding/json's unquoting of a string literal's body, which
// it has already checked (so a body it would refuse is refused here): the
// escapes \" \\ \/ \b \f \n \r \t and \uXXXX, a UTF-16 surrogate pair
// joined and a lone surrogate read as U+FFFD; each byte of invalid UTF-8
// read as U+FFFD.
func unquote(body []byte) (string, bool) {
	b := make([]byte, 0, len(body)+utf8.UTFMax)
	for r := 0; r < len(body); {
		c := body[r]
		switch {
		case c == '\\':
			if r+1 >= len(body) {
				return "", false
			}
			switch e := body[r+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(body[r+2:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					var rr1 rune = -1
					if r+1 < len(body) && body[r] == '\\' && body[r+1] == 'u' {
						rr1 = hex4(body[r+2:])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default:
				return "", false
			}
			r += 2
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(body[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b), true
}

// hex4 reads the four hex digits at the start of b, -1 when there are not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// literal reads true, false, null or a number into s.
func (d *decoder) literal(s *shape) (any, bool) {
	rest := d.data[d.off:]
	switch rest[0] {
	case 't':
		if !hasWord(rest, "true") {
			return nil, false
		}
		d.off += 4
		return true, s == nil || s.kind == shapeBool || s.kind == shapeAny
	case 'f':
		if !hasWord(rest, "false") {
			return nil, false
		}
		d.off += 5
		return false, s == nil || s.kind == shapeBool || s.kind == shapeAny
	case 'n':
		if !hasWord(rest, "null") {
			return nil, false
		}
		d.off += 4
		// null leaves every Go value as it is, or sets it to nil.
		return nil, true
	}
	n := numberLength(rest)
	if n == 0 {
		return nil, false
	}
	text := string(rest[:n])
	d.off += n
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, false
	}
	if s == nil {
		return f, true
	}
	switch s.kind {
	case shapeAny:
	case shapeInt:
		if _, err := strconv.ParseInt(text, 10, s.bits); err != nil {
			return nil, false
		}
	case shapeUint:
		if _, err := strconv.ParseUint(text, 10, s.bits); err != nil {
			return nil, false
		}
	case shapeFloat:
		if _, err := strconv.ParseFloat(text, s.bits); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	return f, true
}

func hasWord(b []byte, word string) bool {
	return len(b) >= len(word) && string(b[:len(word)]) == word
}

// numberLength is the length of the JSON number at the start of b, 0 when
// there is none: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberLength(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return 0
		}
	}
	return i
}

// A shape is what the API server's decoder (sigs.k8s.io/json, case-sensitive,
// the rules of encoding/json) accepts for one Go type.
type shape struct {
	kind shapeKind
	// bits is the size of an integer or float kind.
	bits int
	// typ is the Go type of a custom or text decoder.
	typ reflect.Type
	// fields are a struct's fields by their exact JSON name.
	fields map[string]*shape
	// elem is a pointer's, slice's or map's element.
	elem *shape
}

type shapeKind int

const (
	// shapeUnsure is a type this pass does not judge: any value stated for
	// it sends the object to the full decoders.
	shapeUnsure shapeKind = iota
	shapeAny
	shapeBool
	shapeString
	shapeInt
	shapeUint
	shapeFloat
	shapeBytes
	shapeSlice
	shapeMap
	shapeStruct
	shapePointer
	// shapeCustom has its own UnmarshalJSON, which judges the value.
	shapeCustom
	// shapeText has its own UnmarshalText, which judges a string.
	shapeText
)

var (
	shapesMu sync.Mutex
	// shapes holds a built shape per Go type; kindShapes one per built-in
	// kind (nil when Scheme.New fails).
	shapes     = map[reflect.Type]*shape{}
	kindShapes sync.Map // schema.GroupVersionKind -> *shape
)

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func shapeOfKind(gvk schema.GroupVersionKind) *shape {
	if s, ok := kindShapes.Load(gvk); ok {
		return s.(*shape)
	}
	var s *shape
	if obj, err := newObject(gvk); err == nil && obj != nil {
		shapesMu.Lock()
		s = shapeOf(reflect.TypeOf(obj).Elem())
		shapesMu.Unlock()
	}
	kindShapes.Store(gvk, s)
	return s
}

// shapeOf builds t's shape; shapesMu is held. A type met again while it is
// being built (a recursive type) gets the same, still filling, shape.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes[t]; ok {
		return s
	}
	s := &shape{}
	shapes[t] = s
	switch {
	case t.Kind() == reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			return s // unsure
		}
		s.kind, s.elem = shapePointer, shapeOf(t.Elem())
		return s
	case t.Kind() != reflect.Interface && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)):
		s.kind, s.typ = shapeCustom, t
		return s
	case t.Kind() != reflect.Interface && (t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)):
		s.kind, s.typ = shapeText, t
		return s
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			s.kind = shapeAny
		}
	case reflect.Bool:
		s.kind = shapeBool
	case reflect.String:
		if t.Name() != "Number" { // json.Number decodes numbers into a string
			s.kind = shapeString
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s.kind, s.bits = shapeInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		s.kind, s.bits = shapeUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		s.kind, s.bits = shapeFloat, t.Bits()
	case reflect.Slice:
		s.kind = shapeSlice
		if t.Elem().Kind() == reflect.Uint8 {
			s.kind = shapeBytes
		}
		s.elem = shapeOf(t.Elem())
	case reflect.Map:
		if t.Key().Kind() == reflect.String && !reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
			s.kind, s.elem = shapeMap, shapeOf(t.Elem())
		}
	case reflect.Struct:
		if fields, ok := structFields(t); ok {
			s.kind, s.fields = shapeStruct, fields
		}
	}
	return s
}

// structFields are the fields encoding/json decodes into t, by exact name:
// exported fields by their json tag name or Go name, the fields of embedded
// structs promoted, the shallowest of a name winning. ok is false for a
// struct whose fields this pass does not judge: a field named at the same
// depth twice, a struct embedded by pointer, a tag name encoding/json would
// ignore.
func structFields(t reflect.Type) (map[string]*shape, bool) {
	type candidate struct {
		depth  int
		tagged bool
		typ    reflect.Type
		quoted bool
	}
	found := map[string][]candidate{}
	var walk func(t reflect.Type, depth int) bool
	walk = func(t reflect.Type, depth int) bool {
		for i := range t.NumField() {
			f := t.Field(i)
			ft := f.Type
			if f.Anonymous {
				if ft.Kind() == reflect.Pointer {
					if ft.Elem().Kind() == reflect.Struct {
						return false
					}
					ft = ft.Elem()
				}
				if !f.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if !validTagName(name) {
				return false
			}
			if name == "" && f.Anonymous && ft.Kind() == reflect.Struct {
				if depth > 10 || !walk(ft, depth+1) {
					return false
				}
				continue
			}
			tagged := name != ""
			if !tagged {
				name = f.Name
			}
			quoted := false
			for opt := range strings.SplitSeq(opts, ",") {
				quoted = quoted || opt == "string"
			}
			found[name] = append(found[name], candidate{depth, tagged, f.Type, quoted})
		}
		return true
	}
	if !walk(t, 0) {
		return nil, false
	}
	fields := make(map[string]*shape, len(found))
	for name, cs := range found {
		best, atBest := cs[0], 0
		for _, c := range cs {
			if c.depth < best.depth {
				best = c
			}
		}
		for _, c := range cs {
			if c.depth == best.depth {
				atBest++
			}
		}
		if atBest > 1 || best.quoted {
			return nil, false
		}
		fields[name] = shapeOf(best.typ)
	}
	return fields, true
}

// validTagName is encoding/json's test of a tag name (the empty name
// included); a name it fails is ignored there, which this pass does not
// follow.
func validTagName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9'):
			return false // encoding/json takes some non-ASCII letters; not judged here
		}
	}
	return true
}
