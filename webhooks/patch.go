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
	keys := make(map[string][]patchSegment, len(ops))
	for _, op := range ops {
		keys[op.Operation+op.Path] = patchKey(op)
	}
	sort.SliceStable(ops, func(i, j int) bool {
		a, b := keys[ops[i].Operation+ops[i].Path], keys[ops[j].Operation+ops[j].Path]
		for k := 0; k < len(a) && k < len(b); k++ {
			if c := a[k].compare(b[k]); c != 0 {
				return c < 0
			}
		}
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return ops[i].Operation < ops[j].Operation
	})
	return ops
}

// patchSegment is one segment of a patch path, as canonicalPatch orders it.
type patchSegment struct {
	index   int // for an array index; reversed for the last one of a remove
	isIndex bool
	text    string
}

func patchKey(op jsonpatch.JsonPatchOperation) []patchSegment {
	parts := strings.Split(op.Path, "/")[1:]
	out := make([]patchSegment, len(parts))
	for i, p := range parts {
		out[i].text = p
		if n, err := strconv.Atoi(p); err == nil && n >= 0 && strconv.Itoa(n) == p {
			out[i].index, out[i].isIndex = n, true
			if op.Operation == "remove" && i == len(parts)-1 {
				out[i].index = -n - 1
			}
		}
	}
	return out
}

func (s patchSegment) compare(o patchSegment) int {
	switch {
	case s.isIndex && o.isIndex:
		return s.index - o.index
	case s.isIndex != o.isIndex:
		if s.isIndex {
			return -1
		}
		return 1
	}
	return strings.Compare(s.text, o.text)
}
