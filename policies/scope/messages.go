package scope

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// entryMessage is the message of a finding on one entry of a scope value,
// shared by the evaluator (checkEntry, in Go) and the in-process policy
// (EntryFindingsCEL, in CEL), so that a grammar change is made once. Head
// and tail hold "{n}" for the entry's position and "{key}" for its key
// (never its name); a clause only Go can write, as it depends on the name,
// goes between them (middle), and the CEL rendering leaves it out.
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

// cel renders the message as a CEL string expression, with n and key CEL
// expressions for the position and the key (and no middle clause).
func (m entryMessage) cel(n, key string) string {
	text := m.head
	if m.tail != "" {
		text += "; " + m.tail
	}
	var parts []string
	for text != "" {
		i := strings.IndexAny(text, "{")
		switch {
		case i < 0:
			parts, text = append(parts, strconv.Quote(text)), ""
		case strings.HasPrefix(text[i:], "{n}"):
			parts, text = append(parts, strconv.Quote(text[:i]), n), text[i+len("{n}"):]
		case strings.HasPrefix(text[i:], "{key}"):
			parts, text = append(parts, strconv.Quote(text[:i]), key), text[i+len("{key}"):]
		default:
			parts, text = append(parts, strconv.Quote(text[:i+1])), text[i+1:]
		}
	}
	return strings.Join(parts, " + ")
}

// msgSecretClassMissing is SecretClassMissing's message.
const msgSecretClassMissing = "secrets.kubedoop.dev/ annotations need a non-empty " + annotationClass + " naming the SecretClass that provisions the volume"
