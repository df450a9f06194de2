// This file holds the YAML node the checks read: of what yaml/v3's Node
// holds, only its kind, resolved tag, value, and children or alias target,
// in 64 bytes instead of 160, since a review builds hundreds of nodes. A
// document in block style is read straight into nodes (blockstyle.go); any
// other is parsed by yaml/v3 and converted, aliases kept as aliases.

package overrides

import yaml "go.yaml.in/yaml/v3"

// node is one YAML node.
type node struct {
	kind yaml.Kind
	// tag is the resolved tag in short form, as yaml.Node.ShortTag has it.
	tag   string
	value string
	// content are the children of a mapping (keys and values in turn) or
	// of a list; an alias's is the anchored node it stands for (deref).
	content []*node
}

// nodesPerSlab is how many nodes are allocated together (8 KiB).
const nodesPerSlab = 128

// nodeSlab hands out nodes allocated together, nodesPerSlab at a time (or
// fewer, as its user decides).
type nodeSlab struct {
	free []node
	size int
}

// take returns a new node.
func (s *nodeSlab) take(kind yaml.Kind, tag, value string) *node {
	if len(s.free) == 0 {
		s.free = make([]node, max(s.size, 1))
	}
	n := &s.free[0]
	s.free = s.free[1:]
	n.kind, n.tag, n.value = kind, tag, value
	return n
}

// fromYAML converts the tree yaml/v3 built under n. An anchored node is
// converted once, however many aliases name it, so that a document whose
// aliases expand far past the walk budget stays as small as its text.
func fromYAML(n *yaml.Node) *node {
	c := converter{slab: nodeSlab{size: nodesPerSlab}, anchored: map[*yaml.Node]*node{}}
	return c.convert(n)
}

type converter struct {
	slab     nodeSlab
	anchored map[*yaml.Node]*node
}

func (c *converter) convert(n *yaml.Node) *node {
	if n == nil {
		return nil
	}
	if converted, ok := c.anchored[n]; ok {
		return converted
	}
	out := c.slab.take(n.Kind, n.ShortTag(), n.Value)
	if n.Anchor != "" {
		// Before the children: an alias below may name this node.
		c.anchored[n] = out
	}
	if n.Alias != nil {
		out.content = []*node{c.convert(n.Alias)}
		return out
	}
	if len(n.Content) > 0 {
		out.content = make([]*node, len(n.Content))
		for i, child := range n.Content {
			out.content[i] = c.convert(child)
		}
	}
	return out
}
