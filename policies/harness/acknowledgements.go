// This file decides what a dangerous grant (a rule of spec.clusterRoles, or
// the role a binding references) reports, from the
// mode and spec.acknowledgedGrants[*]{name, apiGroups, resources, verbs,
// reason} (api/harness/v1). It allows:
//
//   - an acknowledgement with a name (a DNS-1123 label, unique in the list),
//     non-empty apiGroups, resources and verbs (lists of strings), and a
//     reason of 10 to 1024 characters (at least 10 after trimming white
//     space); anything else is HarnessAcknowledgementInvalid and
//     acknowledges nothing;
//   - an acknowledged dangerous rule: a warning (HarnessGrantAcknowledged)
//     in either mode, naming the entries that acknowledge it; an
//     unacknowledged one denies (HarnessGrantDangerous) in Enforce mode and
//     warns in Report mode;
//   - an acknowledgement that acknowledges no dangerous rule warns
//     (HarnessAcknowledgementUnused).
//
// Coverage: a dangerous grant is acknowledged when each of its dangerous
// (apiGroup, resource, verb) triples (dangerous.go) is listed by some valid
// entry, one entry listing the apiGroup, the resource and the verb of that
// triple; different triples of one rule may be covered by different entries.
// Strings compare literally: "*" in an entry matches only a literal "*" in
// the rule, so an entry never covers a wider grant than it names. A grant
// past MaxTriples cannot be acknowledged (HarnessGrantTooLarge, in both
// modes). A triple is credited to the first entry
// (in list order) that lists it; an entry credited in no acknowledged rule
// (it lists no dangerous triple, only triples an earlier entry covers, or
// only part of a rule) is unused.
//
// Messages name entries by their validated name and never repeat a reason:
// it is free text.
package harness

import (
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// MinReasonLength and MaxReasonLength bound, in characters, an
// acknowledgement's reason (as the CRD does).
const (
	MinReasonLength = 10
	MaxReasonLength = 1024
)

var pathAcknowledgedGrants = field.NewPath("spec", "acknowledgedGrants")

// acknowledgement is one valid entry of spec.acknowledgedGrants.
type acknowledgement struct {
	index                    int
	name                     string
	groups, resources, verbs []string
	used                     bool
}

func (a *acknowledgement) covers(t triple) bool {
	return slices.Contains(a.groups, t.group) && slices.Contains(a.resources, t.resource) && slices.Contains(a.verbs, t.verb)
}

func (r *review) checkGrants(obj map[string]any) {
	dangerous := append(r.dangerousRules(obj), r.boundGrants(obj)...)
	acks := r.acknowledgements(obj)

	for _, d := range dangerous {
		reasons := strings.Join(d.reasons, " and ")
		if d.tooMany {
			r.findings = append(r.findings, policies.Unratcheted(HarnessGrantTooLarge, d.path,
				"%s grants %s through more than %d (apiGroup, resource, verb) combinations, more than the review "+
					"enumerates to match acknowledgements; split or narrow it", d.what, reasons, MaxTriples))
			continue
		}
		if by := coverage(acks, d); by != nil {
			names := make([]string, 0, len(by))
			for _, k := range by {
				acks[k].used = true
				names = append(names, acks[k].name)
			}
			r.findings = append(r.findings, policies.Warning(HarnessGrantAcknowledged, d.path, d.evidence,
				"%s grants %s; allowed by %s %s in spec.acknowledgedGrants",
				d.what, reasons, policies.Plural(len(names), "acknowledgement"), strings.Join(names, ", ")))
			continue
		}
		if r.mode == ModeReport {
			r.findings = append(r.findings, policies.Warning(HarnessGrantDangerous, d.path, d.evidence,
				"%s grants %s; it would be denied in %s mode unless acknowledged in spec.acknowledgedGrants",
				d.what, reasons, ModeEnforce))
			continue
		}
		r.findings = append(r.findings, policies.Denial(HarnessGrantDangerous, d.path, d.evidence,
			"%s grants %s; narrow it, or list each of its dangerous (apiGroup, resource, verb) "+
				"combinations literally in a named spec.acknowledgedGrants entry with a reason",
			d.what, reasons))
	}
	for i := range acks {
		if !acks[i].used {
			r.findings = append(r.findings, policies.Warning(HarnessAcknowledgementUnused, pathAcknowledgedGrants.Index(acks[i].index), "",
				"acknowledgement %s acknowledges no dangerous grant (it lists no dangerous grant, "+
					"only grants an earlier entry acknowledges, or only part of a rule or role); remove it", acks[i].name))
		}
	}
}

// coverage returns the indexes in acks of the entries that acknowledge d,
// in list order, or nil when some dangerous triple of d is listed by no
// entry (or d has no triple).
func coverage(acks []acknowledgement, d dangerousGrant) []int {
	if len(d.triples) == 0 {
		return nil
	}
	var by []int
	for _, t := range d.triples {
		k := slices.IndexFunc(acks, func(a acknowledgement) bool { return a.covers(t) })
		if k < 0 {
			return nil
		}
		if !slices.Contains(by, k) {
			by = append(by, k)
		}
	}
	slices.Sort(by)
	return by
}

// acknowledgements returns the valid entries of spec.acknowledgedGrants and
// reports the invalid ones.
func (r *review) acknowledgements(obj map[string]any) []acknowledgement {
	items, _ := fields.Slice(obj, "spec", "acknowledgedGrants")
	var out []acknowledgement
	seen := map[string]bool{}
	for k, item := range items {
		path := pathAcknowledgedGrants.Index(k)
		entry, ok := item.(map[string]any)
		if !ok {
			r.invalidAck(path, "", "an acknowledgement is an object with a name, apiGroups, resources, verbs and a reason")
			continue
		}
		valid := true
		name, _ := fields.String(entry, "name")
		switch {
		case name == "" || len(validation.IsDNS1123Label(name)) != 0:
			valid = false
			r.invalidAck(path.Child("name"), name, "an acknowledgement has a name, a lowercase DNS-1123 label")
		case seen[name]:
			valid = false
			r.invalidAck(path.Child("name"), name, "acknowledgement names are unique; an earlier entry has this name")
		}
		if name != "" {
			seen[name] = true
		}
		lists := map[string][]string{}
		for _, key := range []string{"apiGroups", "resources", "verbs"} {
			list, ok := stringList(entry, key)
			if !ok || len(list) == 0 {
				valid = false
				r.invalidAck(path.Child(key), strings.Join(list, ","), "%s is a non-empty list of strings", key)
			}
			lists[key] = list
		}
		reason, _ := fields.String(entry, "reason")
		if utf8.RuneCountInString(strings.TrimSpace(reason)) < MinReasonLength || utf8.RuneCountInString(reason) > MaxReasonLength {
			valid = false
			r.invalidAck(path.Child("reason"), reason, "an acknowledgement gives a reason of %d to %d characters", MinReasonLength, MaxReasonLength)
		}
		if valid {
			out = append(out, acknowledgement{index: k, name: name,
				groups: lists["apiGroups"], resources: lists["resources"], verbs: lists["verbs"]})
		}
	}
	return out
}

func (r *review) invalidAck(path *field.Path, evidence, format string, args ...any) {
	r.findings = append(r.findings, policies.Denial(HarnessAcknowledgementInvalid, path, evidence, format, args...))
}
