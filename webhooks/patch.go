package webhooks

import (
	"sort"
	"strconv"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
)

// canonicalPatch orders a generated patch so the same request always gets
// the same patch bytes (the generator walks Go maps). Operations compare
// path segment by segment, array indices by number. The only operations
// whose order matters are those the generator writes at the tail of one
// array: adds in ascending index order, removes in descending order (every
// other operation on that array's elements has a lower index and is not
// shifted by them). Sorting a remove's final index in reverse keeps both.
func canonicalPatch(ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	sort.SliceStable(ops, func(i, j int) bool { return comparePatchPaths(ops[i], ops[j]) < 0 })
	return ops
}

// comparePatchPaths orders two operations by path, segment by segment,
// without allocating: array indices by number (a remove's final index in
// reverse), an index before a name, names as strings; a parent before its
// children; then by operation.
func comparePatchPaths(a, b jsonpatch.JsonPatchOperation) int {
	pa, pb := a.Path, b.Path
	for {
		if pa == "" || pb == "" {
			if pa != pb {
				if pa == "" {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Operation, b.Operation)
		}
		sa, ra := nextSegment(pa)
		sb, rb := nextSegment(pb)
		if c := compareSegments(sa, ra == "" && a.Operation == "remove", sb, rb == "" && b.Operation == "remove"); c != 0 {
			return c
		}
		pa, pb = ra, rb
	}
}

// nextSegment splits "/a/b" into "a" and "/b".
func nextSegment(path string) (segment, rest string) {
	path = path[1:]
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i], path[i:]
	}
	return path, ""
}

func compareSegments(a string, aRemoved bool, b string, bRemoved bool) int {
	na, aIndex := arrayIndex(a)
	nb, bIndex := arrayIndex(b)
	switch {
	case aIndex && bIndex:
		if aRemoved {
			na = -na - 1
		}
		if bRemoved {
			nb = -nb - 1
		}
		return na - nb
	case aIndex:
		return -1
	case bIndex:
		return 1
	}
	return strings.Compare(a, b)
}

// arrayIndex reads a segment written as an array index ("0", "12"; not
// "01", "-1" or "+1").
func arrayIndex(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
