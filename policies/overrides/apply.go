// This file refuses, at admission, what the overrides engine (upstream)
// refuses when it applies one entry, so that a ConfigMap the operator would
// reject is never admitted. It reads the entry's patch and rejects:
//
//   - spec.replicas on metalman, whose replicas the Site owns
//     (spec.components.metalman.replicas): OverrideFieldOwnedBySite;
//   - an env var of a container or init container with both value and
//     valueFrom: OverrideEnvValueAndValueFrom;
//   - on a Deployment a strategy type other than RollingUpdate or Recreate,
//     or Recreate with rollingUpdate; on a DaemonSet an updateStrategy type
//     other than RollingUpdate or OnDelete, or OnDelete with rollingUpdate:
//     OverrideStrategyInvalid;
//   - malformed affinity the engine cannot combine with the operator's: a
//     nodeSelectorTerms that is not a list or is empty, a term that is not a
//     mapping, matchExpressions or matchFields that are not lists of
//     mappings, and preferred or pod (anti-)affinity sections that are not
//     lists of mappings: OverrideAffinityInvalid. A term without
//     requirements is accepted, as the engine accepts it; two of them that
//     the engine would combine are refused across the entries (compose.go).
//
// Nulls and directives in these places are reported by the walk instead.
// What the engine refuses across the entries that reach one workload is in
// compose.go.

package overrides

import (
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Messages of the apply-time refusals of one entry.
const (
	msgFieldOwnedBySite = "spec.replicas of component metalman is owned by the Site's spec.components.metalman.replicas, " +
		"which the operator applies over any override; set that field instead"
	msgEnvValueAndValueFrom = "an env var takes value or valueFrom, not both; the API server rejects the workload"
	msgStrategyType         = "%s must be %s"
	msgStrategyRolling      = "%s %s cannot have rollingUpdate; omit rollingUpdate"
	msgAffinityNotList      = "%s must be a list of mappings"
	msgAffinityNotMapping   = "each entry of %s must be a mapping"
	msgTermsEmpty           = "nodeSelectorTerms is empty, which matches nothing and which the API server rejects; " +
		"omit required node affinity instead"
)

// affinitySections are the affinity lists the engine concatenates with the
// operator's (upstream), below spec.template.spec.affinity.
var affinitySections = [][]string{
	{"nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"},
	{"podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"},
	{"podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"},
	{"podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"},
	{"podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"},
}

// requiredTerms is where required node affinity terms live below affinity.
var requiredTerms = []string{"nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"}

// strategyRules are the strategy field of each kind and its types.
var strategyRules = [...]struct {
	kind      workloadKind
	field     string
	types     []string
	exclusive string // the type that takes no rollingUpdate
}{
	{kind: deployment, field: "strategy", types: []string{"RollingUpdate", "Recreate"}, exclusive: "Recreate"},
	{kind: daemonSet, field: "updateStrategy", types: []string{"RollingUpdate", "OnDelete"}, exclusive: "OnDelete"},
}

// applyChecks runs the checks of this file on entry e.
func (w *walker) applyChecks(e *entry) {
	if e.patch == nil {
		return
	}
	if replicas := lookup(e.patch, "spec", "replicas"); replicas != nil && e.component == "metalman" && e.kind == deployment {
		w.deny(OverrideFieldOwnedBySite, e.path.Child(fieldPatch, "spec", "replicas"), w.evidence(replicas), msgFieldOwnedBySite)
	}
	for _, c := range e.containers {
		env := lookup(c.node, "env")
		if env == nil || env.kind != yaml.SequenceNode {
			continue
		}
		for i, item := range env.content {
			if lookup(item, "value") != nil && lookup(item, "valueFrom") != nil {
				w.deny(OverrideEnvValueAndValueFrom, c.path(e.path).Child("env").Index(i), w.evidence(item), msgEnvValueAndValueFrom)
			}
		}
	}
	for _, r := range strategyRules {
		if e.kind != r.kind {
			continue
		}
		strategy := lookup(e.patch, "spec", r.field)
		typ := lookup(strategy, "type")
		if typ == nil || isNull(typ) {
			continue
		}
		if !isString(typ) || (typ.value != r.types[0] && typ.value != r.types[1]) {
			w.deny(OverrideStrategyInvalid, e.path.Child(fieldPatch, "spec", r.field, "type"), w.evidence(typ), msgStrategyType,
				"spec."+r.field+".type", r.types[0]+" or "+r.types[1])
			continue
		}
		if typ.value == r.exclusive && lookup(strategy, "rollingUpdate") != nil {
			w.deny(OverrideStrategyInvalid, e.path.Child(fieldPatch, "spec", r.field, "rollingUpdate"), w.evidence(strategy),
				msgStrategyRolling, "a strategy of type", r.exclusive)
		}
	}
	w.checkAffinity(e)
}

// checkAffinity checks the shape of the entry's affinity and records its
// required node affinity terms.
func (w *walker) checkAffinity(e *entry) {
	affinity := lookup(e.patch, "spec", "template", "spec", "affinity")
	if affinity == nil || affinity.kind != yaml.MappingNode {
		return
	}
	// The paths below affinity, built only for a finding or for terms.
	below := func(names ...string) *field.Path {
		return e.path.Child(fieldPatch, "spec", "template", "spec", "affinity").Child(names[0], names[1:]...)
	}
	if terms := lookup(affinity, requiredTerms...); terms != nil && !isNull(terms) {
		path := below(requiredTerms...)
		switch {
		case terms.kind != yaml.SequenceNode:
			w.deny(OverrideAffinityInvalid, path, w.evidence(terms), msgAffinityNotList, "nodeSelectorTerms")
		case len(terms.content) == 0:
			w.deny(OverrideAffinityInvalid, path, "", msgTermsEmpty)
		default:
			e.terms, e.termsPath = len(terms.content), path
			for i, term := range terms.content {
				w.checkTerm(e, deref(term), path.Index(i))
			}
		}
	}
	for _, section := range affinitySections {
		if n := lookup(affinity, section...); n != nil {
			w.checkMappings(n, below(section...), section[len(section)-1])
		}
	}
}

// checkTerm checks one node selector term at path.
func (w *walker) checkTerm(e *entry, term *node, path *field.Path) {
	switch {
	case term == nil || isNull(term):
		return
	case term.kind != yaml.MappingNode:
		w.deny(OverrideAffinityInvalid, path, w.evidence(term), msgAffinityNotMapping, "nodeSelectorTerms")
		return
	}
	requirements := 0
	for _, list := range []string{"matchExpressions", "matchFields"} {
		n := lookup(term, list)
		if n == nil {
			continue
		}
		if n.kind == yaml.SequenceNode {
			requirements += len(n.content)
		}
		w.checkMappings(n, path.Child(list), list)
	}
	// A term without requirements is accepted, as the engine accepts it
	// (validate.go @ 26f231b, reportTermExpressions); combining it with
	// another such term is refused across the entries (compose.go).
	if requirements == 0 && e.emptyTerm == nil {
		e.emptyTerm = path
	}
}

// checkMappings checks that n (at path, named name), when present, is a
// list of mappings.
func (w *walker) checkMappings(n *node, path *field.Path, name string) {
	switch {
	case n == nil || isNull(n):
		return
	case n.kind != yaml.SequenceNode:
		w.deny(OverrideAffinityInvalid, path, w.evidence(n), msgAffinityNotList, name)
		return
	}
	for i, item := range n.content {
		if item = deref(item); !isNull(item) && item.kind != yaml.MappingNode {
			w.deny(OverrideAffinityInvalid, path.Index(i), w.evidence(item), msgAffinityNotMapping, name)
		}
	}
}
