package podsecurity

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestBuiltinDefaults(t *testing.T) {
	want := Defaults{
		RunAsUser:                1001,
		RunAsGroup:               0,
		FSGroup:                  1001,
		FSGroupChangePolicy:      "OnRootMismatch",
		RunAsNonRoot:             true,
		SeccompProfileType:       "RuntimeDefault",
		AllowPrivilegeEscalation: false,
		CapabilitiesDrop:         []string{"ALL"},
	}
	d := BuiltinDefaults()
	if !reflect.DeepEqual(d, want) {
		t.Errorf("BuiltinDefaults() = %+v, want %+v", d, want)
	}
	if errs := d.Validate(nil); errs != nil {
		t.Errorf("BuiltinDefaults do not validate: %v", errs)
	}
	d.CapabilitiesDrop[0] = "changed"
	if BuiltinDefaults().CapabilitiesDrop[0] != "ALL" {
		t.Error("BuiltinDefaults shares its drop list between calls")
	}
}

// TestDefaultsJSON checks the configuration keys: a file that states every
// key yields exactly those values.
func TestDefaultsJSON(t *testing.T) {
	const config = `{"runAsUser": 2000, "runAsGroup": 2000, "fsGroup": 3000, "fsGroupChangePolicy": "Always",
		"runAsNonRoot": false, "seccompProfileType": "Unconfined", "allowPrivilegeEscalation": true,
		"capabilitiesDrop": ["NET_RAW"]}`
	var d Defaults
	dec := json.NewDecoder(strings.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	want := Defaults{2000, 2000, 3000, "Always", false, "Unconfined", true, []string{"NET_RAW"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("decoded %+v, want %+v", d, want)
	}
}

func TestDefaultsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(d *Defaults)
		// errs are the starts of the errors, one per problem, in order;
		// none means valid.
		errs []string
	}{
		{name: "builtin", edit: func(*Defaults) {}},
		{name: "largest ids", edit: func(d *Defaults) { d.RunAsUser, d.RunAsGroup, d.FSGroup = maxID, maxID, maxID }},
		{name: "root with runAsNonRoot false", edit: func(d *Defaults) { d.RunAsUser, d.RunAsNonRoot = 0, false }},
		{name: "Always and Unconfined", edit: func(d *Defaults) { d.FSGroupChangePolicy, d.SeccompProfileType = "Always", "Unconfined" }},
		{name: "several capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = []string{"NET_RAW", "SYS_CHROOT"} }},
		{name: "negative ids", edit: func(d *Defaults) { d.RunAsUser, d.RunAsGroup, d.FSGroup = -1, -1, -1 },
			errs: []string{"d.runAsUser: Invalid value: -1 is out of range", "d.runAsGroup: Invalid value: -1 is out of range",
				"d.fsGroup: Invalid value: -1 is out of range"}},
		{name: "ids too large", edit: func(d *Defaults) { d.RunAsUser = maxID + 1 },
			errs: []string{"d.runAsUser: Invalid value: 2147483648 is out of range, must be between 0 and 2147483647"}},
		{name: "root with runAsNonRoot true", edit: func(d *Defaults) { d.RunAsUser = 0 }, errs: []string{"d.runAsUser: Invalid value: 0 together with runAsNonRoot: true"}},
		{name: "fsGroupChangePolicy", edit: func(d *Defaults) { d.FSGroupChangePolicy = "onRootMismatch" },
			errs: []string{`d.fsGroupChangePolicy: Unsupported value: "onRootMismatch": supported values: "OnRootMismatch", "Always"`}},
		{name: "empty fsGroupChangePolicy", edit: func(d *Defaults) { d.FSGroupChangePolicy = "" },
			errs: []string{`d.fsGroupChangePolicy: Unsupported value: ""`}},
		{name: "seccomp Localhost", edit: func(d *Defaults) { d.SeccompProfileType = "Localhost" },
			errs: []string{`d.seccompProfileType: Invalid value: "Localhost" needs a localhostProfile`}},
		{name: "seccomp unknown", edit: func(d *Defaults) { d.SeccompProfileType = "runtime/default" },
			errs: []string{`d.seccompProfileType: Unsupported value: "runtime/default": supported values: "RuntimeDefault", "Unconfined"`}},
		{name: "no capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = nil },
			errs: []string{"d.capabilitiesDrop: Required value: must name at least one"}},
		{name: "bad capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = []string{"ALL", "", "NET RAW", "ALL"} },
			errs: []string{"d.capabilitiesDrop[1]: Required value: must not be empty", `d.capabilitiesDrop[2]: Invalid value: "NET RAW" contains white space`,
				`d.capabilitiesDrop[3]: Duplicate value: "ALL": the same capability as d.capabilitiesDrop[0]`}},
		{name: "zero value", edit: func(d *Defaults) { *d = Defaults{} }, errs: []string{
			"d.fsGroupChangePolicy", "d.seccompProfileType", "d.capabilitiesDrop"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := BuiltinDefaults()
			tc.edit(&d)
			errs := d.Validate(field.NewPath("d"))
			if len(errs) != len(tc.errs) {
				t.Fatalf("%d problems reported, want %d: %v", len(errs), len(tc.errs), errs)
			}
			for i, want := range tc.errs {
				if got := errs[i].Error(); !strings.HasPrefix(got, want) {
					t.Errorf("error %d = %q, want it to start %q", i, got, want)
				}
			}
		})
	}
}
