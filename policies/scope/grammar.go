// This file holds the scope grammar (upstream, secret-operator): the value of
// the secrets.kubedoop.dev/scope annotation is one string of entries
// separated by ",", without escaping. secret-operator splits it on ",", then
// each entry on "=", takes the first part as the key and the second (if any)
// as the value, and ignores any further parts. It allows:
//
//   - node, pod: no "=" at all;
//   - service=<name>: a Service name, listener-volume=<name>: a volume name
//     (names.go), so never empty and never with "=";
//   - any other non-empty key: skipped by secret-operator, so it only warns
//     here (the vocabulary belongs to secret-operator and may grow).
//
// A wholly empty value is no scope: secret-operator's decodeScope skips the
// one empty entry it splits into, and trino-operator renders it for LDAP
// bind credentials without a scope (upstream), so it only warns. Empty
// entries inside a list (",,", a leading or trailing ",") are invalid, and
// so is an entry with an empty key ("=x", "="), which operator-go's
// validateScope rejects (upstream, pkg/security).
package scope

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Scope entry keys secret-operator knows.
const (
	scopeNode           = "node"
	scopePod            = "pod"
	scopeService        = "service"
	scopeListenerVolume = "listener-volume"
)

// msgScopeEmpty explains the warning on a wholly empty scope annotation.
const msgScopeEmpty = "the scope is empty, which secret-operator reads as no scope: the credential names no node, pod, " +
	"service or listener volume; remove the annotation or set an entry (node, pod, service=<name>, listener-volume=<name>)"

// Entry is one scope entry as secret-operator reads it: Key is the text
// before the first "=", Value the text between the first and the second "="
// (empty when there is none). For "service=a=b" that is {"service", "a"}.
type Entry struct {
	Key, Value string
}

// piece is an Entry with what secret-operator's split loses, which the
// checks need.
type piece struct {
	Entry
	empty    bool // the entry is "" (",,", a leading or trailing ",")
	assigned bool // the entry contains "="
	dropped  bool // the entry contains a second "=", so text was dropped
}

// splitScope splits value the way secret-operator does; it returns one piece
// per ","-separated entry, so at least one.
func splitScope(value string) []piece {
	pieces := make([]piece, 0, strings.Count(value, ",")+1)
	for entry := range strings.SplitSeq(value, ",") {
		key, rest, assigned := strings.Cut(entry, "=")
		kept, _, dropped := strings.Cut(rest, "=")
		pieces = append(pieces, piece{
			Entry:    Entry{Key: key, Value: kept},
			empty:    entry == "",
			assigned: assigned,
			dropped:  dropped,
		})
	}
	return pieces
}

// ParseScope parses a secrets.kubedoop.dev/scope annotation value the way
// secret-operator does. It returns every entry (also the invalid ones, in
// order, one per ","-separated part) and the problems found, reported at
// path with value as their evidence.
func ParseScope(value string, path *field.Path) ([]Entry, []policies.Finding) {
	pieces := splitScope(value)
	entries := make([]Entry, len(pieces))
	if value == "" {
		return entries, []policies.Finding{policies.Warning(ScopeEmpty, path, value, "%s", msgScopeEmpty)}
	}
	var findings []policies.Finding
	for i, p := range pieces {
		entries[i] = p.Entry
		if f, ok := checkEntry(i+1, len(pieces), p, path, value); ok {
			findings = append(findings, f)
		}
	}
	return entries, findings
}

// checkEntry checks entry number n (1-based) of a scope with total entries.
// Messages name the entry by position and known keys by name; they never
// repeat a name or an unknown key.
func checkEntry(n, total int, p piece, path *field.Path, value string) (policies.Finding, bool) {
	switch p.Key {
	case scopeNode, scopePod:
		if p.assigned {
			return policies.Denial(ScopeUnexpectedValue, path, value, "%s", entryMessages[ScopeUnexpectedValue].text(n, p.Key, "")), true
		}
	case scopeService, scopeListenerVolume:
		switch {
		case p.Value == "":
			return policies.Denial(ScopeValueMissing, path, value, "%s", entryMessages[ScopeValueMissing].text(n, p.Key, "")), true
		case p.dropped:
			return policies.Denial(ScopeValueHasDelimiter, path, value, "%s", entryMessages[ScopeValueHasDelimiter].text(n, p.Key, "")), true
		case p.Key == scopeService && !validServiceName(p.Value):
			return policies.Denial(ScopeServiceNameInvalid, path, value, "%s",
				entryMessages[ScopeServiceNameInvalid].text(n, p.Key, "secret-operator would put into the certificate "+describeServiceSAN(p.Value))), true
		case p.Key == scopeListenerVolume && !validVolumeName(p.Value):
			return policies.Denial(ScopeListenerVolumeNameInvalid, path, value, "%s",
				entryMessages[ScopeListenerVolumeNameInvalid].text(n, p.Key, msgListenerVolumeUnmatched)), true
		}
	default:
		switch {
		case p.Key == "" && p.assigned:
			return policies.Denial(ScopeKeyMissing, path, value, "%s", entryMessages[ScopeKeyMissing].text(n, p.Key, "")), true
		case p.empty:
			return policies.Denial(ScopeEntryEmpty, path, value, "%s", entryMessages[ScopeEntryEmpty].text(n, p.Key, "")), true
		default:
			return policies.Warning(ScopeUnknownKey, path, value, "%s", entryMessages[ScopeUnknownKey].text(n, p.Key, "")), true
		}
	}
	return policies.Finding{}, false
}

// RenderScope renders a CRD CredentialsScope into the annotation value the
// way kubedoop operator-go's ScopeString does for valid input: "node",
// "pod", "service=<name>" per service, "listener-volume=<name>" per listener
// volume, joined by "," in that order; "" when nothing is set. It does not
// drop or escape invalid names: it shows what a name would render to.
func RenderScope(node, pod bool, services, listenerVolumes []string) string {
	var b strings.Builder
	add := func(key string, name *string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(key)
		if name != nil {
			b.WriteByte('=')
			b.WriteString(*name)
		}
	}
	if node {
		add(scopeNode, nil)
	}
	if pod {
		add(scopePod, nil)
	}
	for i := range services {
		add(scopeService, &services[i])
	}
	for i := range listenerVolumes {
		add(scopeListenerVolume, &listenerVolumes[i])
	}
	return b.String()
}

// describeEntry names the kind of scope an entry grants, for messages that
// must not repeat the entry's text.
func describeEntry(p piece) string {
	switch {
	case p.empty:
		return "an empty entry"
	case p.Key == scopeNode:
		return "a node scope"
	case p.Key == scopePod:
		return "a pod scope"
	case p.Key == scopeService:
		return "a service scope"
	case p.Key == scopeListenerVolume:
		return "a listener-volume scope"
	default:
		return "an entry with an unknown key"
	}
}

// widens reports whether an entry, if secret-operator accepted it, would add
// names or addresses to the credential.
func widens(p piece) bool {
	switch p.Key {
	case scopeNode, scopePod, scopeService, scopeListenerVolume:
		return !p.empty
	}
	return false
}
