// This file decides, from the stored DependencyGroups alone, which group
// owns a CRD listed by more than one: the status reconciler's half of DG
// (admission cannot close the race of two simultaneous creates). It reads
// metadata.name, metadata.creationTimestamp (RFC 3339) and
// spec.crds[*].name of each group.
//
// The owner (winner) of a CRD is the group with the oldest
// creationTimestamp, then the smallest name; a missing or unparsable
// timestamp counts as the newest. Every other group listing the CRD loses
// it and is Rejected, also when the winner is itself Rejected for another
// CRD: the contract rejects "every group that lists a CRD also listed by an
// older group", which keeps the verdict a function of pairs of groups and
// so stable whatever order the reconciler sees them in.
package dependencygroup

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
)

// Clash is one CRD that Group lists but Winner owns.
type Clash struct {
	CRD    string
	Group  string
	Winner string
}

// Status states of a DependencyGroup (upstream, helmetica).
const (
	Accepted = "Accepted"
	Rejected = "Rejected"
)

// Verdict is what the reconciler writes into a group's status: State is
// Accepted or Rejected, Message the condition's message naming each clash.
type Verdict struct {
	State   string
	Message string
}

// claimant is one group as Clashes orders them.
type claimant struct {
	name    string
	created time.Time
	dated   bool
}

// older reports whether a owns a CRD that both list.
func (a claimant) older(b claimant) bool {
	switch {
	case a.dated != b.dated:
		return a.dated
	case a.dated && !a.created.Equal(b.created):
		return a.created.Before(b.created)
	default:
		return a.name < b.name
	}
}

// Clashes returns, for every CRD listed by more than one group, each group
// that loses it with the winner, sorted by group then CRD. Groups without a
// name are skipped; names are unique, as the API server keeps them. A CRD
// listed twice by one group counts once; a group being deleted lists none
// (ListedCRDs), so it neither wins nor loses.
func Clashes(groups []map[string]any) []Clash {
	listing := map[string][]claimant{}
	for _, g := range groups {
		name, _ := fields.String(g, "metadata", "name")
		if name == "" {
			continue
		}
		c := claimant{name: name}
		if ts, ok := fields.String(g, "metadata", "creationTimestamp"); ok {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				c.created, c.dated = t, true
			}
		}
		for _, crd := range ListedCRDs(g) {
			listing[crd] = append(listing[crd], c)
		}
	}
	var clashes []Clash
	for crd, claimants := range listing {
		if len(claimants) < 2 {
			continue
		}
		winner := claimants[0]
		for _, c := range claimants[1:] {
			if c.older(winner) {
				winner = c
			}
		}
		for _, c := range claimants {
			if c.name != winner.name {
				clashes = append(clashes, Clash{CRD: crd, Group: c.name, Winner: winner.name})
			}
		}
	}
	slices.SortFunc(clashes, func(a, b Clash) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		return strings.Compare(a.CRD, b.CRD)
	})
	return clashes
}

// Decide returns the verdict of every named group: Rejected with a message
// naming each CRD it loses and its owner, or Accepted.
func Decide(groups []map[string]any) map[string]Verdict {
	verdicts := map[string]Verdict{}
	for _, g := range groups {
		if name, _ := fields.String(g, "metadata", "name"); name != "" {
			verdicts[name] = Verdict{State: Accepted, Message: "no CRD of this group is listed by an older DependencyGroup"}
		}
	}
	lost := map[string][]string{}
	for _, c := range Clashes(groups) {
		lost[c.Group] = append(lost[c.Group], fmt.Sprintf("CRD %s belongs to the older DependencyGroup %s", c.CRD, c.Winner))
	}
	for group, reasons := range lost {
		verdicts[group] = Verdict{State: Rejected, Message: strings.Join(reasons, "; ")}
	}
	return verdicts
}
