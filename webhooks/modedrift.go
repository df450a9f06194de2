package webhooks

import (
	"fmt"
	"maps"
	"slices"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// AuditAnnotationModeDrift is ModeDrift.String, on a decision made in the
// entry's mode.
const AuditAnnotationModeDrift = "mode-drift"

// warningModeDrift is the warning of a decision made in the entry's mode
// that found something: the webhook, then the ModeDrift.
const warningModeDrift = "gatehouse %s: mode drift: %s (docs/operations.md, \"Mode drift\")"

// modeOf is the mode m decides in: the server's, or Enforce for a member
// that only its entry's reading holds.
func (c *chain) modeOf(m *member) configv1alpha1.Mode {
	if m.Drift != nil {
		return configv1alpha1.ModeEnforce
	}
	return c.opts.ModeOf(m.Def.Name)
}

// withModeDrift marks d, decided in the entry's mode, as such: the audit
// annotation always, a warning when d is not a plain allow.
func withModeDrift(d Decision, drift route.ModeDrift) Decision {
	d.ModeDrift = &drift
	annotations := make(map[string]string, len(d.Response.AuditAnnotations)+1)
	maps.Copy(annotations, d.Response.AuditAnnotations)
	annotations[AuditAnnotationModeDrift] = drift.String()
	d.Response.AuditAnnotations = annotations
	if !d.Response.Allowed || len(d.Findings) > 0 || d.Mutated {
		d.Response.Warnings = append(slices.Clone(d.Response.Warnings), fmt.Sprintf(warningModeDrift, d.Webhook, drift))
	}
	return d
}
