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

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// walkFields checks mapping n at path against the fields r permits. owner
// is the key that holds n ("" for the patch itself and for list entries).
func (w *walker) walkFields(n *node, r *rule, path *field.Path, owner string, kind workloadKind) {
	w.pairs(n, path, false, func(key string, value *node) {
		keyPath := pathOf(path, key, false)
		if reason, ok := r.protected[key]; ok {
			w.deny(CodePathProtected, keyPath, w.evidence(value), msgProtected, reason)
			return
		}
		sub := r.fields[key]
		switch {
		case sub == nil && r.hints[key] != "":
			w.deny(CodePathNotAllowed, keyPath, w.evidence(value), msgNotAllowedHint, r.hints[key])
			return
		case sub == nil:
			w.deny(CodePathNotAllowed, keyPath, w.evidence(value), msgNotAllowed)
			return
		case sub.kinds != 0 && kind&sub.kinds == 0:
			w.deny(CodePathNotAllowed, keyPath, w.evidence(value), msgNotForKind, sub.kinds)
			return
		}
		w.descend(func() { w.walkValue(value, sub, keyPath, key, kind) })
	})
}

// walkValue checks the value n, at path under the key owner, against r.
func (w *walker) walkValue(n *node, r *rule, path *field.Path, owner string, kind workloadKind) {
	n, ok := w.enter(n)
	switch {
	case !ok:
		return
	case isNull(n):
		w.deny(CodeNull, path, "", msgNull)
		return
	case !w.checkShape(n, r.shape, path):
		return
	}
	switch {
	case r.strings:
		w.walkStrings(n, path, r.reserved)
	case n.kind == yaml.SequenceNode:
		w.walkList(n, r, path, kind)
	case r.open:
		w.walkOpen(n, path, owner)
	case r.fields != nil:
		w.walkFields(n, r, path, owner, kind)
	default:
		w.checkScalar(n, path)
	}
}

// walkList checks the entries of list n at path against r.
func (w *walker) walkList(n *node, r *rule, path *field.Path, kind workloadKind) {
	for i, item := range n.content {
		itemPath := path.Index(i)
		w.descend(func() {
			item, ok := w.enter(item)
			switch {
			case !ok:
				return
			case isNull(item):
				w.deny(CodeNull, itemPath, "", msgNull)
				return
			case !w.checkShape(item, r.itemShape, itemPath):
				return
			}
			if r.key.field != "" {
				w.checkListKey(item, r.key, itemPath)
			}
			if r.items != nil {
				w.walkFields(item, r.items, itemPath, "", kind)
			} else {
				w.walkOpen(item, itemPath, "")
			}
		})
	}
}

// walkOpen checks n, at path under the key owner, inside a permitted
// subtree: only what walker.go rejects everywhere and reserved label and
// annotation keys. Field names are not matched here: the protected fields
// are positions outside every permitted subtree.
func (w *walker) walkOpen(n *node, path *field.Path, owner string) {
	switch n.kind {
	case yaml.MappingNode:
		keyed := dataKeyed[owner]
		reserved := owner == "labels" || owner == "annotations"
		w.pairs(n, path, keyed, func(key string, value *node) {
			keyPath := pathOf(path, key, keyed)
			if keyed && reserved && isReserved(key) {
				w.deny(CodeReservedKey, keyPath, w.evidence(value), msgReserved)
				return
			}
			w.descend(func() {
				value, ok := w.enter(value)
				switch {
				case !ok:
				case isNull(value):
					w.deny(CodeNull, keyPath, "", msgNull)
				default:
					w.walkOpen(value, keyPath, key)
				}
			})
		})
	case yaml.SequenceNode:
		for i, item := range n.content {
			w.descend(func() {
				item, ok := w.enter(item)
				switch {
				case !ok:
				case isNull(item):
					w.deny(CodeNull, path.Index(i), "", msgNull)
				default:
					w.walkOpen(item, path.Index(i), "")
				}
			})
		}
	default:
		w.checkScalar(n, path)
	}
}

// walkStrings checks a map of strings (labels, annotations, nodeSelector);
// with reserved set its keys must not use the operator's prefix.
func (w *walker) walkStrings(n *node, path *field.Path, reserved bool) {
	w.pairs(n, path, true, func(key string, value *node) {
		keyPath := path.Key(key)
		if reserved && isReserved(key) {
			w.deny(CodeReservedKey, keyPath, w.evidence(value), msgReserved)
			return
		}
		w.descend(func() {
			value, ok := w.enter(value)
			switch {
			case !ok:
			case isNull(value):
				w.deny(CodeNull, keyPath, "", msgNull)
			case !isString(value):
				w.deny(CodeTypeInvalid, keyPath, w.evidence(value), msgNotString)
			}
		})
	})
}

// checkShape reports n at path unless it has shape s.
func (w *walker) checkShape(n *node, s shape, path *field.Path) bool {
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
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgShape, s, kindName(n))
	}
	return ok
}

// checkScalar reports a scalar (not null) that JSON cannot carry as the
// operator's merge needs it.
func (w *walker) checkScalar(n *node, path *field.Path) {
	switch n.tag {
	case tagString, tagInt, tagBool:
	case tagFloat:
		if !isFinite(n.value) {
			w.deny(CodeTypeInvalid, path, w.evidence(n), msgNotFinite)
		}
	case tagTimestamp:
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgTimestamp)
	default:
		w.deny(CodeTypeInvalid, path, w.evidence(n), msgTagUnsupported)
	}
}

// checkListKey reports an entry, item, of a merged list that lacks its
// merge key or holds one of the wrong type. A null key is reported as null
// by the walk.
func (w *walker) checkListKey(item *node, key listKey, path *field.Path) {
	value := lookup(item, key.field)
	switch {
	case value == nil:
		w.deny(CodeListKeyInvalid, path, w.evidence(item), msgListKeyMissing, key.field)
	case isNull(value):
	case key.number && !isNumber(value):
		w.deny(CodeListKeyInvalid, path.Child(key.field), w.evidence(value), msgListKeyNotPort, key.field)
	case !key.number && (!isString(value) || value.value == ""):
		w.deny(CodeListKeyInvalid, path.Child(key.field), w.evidence(value), msgListKeyNotName, key.field)
	}
}
