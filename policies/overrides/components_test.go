package overrides

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestNewTable: every preset is a valid table, and every problem of a list
// is reported at its field below the path given.
func TestNewTable(t *testing.T) {
	for _, name := range PresetNames() {
		if _, err := Preset(name); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	at := field.NewPath("components")
	if _, errs := NewTable(at, nil); len(errs) != 1 || errs[0].Field != "components" || errs[0].Type != field.ErrorTypeRequired {
		t.Errorf("empty list: %v", errs)
	}
	table, errs := NewTable(at, []Component{
		{Name: "metalman", Kinds: []string{kindDeployment}, PerSite: true, SiteLabels: []string{"a/site", "a=b", "a/site"}},
		{Name: "net"},
	})
	if table != nil {
		t.Error("a table with errors")
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`components[0].siteLabels[1]: Invalid value: must be a label key`,
		`components[0].siteLabels[2]: Duplicate value: "a/site": the same label as components[0].siteLabels[0]`,
		`components[1].kinds: Required value: list the kinds the component runs as: Deployment, DaemonSet or both`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("NewTable() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
