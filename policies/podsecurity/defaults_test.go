package podsecurity

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
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
	if err := d.Validate(); err != nil {
		t.Errorf("BuiltinDefaults do not validate: %v", err)
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
		// errs are substrings the error must contain, one per problem; none
		// means valid.
		errs []string
	}{
		{name: "builtin", edit: func(*Defaults) {}},
		{name: "largest ids", edit: func(d *Defaults) { d.RunAsUser, d.RunAsGroup, d.FSGroup = maxID, maxID, maxID }},
		{name: "root with runAsNonRoot false", edit: func(d *Defaults) { d.RunAsUser, d.RunAsNonRoot = 0, false }},
		{name: "Always and Unconfined", edit: func(d *Defaults) { d.FSGroupChangePolicy, d.SeccompProfileType = "Always", "Unconfined" }},
		{name: "several capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = []string{"NET_RAW", "SYS_CHROOT"} }},
		{name: "negative ids", edit: func(d *Defaults) { d.RunAsUser, d.RunAsGroup, d.FSGroup = -1, -1, -1 },
			errs: []string{"runAsUser: -1 is out of range", "runAsGroup: -1 is out of range", "fsGroup: -1 is out of range"}},
		{name: "ids too large", edit: func(d *Defaults) { d.RunAsUser = maxID + 1 }, errs: []string{"runAsUser: 2147483648 is out of range"}},
		{name: "root with runAsNonRoot true", edit: func(d *Defaults) { d.RunAsUser = 0 }, errs: []string{"runAsUser: 0 together with runAsNonRoot: true"}},
		{name: "fsGroupChangePolicy", edit: func(d *Defaults) { d.FSGroupChangePolicy = "onRootMismatch" },
			errs: []string{`fsGroupChangePolicy: "onRootMismatch" is not supported`}},
		{name: "empty fsGroupChangePolicy", edit: func(d *Defaults) { d.FSGroupChangePolicy = "" },
			errs: []string{`fsGroupChangePolicy: "" is not supported`}},
		{name: "seccomp Localhost", edit: func(d *Defaults) { d.SeccompProfileType = "Localhost" },
			errs: []string{`seccompProfileType: "Localhost" needs a localhostProfile`}},
		{name: "seccomp unknown", edit: func(d *Defaults) { d.SeccompProfileType = "runtime/default" },
			errs: []string{`seccompProfileType: "runtime/default" is not supported`}},
		{name: "no capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = nil }, errs: []string{"capabilitiesDrop: must name at least one"}},
		{name: "bad capabilities", edit: func(d *Defaults) { d.CapabilitiesDrop = []string{"ALL", "", "NET RAW", "ALL"} },
			errs: []string{"capabilitiesDrop[1]: must not be empty", `capabilitiesDrop[2]: "NET RAW" contains white space`, `capabilitiesDrop[3]: "ALL" is listed twice`}},
		{name: "zero value", edit: func(d *Defaults) { *d = Defaults{} }, errs: []string{
			"fsGroupChangePolicy", "seccompProfileType", "capabilitiesDrop"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := BuiltinDefaults()
			tc.edit(&d)
			err := d.Validate()
			if len(tc.errs) == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.Count(err.Error(), "pod security defaults: "); got != len(tc.errs) {
				t.Errorf("%d problems reported, want %d: %v", got, len(tc.errs), err)
			}
			for _, s := range tc.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q: %v", s, err)
				}
			}
		})
	}
}
