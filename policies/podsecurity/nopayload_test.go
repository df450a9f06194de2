package podsecurity

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// TestNoPayloadInFindings plants marker values in images, env values,
// command lines and security context fields of the wrong type, in pods that
// draw every kind of finding, and proves that no finding's message or field
// path carries one (docs/contracts.md §0.3). Container names may appear in
// messages, so they carry no marker.
func TestNoPayloadInFindings(t *testing.T) {
	const marker = "MARKERpsc4e1d"
	plant := func(obj map[string]any) map[string]any {
		spec := getMap(obj, "spec")
		for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
			items, _ := spec[list].([]any)
			for _, item := range items {
				c := item.(map[string]any)
				c["image"] = "registry.example/" + marker + ":1.0"
				c["args"] = []any{"--password=" + marker}
				c["command"] = []any{"/bin/" + marker}
				c["env"] = []any{map[string]any{"name": "TOKEN", "value": marker}}
			}
		}
		getMap(obj, "metadata", "annotations")["note"] = marker
		return obj
	}
	withContainers := func(obj map[string]any) map[string]any {
		addContainer(obj, "initContainers", "setup")
		addContainer(obj, "ephemeralContainers", "debug")
		return obj
	}
	inputs := []map[string]any{
		// Rule 2, every field missing.
		withContainers(basePod()),
		// Rule 2, objects of the wrong type holding markers.
		tweak(withContainers(basePod()), func(o map[string]any) {
			getMap(o, "spec")["securityContext"] = marker
			containerAt(o, "containers", 0)["securityContext"] = []any{marker}
			containerSC(o, "initContainers", 0)["seccompProfile"] = marker
			containerSC(o, "initContainers", 0)["capabilities"] = marker
			containerSC(o, "ephemeralContainers", 0)["seccompProfile"] = map[string]any{"type": "", "localhostProfile": marker}
		}),
		// Rule 1 at both levels, with markers in the values read.
		tweak(withContainers(basePod()), func(o map[string]any) {
			podSC(o)["runAsUser"] = 0
			podSC(o)["runAsNonRoot"] = true
			podSC(o)["seccompProfile"] = map[string]any{"type": "Localhost", "localhostProfile": marker}
			containerSC(o, "containers", 0)["runAsUser"] = 0
			containerSC(o, "initContainers", 0)["runAsNonRoot"] = marker
			containerSC(o, "ephemeralContainers", 0)["runAsUser"] = marker
		}),
	}
	for i, obj := range inputs {
		obj = plant(obj)
		var findings []policies.Finding
		findings = append(findings, ValidatePod(clone(obj), nil)...)
		findings = append(findings, defaultedThenValidated(clone(obj))...)
		findings = append(findings, ValidatePod(clone(obj), basePod())...)
		tmpl := deployment()
		getMap(tmpl, "spec", "template")["spec"] = clone(getMap(obj, "spec"))
		findings = append(findings, ValidateTemplate(gkDeployment, tmpl, BuiltinDefaults())...)
		if !policies.Denied(findings) {
			t.Errorf("input %d: drew no denial", i)
		}
		for _, f := range findings {
			if strings.Contains(f.Message, marker) || strings.Contains(f.Field, marker) {
				t.Errorf("input %d: finding leaks a value: %s: %s", i, f.Field, f.Message)
			}
		}
	}
}
