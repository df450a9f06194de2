// The defaults table and its configuration.
//
// Reads: a Defaults value from the server configuration, not an object.
// Allows (Validate): runAsUser, runAsGroup and fsGroup in 0..2147483647;
// fsGroupChangePolicy OnRootMismatch or Always; seccompProfileType
// RuntimeDefault or Unconfined; at least one capability to drop, each a
// non-empty name without white space, listed once; not runAsUser 0 together
// with runAsNonRoot true.

package podsecurity

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults are the values the mutating webhook fills in (server
// configuration; BuiltinDefaults is the table of docs/contracts.md §2).
type Defaults struct {
	RunAsUser                int64    `json:"runAsUser"`
	RunAsGroup               int64    `json:"runAsGroup"`
	FSGroup                  int64    `json:"fsGroup"`
	FSGroupChangePolicy      string   `json:"fsGroupChangePolicy"`
	RunAsNonRoot             bool     `json:"runAsNonRoot"`             // pod and container level
	SeccompProfileType       string   `json:"seccompProfileType"`       // pod and container level
	AllowPrivilegeEscalation bool     `json:"allowPrivilegeEscalation"` // container level
	CapabilitiesDrop         []string `json:"capabilitiesDrop"`         // container level
}

// Builtin values (upstream: kubedoop images run as uid 1001; runAsGroup 0 is
// deliberate, for OpenShift, which runs containers in the root group).
const (
	builtinRunAsUser  = 1001
	builtinRunAsGroup = 0
	builtinFSGroup    = 1001
)

// Values the API server accepts for the string fields of the table.
const (
	fsGroupChangeOnRootMismatch = "OnRootMismatch"
	fsGroupChangeAlways         = "Always"
	seccompRuntimeDefault       = "RuntimeDefault"
	seccompUnconfined           = "Unconfined"
	seccompLocalhost            = "Localhost"
)

// maxID is the largest uid or gid the API server accepts.
const maxID = math.MaxInt32

// BuiltinDefaults returns the table of docs/contracts.md §2: runAsUser 1001,
// runAsGroup 0, fsGroup 1001, fsGroupChangePolicy OnRootMismatch,
// runAsNonRoot true, seccomp RuntimeDefault, allowPrivilegeEscalation false,
// capabilities.drop [ALL]. Each call returns a fresh value.
func BuiltinDefaults() Defaults {
	return Defaults{
		RunAsUser:                builtinRunAsUser,
		RunAsGroup:               builtinRunAsGroup,
		FSGroup:                  builtinFSGroup,
		FSGroupChangePolicy:      fsGroupChangeOnRootMismatch,
		RunAsNonRoot:             true,
		SeccompProfileType:       seccompRuntimeDefault,
		AllowPrivilegeEscalation: false,
		CapabilitiesDrop:         []string{"ALL"},
	}
}

// Validate checks a Defaults value read from a configuration file and
// returns every problem found, each attributed to its field below at, the
// path of d (nil: the paths are d's own keys, "runAsUser",
// "capabilitiesDrop[1]"). The messages may echo the configured values: they
// are server configuration, not object data.
func (d Defaults) Validate(at *field.Path) field.ErrorList {
	var errs field.ErrorList
	invalid := func(p *field.Path, format string, args ...any) {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, fmt.Sprintf(format, args...)))
	}
	for _, id := range []struct {
		key   string
		value int64
	}{{"runAsUser", d.RunAsUser}, {"runAsGroup", d.RunAsGroup}, {"fsGroup", d.FSGroup}} {
		if id.value < 0 || id.value > maxID {
			invalid(at.Child(id.key), "%d is out of range, must be between 0 and %d", id.value, maxID)
		}
	}
	if d.RunAsUser == 0 && d.RunAsNonRoot {
		invalid(at.Child("runAsUser"), "0 together with runAsNonRoot: true would make every pod that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false")
	}
	switch d.FSGroupChangePolicy {
	case fsGroupChangeOnRootMismatch, fsGroupChangeAlways:
	default:
		errs = append(errs, field.NotSupported(at.Child("fsGroupChangePolicy"), d.FSGroupChangePolicy,
			[]string{fsGroupChangeOnRootMismatch, fsGroupChangeAlways}))
	}
	seccomp := at.Child("seccompProfileType")
	switch d.SeccompProfileType {
	case seccompRuntimeDefault, seccompUnconfined:
	case seccompLocalhost:
		invalid(seccomp, "%q needs a localhostProfile, which the defaults cannot name; use %q or %q", d.SeccompProfileType, seccompRuntimeDefault, seccompUnconfined)
	default:
		errs = append(errs, field.NotSupported(seccomp, d.SeccompProfileType, []string{seccompRuntimeDefault, seccompUnconfined}))
	}
	drop := at.Child("capabilitiesDrop")
	if len(d.CapabilitiesDrop) == 0 {
		errs = append(errs, field.Required(drop, "must name at least one capability (for example ALL)"))
	}
	first := make(map[string]int, len(d.CapabilitiesDrop))
	for i, c := range d.CapabilitiesDrop {
		p := drop.Index(i)
		j, seen := first[c]
		switch {
		case c == "":
			errs = append(errs, field.Required(p, "must not be empty"))
		case strings.IndexFunc(c, unicode.IsSpace) >= 0:
			invalid(p, "%q contains white space", c)
		case seen:
			e := field.Duplicate(p, c)
			e.Detail = "the same capability as " + drop.Index(j).String()
			errs = append(errs, e)
		}
		if !seen {
			first[c] = i
		}
	}
	return errs
}
