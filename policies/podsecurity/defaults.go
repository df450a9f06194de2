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
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
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
// returns every problem found, joined, or nil. The messages name the
// configuration keys and echo the configured values (they are server
// configuration, not object data).
func (d Defaults) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("pod security defaults: %s: "+format, append([]any{key}, args...)...))
	}
	for _, id := range []struct {
		key   string
		value int64
	}{{"runAsUser", d.RunAsUser}, {"runAsGroup", d.RunAsGroup}, {"fsGroup", d.FSGroup}} {
		if id.value < 0 || id.value > maxID {
			bad(id.key, "%d is out of range, must be between 0 and %d", id.value, maxID)
		}
	}
	if d.RunAsUser == 0 && d.RunAsNonRoot {
		bad("runAsUser", "0 together with runAsNonRoot: true would make every pod that states neither fail RunAsRootConflict; choose a non-zero uid or set runAsNonRoot to false")
	}
	switch d.FSGroupChangePolicy {
	case fsGroupChangeOnRootMismatch, fsGroupChangeAlways:
	default:
		bad("fsGroupChangePolicy", "%q is not supported, must be %q or %q", d.FSGroupChangePolicy, fsGroupChangeOnRootMismatch, fsGroupChangeAlways)
	}
	switch d.SeccompProfileType {
	case seccompRuntimeDefault, seccompUnconfined:
	case seccompLocalhost:
		bad("seccompProfileType", "%q needs a localhostProfile, which the defaults cannot name; use %q or %q", d.SeccompProfileType, seccompRuntimeDefault, seccompUnconfined)
	default:
		bad("seccompProfileType", "%q is not supported, must be %q or %q", d.SeccompProfileType, seccompRuntimeDefault, seccompUnconfined)
	}
	if len(d.CapabilitiesDrop) == 0 {
		bad("capabilitiesDrop", "must name at least one capability (for example ALL)")
	}
	seen := make(map[string]bool, len(d.CapabilitiesDrop))
	for i, c := range d.CapabilitiesDrop {
		key := fmt.Sprintf("capabilitiesDrop[%d]", i)
		switch {
		case c == "":
			bad(key, "must not be empty")
		case strings.IndexFunc(c, unicode.IsSpace) >= 0:
			bad(key, "%q contains white space", c)
		case seen[c]:
			bad(key, "%q is listed twice", c)
		}
		seen[c] = true
	}
	return errors.Join(errs...)
}
