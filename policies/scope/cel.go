package scope

import (
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// The annotation grammar as CEL, for the in-process layout's
// ValidatingAdmissionPolicy (webhooks/inprocess.go renders the policy
// around these): the same keys, entries and messages (entryMessages) as the
// evaluator, over a list of annotation maps (a CEL expression). The
// differential test of the in-process layout (webhooks
// TestInProcessPoliciesDecideAsTheWebhook) runs both over the fixtures.

// Name patterns CEL checks where the evaluator calls
// k8s.io/apimachinery's validation (names.go).
const (
	dns1035Label = "^[a-z]([-a-z0-9]*[a-z0-9])?$"
	dns1123Label = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
)

// DecidableCEL is the predicate over a list of annotation maps that CEL
// decides all of them: known keys only, a format CEL knows, and scope
// values whose every entry has an empty or known key.
func DecidableCEL(maps string) string {
	known := []string{"class", "scope", "format", "kerberosServiceNames", "pod-info"}
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = fmt.Sprintf("%q", AnnotationPrefix+k)
	}
	format, scopeKey := AnnotationPrefix+"format", AnnotationPrefix+"scope"
	entry := "(node|pod|service|listener-volume)?(=[^,]*)?"
	return fmt.Sprintf("%s.all(a, a.all(k, !k.startsWith(%q) || k in [%s]) && "+
		"(!(%q in a) || a[%q] in ['tls-pem', 'kerberos']) && "+
		"(!(%q in a) || a[%q] != '' && a[%q].matches(%q)))",
		maps, AnnotationPrefix, strings.Join(quoted, ", "),
		format, format, scopeKey, scopeKey, scopeKey, "^"+entry+"(,"+entry+")*$")
}

// AllowsCEL is the predicate over annotation maps, for maps that
// DecidableCEL decides, that SCOPE finds nothing in them.
func AllowsCEL(maps string) string {
	name := func(first string) string { return first + "([-a-z0-9]{0,61}[a-z0-9])?" }
	entry := "(node|pod|service=" + name("[a-z]") + "|listener-volume=" + name("[a-z0-9]") + ")"
	class, format, scopeKey := annotationClass, AnnotationPrefix+"format", AnnotationPrefix+"scope"
	return fmt.Sprintf("%s.all(a, !a.exists(k, k.startsWith(%q)) || ("+
		"%q in a && a[%q] != '' && (!(%q in a) || a[%q] in ['tls-pem', 'tls-p12', 'kerberos']) && (!(%q in a) || a[%q].matches(%q))))",
		maps, AnnotationPrefix, class, class, format, format, scopeKey, scopeKey, "^"+entry+"(,"+entry+")*$")
}

// FindingsCEL is the CEL list of the findings (strings "<path>: <code>:
// <message><attribution>") of the annotation map a at the field path p (a
// CEL string expression).
func FindingsCEL(p, attribution string) string {
	scopeKey := AnnotationPrefix + "scope"
	return fmt.Sprintf("!a.exists(k, k.startsWith(%q)) ? [] : "+
		"((!(%q in a) || a[%q] == '') ? [%s + %q + %q] : []) + "+
		"((%q in a) ? %s : [])",
		AnnotationPrefix,
		annotationClass, annotationClass, p, "["+annotationClass+"]: "+string(SecretClassMissing)+": ", msgSecretClassMissing+attribution,
		scopeKey, entryFindingsCEL("a["+fmt.Sprintf("%q", scopeKey)+"]", p+" + "+fmt.Sprintf("%q", "["+scopeKey+"]"), attribution))
}

// entryFindingsCEL is the CEL list of the findings of the scope value s (a
// CEL string) at the field path path (a CEL string), one per invalid entry,
// as checkEntry reports them.
func entryFindingsCEL(s, path, attribution string) string {
	key := "e.split('=')[0]"
	value := "(e.split('=').size() > 1 ? e.split('=')[1] : '')"
	msg := func(code policies.Code) string {
		return fmt.Sprintf("%s + %q + %s + %q", path, ": "+string(code)+": ", entryMessages[code].cel("string(j + 1)", key), attribution)
	}
	entry := fmt.Sprintf("(%s == 'node' || %s == 'pod') ? (e.contains('=') ? %s : '') : "+
		"(%s == 'service' || %s == 'listener-volume') ? ("+
		"%s == '' ? %s : "+
		"e.split('=').size() > 2 ? %s : "+
		"(%s == 'service' && !(%s.size() <= 63 && %s.matches(%q))) ? %s : "+
		"(%s == 'listener-volume' && !(%s.size() <= 63 && %s.matches(%q))) ? %s : '') : "+
		"(%s == '' && e.contains('=')) ? %s : "+
		"e == '' ? %s : ''",
		key, key, msg(ScopeUnexpectedValue),
		key, key,
		value, msg(ScopeValueMissing),
		msg(ScopeValueHasDelimiter),
		key, value, value, dns1035Label, msg(ScopeServiceNameInvalid),
		key, value, value, dns1123Label, msg(ScopeListenerVolumeNameInvalid),
		key, msg(ScopeKeyMissing),
		msg(ScopeEntryEmpty),
	)
	return fmt.Sprintf("%s.split(',').transformList(j, e, %s).filter(m, m != '')", s, entry)
}
