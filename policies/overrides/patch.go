// This file walks a patch against the allowlist (allowlist.go). It reads
// every key and value of the patch and reports:
//
//   - a protected field (protected.go), at its position: OverridePathProtected;
//   - a field outside the allowlist, or one the entry's kind does not have:
//     OverridePathNotAllowed;
//   - a value of the wrong type for its field, a non-string label,
//     annotation or nodeSelector value, and scalars that JSON, and so the
//     operator's merge, cannot carry (YAML timestamps, binary or custom tags,
//     infinities, NaN): OverrideTypeInvalid;
//   - a merged-list entry without its merge key: OverrideListKeyInvalid;
//   - a reserved label or annotation key: OverrideReservedKey;
//   - nulls, directives, merge keys and repeated keys (walker.go).
//
// Nothing below a rejected field is reported: the field is denied whatever
// it holds.

package overrides

import yaml "go.yaml.in/yaml/v3"

// Messages of the allowlist.
const (
	msgNotAllowed     = "this field is not on the override allowlist, so a patch may not set it"
	msgNotAllowedHint = msgNotAllowed + "; %s"
	msgNotForKind     = "this field is permitted on %s only"
	msgShape          = "this field must be %s, but the patch has %s; check the indentation"
	msgNotString      = "this value must be a string; quote it"
	msgTimestamp      = "this value is a YAML timestamp, which the operator cannot merge; quote it if it is meant as a string"
	msgTagUnsupported = "this value has a YAML tag the operator cannot merge; write it as a plain string, number or boolean"
	msgNotFinite      = "this number is infinite or not a number, which the operator cannot merge"
	msgListKeyMissing = "each entry of this list needs a %s, which strategic merge uses to find the entry it changes"
	msgListKeyNotName = "%s identifies this entry for strategic merge and must be a non-empty string"
	msgListKeyNotPort = "%s identifies this entry for strategic merge and must be a number"
)

// walkFields checks mapping n at p against the fields r permits. owner
// is the key that holds n ("" for the patch itself and for list entries).
func (w *walker) walkFields(n *node, r *rule, p place, owner string, kind workloadKind) {
	w.pairs(n, p, false, func(key string, value *node) {
		at := w.child(p, key, false)
		if reason, ok := r.protected[key]; ok {
			w.deny(OverridePathProtected, w.path(at), w.evidence(value), msgProtected, reason)
			return
		}
		sub := r.fields[key]
		switch {
		case sub == nil && r.hints[key] != "":
			w.deny(OverridePathNotAllowed, w.path(at), w.evidence(value), msgNotAllowedHint, r.hints[key])
			return
		case sub == nil:
			w.deny(OverridePathNotAllowed, w.path(at), w.evidence(value), msgNotAllowed)
			return
		case sub.kinds != 0 && kind&sub.kinds == 0:
			w.deny(OverridePathNotAllowed, w.path(at), w.evidence(value), msgNotForKind, sub.kinds)
			return
		}
		w.descend(func() { w.walkValue(value, sub, at, key, kind) })
	})
}

// walkValue checks the value n, at p under the key owner, against r.
func (w *walker) walkValue(n *node, r *rule, p place, owner string, kind workloadKind) {
	n, ok := w.enter(n)
	switch {
	case !ok:
		return
	case isNull(n):
		w.deny(OverrideNull, w.path(p), "", msgNull)
		return
	case !w.checkShape(n, r.shape, p):
		return
	}
	switch {
	case r.strings:
		w.walkStrings(n, p, r.reserved)
	case n.kind == yaml.SequenceNode:
		w.walkList(n, r, p, kind)
	case r.open:
		w.walkOpen(n, p, owner)
	case r.fields != nil:
		w.walkFields(n, r, p, owner, kind)
	default:
		w.checkScalar(n, p)
	}
}

// walkList checks the entries of list n at p against r.
func (w *walker) walkList(n *node, r *rule, p place, kind workloadKind) {
	for i, item := range n.content {
		w.descend(func() {
			at := w.item(p, i)
			item, ok := w.enter(item)
			switch {
			case !ok:
				return
			case isNull(item):
				w.deny(OverrideNull, w.path(at), "", msgNull)
				return
			case !w.checkShape(item, r.itemShape, at):
				return
			}
			if r.key.field != "" {
				w.checkListKey(item, r.key, at)
			}
			if r.items != nil {
				w.walkFields(item, r.items, at, "", kind)
			} else {
				w.walkOpen(item, at, "")
			}
		})
	}
}

// walkOpen checks n, at p under the key owner, inside a permitted subtree:
// only what walker.go rejects everywhere and reserved label and annotation
// keys. Field names are not matched here: the protected fields are
// positions outside every permitted subtree.
func (w *walker) walkOpen(n *node, p place, owner string) {
	switch n.kind {
	case yaml.MappingNode:
		keyed := dataKeyed[owner]
		reserved := owner == "labels" || owner == "annotations"
		w.pairs(n, p, keyed, func(key string, value *node) {
			at := w.child(p, key, keyed)
			if keyed && reserved && isReserved(key) {
				w.deny(OverrideReservedKey, w.path(at), w.evidence(value), msgReserved)
				return
			}
			w.descend(func() {
				value, ok := w.enter(value)
				switch {
				case !ok:
				case isNull(value):
					w.deny(OverrideNull, w.path(at), "", msgNull)
				default:
					w.walkOpen(value, at, key)
				}
			})
		})
	case yaml.SequenceNode:
		for i, item := range n.content {
			w.descend(func() {
				at := w.item(p, i)
				item, ok := w.enter(item)
				switch {
				case !ok:
				case isNull(item):
					w.deny(OverrideNull, w.path(at), "", msgNull)
				default:
					w.walkOpen(item, at, "")
				}
			})
		}
	default:
		w.checkScalar(n, p)
	}
}

// walkStrings checks a map of strings (labels, annotations, nodeSelector)
// at p; with reserved set its keys must not use the operator's prefix.
func (w *walker) walkStrings(n *node, p place, reserved bool) {
	w.pairs(n, p, true, func(key string, value *node) {
		at := w.child(p, key, true)
		if reserved && isReserved(key) {
			w.deny(OverrideReservedKey, w.path(at), w.evidence(value), msgReserved)
			return
		}
		w.descend(func() {
			value, ok := w.enter(value)
			switch {
			case !ok:
			case isNull(value):
				w.deny(OverrideNull, w.path(at), "", msgNull)
			case !isString(value):
				w.deny(OverrideTypeInvalid, w.path(at), w.evidence(value), msgNotString)
			}
		})
	})
}

// checkShape reports n at p unless it has shape s.
func (w *walker) checkShape(n *node, s shape, p place) bool {
	var ok bool
	switch s {
	case shapeScalar:
		ok = n.kind == yaml.ScalarNode
	case shapeMap:
		ok = n.kind == yaml.MappingNode
	case shapeList:
		ok = n.kind == yaml.SequenceNode
	default:
		ok = true
	}
	if !ok {
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgShape, s, kindName(n))
	}
	return ok
}

// checkScalar reports a scalar (not null) at p that JSON cannot carry as
// the operator's merge needs it.
func (w *walker) checkScalar(n *node, p place) {
	switch n.tag {
	case tagString, tagInt, tagBool:
	case tagFloat:
		if !isFinite(n.value) {
			w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgNotFinite)
		}
	case tagTimestamp:
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgTimestamp)
	default:
		w.deny(OverrideTypeInvalid, w.path(p), w.evidence(n), msgTagUnsupported)
	}
}

// checkListKey reports an entry, item at p, of a merged list that lacks
// its merge key or holds one of the wrong type. A null key is reported as
// null by the walk.
func (w *walker) checkListKey(item *node, key listKey, p place) {
	value := lookup(item, key.field)
	switch {
	case value == nil:
		w.deny(OverrideListKeyInvalid, w.path(p), w.evidence(item), msgListKeyMissing, key.field)
	case isNull(value):
	case key.number && !isNumber(value):
		w.deny(OverrideListKeyInvalid, w.path(p).Child(key.field), w.evidence(value), msgListKeyNotPort, key.field)
	case !key.number && (!isString(value) || value.value == ""):
		w.deny(OverrideListKeyInvalid, w.path(p).Child(key.field), w.evidence(value), msgListKeyNotName, key.field)
	}
}
