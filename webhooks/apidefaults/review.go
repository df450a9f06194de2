package apidefaults

import (
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ReviewObjects are the objects of an AdmissionReview as ReadReview
// decoded them.
type ReviewObjects struct {
	// Object and OldObject are request.object and request.oldObject.
	Object, OldObject ReviewObject
}

// ReviewObject is one object of a review.
type ReviewObject struct {
	// Raw is the object's JSON within the body; nil when the review has no
	// such object or it is null.
	Raw []byte
	// Map is Raw as DecodeMap decodes it, for Kind.
	Map map[string]any
	// Kind is the request.kind the object was judged as.
	Kind schema.GroupVersionKind
}

// ReadReview reads body, an AdmissionReview, in one pass: its type into tm,
// its request into req as sigs.k8s.io/json decodes it into the review's Go
// type, and its objects also into the maps DecodeMap makes of them. ok is
// false whenever ReadReview is not sure, and the caller then decodes the
// body the slow way (req may hold part of the request): the body, its
// request or an object is not a JSON object (an object may be null), a
// field of the review type is stated twice or null or holds a value of
// another JSON type, request.kind comes after an object (the API server
// writes it first), or DecodeMap would decline an object. What ReadReview
// accepts, the whole decode accepts and decodes alike: FuzzReadReview
// compares them.
func ReadReview(body []byte, req *admissionv1.AdmissionRequest) (tm metav1.TypeMeta, objects ReviewObjects, ok bool) {
	d := decoder{data: body, text: string(body)}
	if d.skipSpace(); !d.at('{') {
		return tm, objects, false
	}
	var seen fieldSet
	ok = d.members(func(key string) bool {
		switch key {
		case "apiVersion":
			return seen.first(0) && d.stringInto(&tm.APIVersion)
		case "kind":
			return seen.first(1) && d.stringInto(&tm.Kind)
		case "request":
			return seen.first(2) && d.request(req, &objects)
		}
		return d.skip()
	})
	if d.skipSpace(); !ok || d.off != len(d.data) {
		return metav1.TypeMeta{}, ReviewObjects{}, false
	}
	return tm, objects, true
}

// fieldSet is the fields of one JSON object read so far, by index.
type fieldSet uint32

// first marks field i read and reports whether it was not before.
func (s *fieldSet) first(i int) bool {
	if *s&(1<<i) != 0 {
		return false
	}
	*s |= 1 << i
	return true
}

// request reads the review's request.
func (d *decoder) request(req *admissionv1.AdmissionRequest, objects *ReviewObjects) bool {
	if d.skipSpace(); !d.at('{') {
		return false
	}
	var seen fieldSet
	return d.members(func(key string) bool {
		switch key {
		case "uid":
			return seen.first(0) && d.stringInto((*string)(&req.UID))
		case "kind":
			return seen.first(1) && d.groupVersion(&req.Kind.Group, &req.Kind.Version, "kind", &req.Kind.Kind)
		case "resource":
			return seen.first(2) && d.groupVersion(&req.Resource.Group, &req.Resource.Version, "resource", &req.Resource.Resource)
		case "subResource":
			return seen.first(3) && d.stringInto(&req.SubResource)
		case "requestKind":
			req.RequestKind = &metav1.GroupVersionKind{}
			k := req.RequestKind
			return seen.first(4) && d.groupVersion(&k.Group, &k.Version, "kind", &k.Kind)
		case "requestResource":
			req.RequestResource = &metav1.GroupVersionResource{}
			r := req.RequestResource
			return seen.first(5) && d.groupVersion(&r.Group, &r.Version, "resource", &r.Resource)
		case "requestSubResource":
			return seen.first(6) && d.stringInto(&req.RequestSubResource)
		case "name":
			return seen.first(7) && d.stringInto(&req.Name)
		case "namespace":
			return seen.first(8) && d.stringInto(&req.Namespace)
		case "operation":
			return seen.first(9) && d.stringInto((*string)(&req.Operation))
		case "userInfo":
			return seen.first(10) && d.userInfo(&req.UserInfo)
		case "object":
			// The object is judged as the kind stated before it.
			return seen.first(11) && seen&(1<<1) != 0 && d.reviewObject(&objects.Object, &req.Object, schema.GroupVersionKind(req.Kind))
		case "oldObject":
			return seen.first(12) && seen&(1<<1) != 0 && d.reviewObject(&objects.OldObject, &req.OldObject, schema.GroupVersionKind(req.Kind))
		case "dryRun":
			if !seen.first(13) || !d.at('t') && !d.at('f') {
				return false
			}
			v, ok := d.literal(nil)
			b, _ := v.(bool)
			req.DryRun = &b
			return ok
		case "options":
			start := d.off
			if !seen.first(14) || d.at('n') || !d.skip() {
				return false
			}
			req.Options.Raw = d.data[start:d.off]
			return true
		}
		return d.skip()
	})
}

// reviewObject reads a request's object into o and raw: null, or a JSON object of
// kind gvk that DecodeMap accepts.
func (d *decoder) reviewObject(o *ReviewObject, raw *runtime.RawExtension, gvk schema.GroupVersionKind) bool {
	if d.at('n') {
		v, ok := d.literal(nil)
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
	start := d.off
	v, ok := d.value(s)
	if !ok {
		return false
	}
	o.Map, _ = v.(map[string]any)
	o.Raw, o.Kind = d.data[start:d.off], gvk
	raw.Raw = o.Raw
	return o.Map != nil
}

// groupVersion reads a GroupVersionKind or GroupVersionResource: an object
// of strings group, version and last (kind or resource).
func (d *decoder) groupVersion(group, version *string, last string, lastValue *string) bool {
	if !d.at('{') {
		return false
	}
	var seen fieldSet
	return d.members(func(key string) bool {
		switch key {
		case "group":
			return seen.first(0) && d.stringInto(group)
		case "version":
			return seen.first(1) && d.stringInto(version)
		case last:
			return seen.first(2) && d.stringInto(lastValue)
		}
		return d.skip()
	})
}

// userInfo reads the requesting user.
func (d *decoder) userInfo(u *authenticationv1.UserInfo) bool {
	if !d.at('{') {
		return false
	}
	var seen fieldSet
	return d.members(func(key string) bool {
		switch key {
		case "username":
			return seen.first(0) && d.stringInto(&u.Username)
		case "uid":
			return seen.first(1) && d.stringInto(&u.UID)
		case "groups":
			return seen.first(2) && d.strings(&u.Groups)
		case "extra":
			if !seen.first(3) || !d.at('{') {
				return false
			}
			u.Extra = map[string]authenticationv1.ExtraValue{}
			return d.members(func(key string) bool {
				if _, twice := u.Extra[key]; twice {
					return false
				}
				var v []string
				ok := d.strings(&v)
				u.Extra[key] = authenticationv1.ExtraValue(v)
				return ok
			})
		}
		return d.skip()
	})
}

// stringInto reads a JSON string into v.
func (d *decoder) stringInto(v *string) bool {
	if !d.at('"') {
		return false
	}
	s, ok := d.str()
	*v = s
	return ok
}

// strings reads a JSON array of strings into v (empty, not nil, for []).
func (d *decoder) strings(v *[]string) bool {
	if !d.at('[') {
		return false
	}
	*v = []string{}
	return d.elements(func() bool {
		var s string
		ok := d.stringInto(&s)
		*v = append(*v, s)
		return ok
	})
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
		return d.elements(d.skip)
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
