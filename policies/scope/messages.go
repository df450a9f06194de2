package scope

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// entryMessage is the message of a finding on one entry of a scope value.
// Head and tail hold "{n}" for the entry's position and "{key}" for its key
// (never its name); a clause that depends on the name goes between them
// (middle).
type entryMessage struct {
	head, tail string
}

// entryMessages are the denials checkEntry reports, by code.
var entryMessages = map[policies.Code]entryMessage{
	ScopeUnexpectedValue:   {head: `entry {n} of the scope is a {key} scope with "="; a {key} scope takes no name`},
	ScopeValueMissing:      {head: `entry {n} of the scope is a {key} scope without a name; write {key}=<name> (secret-operator cannot resolve it)`},
	ScopeValueHasDelimiter: {head: `entry {n} of the scope is a {key} scope whose name contains "="; secret-operator would keep only the part before the second "=" and silently drop the rest`},
	ScopeServiceNameInvalid: {
		head: "entry {n} of the scope is a service scope whose name is not a Service name",
		tail: msgServiceNameRule,
	},
	ScopeListenerVolumeNameInvalid: {
		head: "entry {n} of the scope is a listener-volume scope whose name is not a volume name",
		tail: msgVolumeNameRule,
	},
	ScopeKeyMissing: {head: `entry {n} of the scope has no key before "="; write node, pod, service=<name> or listener-volume=<name> (operator-go rejects an entry without a key)`},
	ScopeEntryEmpty: {head: `entry {n} of the scope is empty; entries are separated by a single "," with none leading or trailing`},
	ScopeUnknownKey: {head: "entry {n} of the scope has a key secret-operator does not know, so it skips the entry; known keys are node, pod, service and listener-volume"},
}

// text is the message for entry n with key, and middle (when not empty)
// between head and tail.
func (m entryMessage) text(n int, key, middle string) string {
	parts := []string{m.head}
	if middle != "" {
		parts = append(parts, middle)
	}
	if m.tail != "" {
		parts = append(parts, m.tail)
	}
	return strings.NewReplacer("{n}", strconv.Itoa(n), "{key}", key).Replace(strings.Join(parts, "; "))
}

// msgSecretClassMissing is SecretClassMissing's message.
const msgSecretClassMissing = "secrets.kubedoop.dev/ annotations need a non-empty " + annotationClass + " naming the SecretClass that provisions the volume"
