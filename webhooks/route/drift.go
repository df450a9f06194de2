package route

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
)

// Mode drift (docs/operations.md, "Mode drift"). The webhook configurations
// are rendered from the server's configuration, and a webhook in Warn or
// Audit is rendered into the *-ignore groups (webhooks/modes.go, combined.go); but
// they are registered apart from the server: a configuration changed without
// a restart, or entries rendered for other modes, leave a server whose modes
// differ from the entries it is called through. Such a server never answers
// with a silent allow:
//   - a combined endpoint runs every member its group holds under either
//     reading, the server's modes or the modes its entry is rendered for (a
//     group that fails closed holds the webhooks in Enforce, one that fails
//     open those in Warn or Audit). A member only the entry's reading holds
//     decides in the stricter of the two, which is always Enforce, and says
//     so: the audit annotation mode-drift, a warning when it found
//     something, gatehouse_mode_drift_reviews_total and a log line naming it;
//   - ModeDrifts compares the registered configurations with what the
//     server's configuration renders; serve reports what it finds on
//     /readyz/mode-drift, in the gauge gatehouse_mode_drift and in a log line
//     naming each webhook (controllers.ModeDrift).
//
// A webhook's own endpoint (the separate layout) cannot tell which entry a
// request came through; it answers in the server's mode (in Warn with
// warnings, in Audit with audit annotations), and the readiness check takes
// the replica out of the Service until the modes agree.

// ModeDrift says that a member of a combined endpoint decided in another
// mode than the server's, because the entry it came through is rendered for
// that mode.
type ModeDrift struct {
	// Entry is the registered entry: "<group>.gatehouse.dev".
	Entry string
	// EntryModes are the modes the entry is rendered for: "Enforce", or
	// "Warn or Audit" ("Audit" for a mutating webhook).
	EntryModes string
	// Configured is the webhook's mode in the server's configuration.
	Configured configv1alpha1.Mode
}

func (d ModeDrift) String() string {
	return fmt.Sprintf("entry %s is rendered for %s, this server's configuration says %s: decided in %s",
		d.Entry, d.EntryModes, d.Configured, configv1alpha1.ModeEnforce)
}

// EntryName is the name of g's configuration entry.
func (g Group) EntryName() string { return g.Name + ".gatehouse.dev" }

// entryModes are the modes g's entry is rendered for.
func (g Group) entryModes() string {
	switch {
	case g.FailurePolicy == admissionregistrationv1.Fail:
		return string(configv1alpha1.ModeEnforce)
	case g.Type == Mutating:
		return string(configv1alpha1.ModeAudit)
	}
	return string(configv1alpha1.ModeWarn) + " or " + string(configv1alpha1.ModeAudit)
}

// ServedMembers are the members g's endpoint runs: its members under the
// server's modes and, in registry order among them, every webhook that g
// holds when every webhook enforces or when none does, marked with the
// entry's reading. (A webhook's group depends on its own mode only, so these
// two readings hold every webhook the entry may have been rendered with.)
func (g Group) ServedMembers(opts Options) []Member {
	own := g.Members(opts)
	readings := [][]Member{g.Members(opts.EveryWebhookIn(configv1alpha1.ModeEnforce)), g.Members(opts.EveryWebhookIn(configv1alpha1.ModeAudit))}
	var out []Member
	for _, def := range registry {
		if m, ok := MemberNamed(own, def.Name); ok {
			out = append(out, m)
			continue
		}
		for _, reading := range readings {
			if m, ok := MemberNamed(reading, def.Name); ok {
				m.Drift = &ModeDrift{Entry: g.EntryName(), EntryModes: g.entryModes(), Configured: opts.ModeOf(def.Name)}
				out = append(out, m)
				break
			}
		}
	}
	return out
}

func MemberNamed(members []Member, name string) (Member, bool) {
	for _, m := range members {
		if m.Def.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// EveryWebhookIn is o with every webhook in mode.
func (o Options) EveryWebhookIn(mode configv1alpha1.Mode) Options {
	o.Modes = nil
	if mode != configv1alpha1.ModeEnforce {
		o.Modes = map[string]configv1alpha1.Mode{}
		for _, def := range registry {
			o.Modes[def.Name] = mode
		}
	}
	return o
}
