// This file warns about patch settings that are permitted but have a cost
// (docs/contracts.md §9). It reads the args, command and image of each container
// and init container the patch modifies (not of those it adds, which have
// nothing to replace and no operator image to follow):
//
//   - args, command: strategic merge replaces the whole list, dropping the
//     arguments the operator sets; extraArgs appends instead;
//   - image: the container stays on that image across operator upgrades.
//
// A value of the wrong type is reported by the walk instead.

package overrides

import yaml "go.yaml.in/yaml/v3"

// Warning messages.
const (
	msgArgsReplaced = "setting %s replaces the whole list of %s %s, dropping what the operator sets there now " +
		"and anything it adds in later releases; use extraArgs to append arguments instead"
	msgImagePinned = "overriding the image pins %s %s to it across operator upgrades: the component no longer follows " +
		"the operator's version"
)

// warnReplacements reports the warnings of this file for entry e.
func (w *walker) warnReplacements(e *entry) {
	for _, c := range e.containers {
		if e.adds(c) {
			continue
		}
		for _, list := range []string{"args", "command"} {
			if value := lookup(c.node, list); value != nil && value.kind == yaml.SequenceNode {
				w.warn(OverrideArgsReplaced, c.path(e.path).Child(list), w.evidence(value), msgArgsReplaced,
					list, containerNoun(c.init), c.name)
			}
		}
		if image := lookup(c.node, "image"); image != nil && image.kind == yaml.ScalarNode && !isNull(image) {
			w.warn(OverrideImagePinned, c.path(e.path).Child("image"), w.evidence(image), msgImagePinned,
				containerNoun(c.init), c.name)
		}
	}
}
