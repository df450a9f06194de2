package route

import (
	"slices"
	"strings"
	"testing"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/overrides"
)

// TestValidateConfigComponents: the component table of the configuration
// is checked by the policy's rules, each error attributed to its field, and
// the configuration's default names the policy's default preset.
func TestValidateConfigComponents(t *testing.T) {
	if configv1alpha1.DefaultComponentTable != overrides.PresetAny {
		t.Errorf("the configuration's default table %q is not the policy's %q", configv1alpha1.DefaultComponentTable, overrides.PresetAny)
	}
	cfg := configv1alpha1.Default()
	if err := ValidateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range overrides.PresetNames() {
		cfg.Overrides.ComponentTable = name
		if err := ValidateConfig(cfg); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	cfg.Overrides.ComponentTable = "upstream-0000000"
	if errs := ValidateConfig(cfg); len(errs) != 1 || errs[0].Error() != `overrides.componentTable: Unsupported value: "upstream-0000000": supported values: "`+
		strings.Join(overrides.PresetNames(), `", "`)+`"` {
		t.Errorf("unknown preset: %v", errs)
	}
	cfg.Overrides.ComponentTable = ""
	cfg.Overrides.Components = []configv1alpha1.OverrideComponent{
		{Name: "racer", Kinds: []string{"Deployment"}, Scope: configv1alpha1.ScopeSingleton},
		{Name: "Storage", Kinds: []string{"StatefulSet", "DaemonSet", "DaemonSet"}, Scope: configv1alpha1.ScopePerSite},
		{Name: "racer", Kinds: []string{"DaemonSet"}, Scope: configv1alpha1.ScopeSingleton, SiteLabels: []string{"x"}},
	}
	var got []string
	for _, e := range ValidateConfig(cfg) {
		got = append(got, e.Error())
	}
	want := []string{
		"overrides.components[1].name: Invalid value: must be a lowercase RFC 1123 label, as upstream's component names are",
		`overrides.components[1].kinds[0]: Unsupported value: "StatefulSet": supported values: "Deployment", "DaemonSet"`,
		`overrides.components[1].kinds[2]: Duplicate value: "DaemonSet": the same kind as overrides.components[1].kinds[1]`,
		"overrides.components[1].siteLabels: Required value: a per-Site component needs the label that names each workload's Site",
		`overrides.components[2].name: Duplicate value: "racer": the same component as overrides.components[0].name`,
		"overrides.components[2].siteLabels: Forbidden: a cluster singleton has no Site; omit siteLabels",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ValidateConfig() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cfg.Overrides.Components = cfg.Overrides.Components[:1]
	if err := ValidateConfig(cfg); err != nil {
		t.Errorf("a valid table: %v", err)
	}
	table := OptionsFromConfig(cfg).OverrideTable
	if findings := overrides.Validate(table, map[string]string{"o.yaml": "apiVersion: " + overrides.APIVersion +
		"\noverrides:\n- {component: net, kind: DaemonSet, extraArgs: {node: [-v]}}\n"}, nil); len(findings) != 1 ||
		findings[0].Code != overrides.OverrideComponentUnknown {
		t.Errorf("net outside the configured table: %v", findings)
	}
}
