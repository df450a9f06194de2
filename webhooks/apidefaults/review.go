package apidefaults

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SplitReview is an AdmissionReview body read in one pass: its objects
// decoded as DecodeMap decodes them, and the rest of the body (the
// envelope) left for a decoder of the review's Go type, which then reads a
// few hundred bytes instead of the whole body.
type SplitReview struct {
	// Envelope is the body with the values of request.object and
	// request.oldObject each replaced by null.
	Envelope []byte
	// Object and OldObject are request.object and request.oldObject.
	Object, OldObject SplitObject
}

// SplitObject is one object of a review.
type SplitObject struct {
	// Raw is the object's JSON within the body; nil when the review has no
	// such object or it is null.
	Raw []byte
	// Map is Raw as DecodeMap decodes it, for Kind.
	Map map[string]any
	// Kind is the request.kind the object was judged as: the last one the
	// request stated before the object.
	Kind schema.GroupVersionKind
	seen bool
}

// Split reads body, an AdmissionReview, in one pass. ok is false, and the
// caller decodes the body the slow way, whenever Split is not sure: the body
// or its request is not a JSON object, request.kind does not come before
// the objects (the API server writes it first), a request or an object is
// stated twice, an object is neither null nor a JSON object, or DecodeMap
// would decline it. So a body Split accepts is a valid JSON document whose
// envelope, decoded into the review's Go type, gives the review the whole
// body gives, once the objects' Raw are put back (the caller checks that
// request.kind decodes to each object's Kind).
func Split(body []byte) (split SplitReview, ok bool) {
	d := decoder{data: body, text: string(body)}
	d.skipSpace()
	if !d.at('{') {
		return SplitReview{}, false
	}
	var spans spans
	seenRequest := false
	ok = d.members(func(key string) bool {
		if key != "request" {
			return d.skip()
		}
		if seenRequest {
			return false
		}
		seenRequest = true
		return d.request(&split, &spans)
	})
	if d.skipSpace(); !ok || d.off != len(d.data) {
		return SplitReview{}, false
	}
	removed := 0
	for _, s := range spans.at[:spans.n] {
		removed += s[1] - s[0] - len("null")
	}
	env := make([]byte, 0, len(body)-removed)
	prev := 0
	for _, s := range spans.at[:spans.n] {
		env = append(append(env, body[prev:s[0]]...), "null"...)
		prev = s[1]
	}
	split.Envelope = append(env, body[prev:]...)
	return split, true
}

// request reads the review's request, an object, decoding its objects as
// the kind stated before them and recording where they are.
func (d *decoder) request(split *SplitReview, spans *spans) bool {
	if d.skipSpace(); !d.at('{') {
		return false
	}
	var gvk schema.GroupVersionKind
	haveKind := false
	return d.members(func(key string) bool {
		var o *SplitObject
		switch key {
		case "kind":
			gvk, haveKind = schema.GroupVersionKind{}, true
			return d.kind(&gvk)
		case "object":
			o = &split.Object
		case "oldObject":
			o = &split.OldObject
		default:
			return d.skip()
		}
		if o.seen || !haveKind {
			return false
		}
		o.seen, o.Kind = true, gvk
		d.skipSpace()
		start := d.off
		if d.at('n') {
			v, ok := d.literal(nil)
			spans.add(start, d.off)
			return ok && v == nil
		}
		if !d.at('{') {
			return false
		}
		var s *shape
		if IsBuiltin(gvk) {
			if s = shapeOfKind(gvk); s == nil {
				return false
			}
		}
		v, ok := d.value(s)
		if !ok {
			return false
		}
		o.Map, _ = v.(map[string]any)
		o.Raw = d.data[start:d.off]
		spans.add(start, d.off)
		return o.Map != nil
	})
}

// spans are where a request's objects are in the body, in order: at most
// two, since each is read once.
type spans struct {
	at [2][2]int
	n  int
}

func (s *spans) add(start, end int) {
	s.at[s.n] = [2]int{start, end}
	s.n++
}

// kind reads request.kind's group, version and kind into gvk (as far as
// they are strings; the review type's decoder has the last word).
func (d *decoder) kind(gvk *schema.GroupVersionKind) bool {
	if d.skipSpace(); !d.at('{') {
		return d.skip()
	}
	return d.members(func(key string) bool {
		var field *string
		switch key {
		case "group":
			field = &gvk.Group
		case "version":
			field = &gvk.Version
		case "kind":
			field = &gvk.Kind
		}
		if d.skipSpace(); field == nil || !d.at('"') {
			return d.skip()
		}
		v, ok := d.str()
		*field = v
		return ok
	})
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
	d.skipSpace()
	if d.at('}') {
		d.off++
		d.depth--
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
		if !member(key) {
			return false
		}
		d.skipSpace()
		switch {
		case d.at(','):
			d.off++
		case d.at('}'):
			d.off++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// skip reads one JSON value without keeping it: the envelope's values are
// the review type's decoder's to read; this pass only follows the document.
func (d *decoder) skip() bool {
	d.skipSpace()
	if d.off >= len(d.data) {
		return false
	}
	switch d.data[d.off] {
	case '{':
		return d.members(func(string) bool { return d.skip() })
	case '[':
		if d.depth++; d.depth > maxDepth {
			return false
		}
		d.off++
		if d.skipSpace(); d.at(']') {
			d.off++
			d.depth--
			return true
		}
		for {
			if !d.skip() {
				return false
			}
			d.skipSpace()
			switch {
			case d.at(','):
				d.off++
			case d.at(']'):
				d.off++
				d.depth--
				return true
			default:
				return false
			}
		}
	case '"':
		_, ok := d.str()
		return ok
	case 't', 'f', 'n':
		_, ok := d.literal(nil)
		return ok
	default:
		n := numberLength(d.data[d.off:])
		d.off += n
		return n > 0
	}
}
