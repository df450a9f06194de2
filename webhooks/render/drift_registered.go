package render

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The registered side of mode drift (webhooks/route/drift.go): which webhooks the webhook
// configurations in the cluster route by another mode than the server's.

// RegisteredEntry is one entry of a registered webhook configuration, as
// ModeDrifts reads it.
type RegisteredEntry struct {
	Type          route.Type
	Name          string
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// Members is the expression of the entry's matchCondition
	// gatehouse-members (a combined entry's).
	Members string
}

// RegisteredEntries are the entries of the two configurations (either may
// be nil).
func RegisteredEntries(mutating *admissionregistrationv1.MutatingWebhookConfiguration, validating *admissionregistrationv1.ValidatingWebhookConfiguration) []RegisteredEntry {
	var out []RegisteredEntry
	add := func(typ route.Type, name string, policy *admissionregistrationv1.FailurePolicyType, conditions []admissionregistrationv1.MatchCondition) {
		e := RegisteredEntry{Type: typ, Name: name, FailurePolicy: admissionregistrationv1.Fail} // the API's default
		if policy != nil {
			e.FailurePolicy = *policy
		}
		for _, c := range conditions {
			if c.Name == route.MembersCondition {
				e.Members = c.Expression
			}
		}
		out = append(out, e)
	}
	if mutating != nil {
		for _, w := range mutating.Webhooks {
			add(route.Mutating, w.Name, w.FailurePolicy, w.MatchConditions)
		}
	}
	if validating != nil {
		for _, w := range validating.Webhooks {
			add(route.Validating, w.Name, w.FailurePolicy, w.MatchConditions)
		}
	}
	return out
}

// EntryDrift is a registered entry that sends a webhook requests with
// another failure policy than the server's configuration renders for it: it
// was rendered for another mode.
type EntryDrift struct {
	Webhook string
	// Entry is the registered entry's name.
	Entry string
	// Mode is the webhook's mode in the server's configuration.
	Mode configv1alpha1.Mode
	// Registered is the entry's failure policy, Rendered the one the
	// server's configuration renders for the webhook there.
	Registered, Rendered admissionregistrationv1.FailurePolicyType
}

func (d EntryDrift) String() string {
	return fmt.Sprintf("%s: entry %s has failurePolicy %s, and the server's mode %s renders %s", d.Webhook, d.Entry, d.Registered, d.Mode, d.Rendered)
}

// ModeDrifts compares the registered entries with the server's options:
// for every enabled webhook and each of its configuration entries
// (placements), the registered entries that send it requests, by name in the
// separate layout and, in the combined layouts, as the entry of a group of
// its selection whose members condition holds the webhook's expression;
// each of them whose failure policy differs from the one the server renders
// is a drift. Entries the server would render but nobody registered are not
// a mode drift (a selective install registers some webhooks only). Sorted by
// webhook, then entry.
func ModeDrifts(opts route.Options, enabled func(name string) bool, registered []RegisteredEntry) []EntryDrift {
	type key struct {
		typ  route.Type
		name string
	}
	byName := map[key]RegisteredEntry{}
	for _, e := range registered {
		byName[key{e.Type, e.Name}] = e
	}
	var out []EntryDrift
	for _, def := range route.Registry() {
		if !enabled(def.Name) {
			continue
		}
		for _, p := range def.Placements(opts) {
			drift := func(e RegisteredEntry) {
				if e.FailurePolicy != p.FailurePolicy {
					out = append(out, EntryDrift{Webhook: def.Name, Entry: e.Name, Mode: opts.ModeOf(def.Name), Registered: e.FailurePolicy, Rendered: p.FailurePolicy})
				}
			}
			// A webhook's own entries: the one of Namespaces' own requests
			// has an entry of its own beside the others (manifests.go).
			for _, name := range []string{def.Name + p.Suffix, def.Name + p.Suffix + route.NamespacesEntrySuffix} {
				if e, ok := byName[key{def.Type, name + ".gatehouse.dev"}]; ok {
					drift(e)
				}
			}
			term := route.Member{Def: def, Places: []route.Placement{p}}.MemberExpression(opts)
			for _, g := range route.Groups() {
				if g.Type != def.Type || g.Namespaces != p.Namespaces || g.Accounts != p.Accounts {
					continue
				}
				for _, name := range []string{g.EntryName(), g.Name + route.NamespacesEntrySuffix + ".gatehouse.dev"} {
					if e, ok := byName[key{g.Type, name}]; ok && strings.Contains(e.Members, term) {
						drift(e)
					}
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b EntryDrift) int {
		return strings.Compare(a.Webhook+"\x00"+a.Entry, b.Webhook+"\x00"+b.Entry)
	})
	return out
}
