// The read-only view LABEL needs, and the decision on one request.
//
// Reads: metadata.labels of the object (and of the old object on UPDATE),
// and through State the namespace's labels and the OperatorHarnesses.
// Allows: what ForNamespaced, ForClusterScoped and CheckUpdate allow; denies
// a request whose scope labels cannot be read (StateUnavailable, which never
// ratchets).

package scopelabel

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// State is the read-only view of namespaces and OperatorHarnesses the
// webhook fills from informer caches. An error means the view cannot answer.
type State interface {
	// NamespaceLabels returns a namespace's labels; none, without error,
	// for a namespace that does not exist.
	NamespaceLabels(namespace string) (map[string]string, error)
	// HarnessesWithScopeLabel returns the OperatorHarnesses (decoded JSON,
	// read-only) whose spec.scopeToLabel is key.
	HarnessesWithScopeLabel(key string) ([]map[string]any, error)
	// HarnessesIn returns the OperatorHarnesses whose
	// spec.operator.namespace is namespace.
	HarnessesIn(namespace string) ([]map[string]any, error)
}

// Request is the part of an admission request LABEL reads.
type Request struct {
	// Update is true for UPDATE, false for CREATE.
	Update bool
	// Namespace is the object's namespace; empty for a cluster-scoped
	// object.
	Namespace string
	// Username is the requesting user (userInfo.username).
	Username string
	// Object is the object, changed in place; OldObject the stored one on
	// UPDATE.
	Object, OldObject map[string]any
}

var pathLabels = field.NewPath("metadata", "labels")

// Admit applies §5 to one request: on CREATE of a namespaced object it
// copies the namespace's scope labels (ForNamespaced); on CREATE of a
// cluster-scoped object by a harnessed service account it adds that
// account's harnesses' keys (ForClusterScoped); on UPDATE it applies Guard.
func Admit(r Request, state State) (changed bool, findings []policies.Finding) {
	switch {
	case r.Update:
		return false, Guard(r, state)
	case r.Namespace != "":
		nsLabels, err := state.NamespaceLabels(r.Namespace)
		if err != nil {
			return false, unavailable()
		}
		var candidates []map[string]any
		for key := range nsLabels {
			harnesses, err := state.HarnessesWithScopeLabel(key)
			if err != nil {
				return false, unavailable()
			}
			candidates = append(candidates, harnesses...)
		}
		return ForNamespaced(r.Object, nsLabels, EnforcedKeys(candidates))
	default:
		keys, err := claimedKeys(r.Username, state)
		if err != nil {
			return false, unavailable()
		}
		return ForClusterScoped(r.Object, keys), nil
	}
}

// Guard applies §5's UPDATE rule to one request (of the main resource or of
// a status subresource, which sends the whole object): when a service
// account that any OperatorHarness claims (in any mode) makes it, every
// Enforce-mode harness's scope label on the old or the new object is checked
// by CheckUpdate. The caller's own harnesses are not the limit: a harnessed
// operator may not move objects out of, or into, another harness's scope
// either.
func Guard(r Request, state State) []policies.Finding {
	harnessed, err := harnessedAccount(r.Username, state)
	if err != nil {
		return unavailable()
	}
	if !harnessed {
		return nil
	}
	var candidates []map[string]any
	for _, key := range labelKeys(r.Object, r.OldObject) {
		harnesses, err := state.HarnessesWithScopeLabel(key)
		if err != nil {
			return unavailable()
		}
		candidates = append(candidates, harnesses...)
	}
	scopeLabels := EnforcedKeys(candidates)
	var nsLabels map[string]string
	if r.Namespace != "" && addsAny(r.Object, r.OldObject, scopeLabels) {
		if nsLabels, err = state.NamespaceLabels(r.Namespace); err != nil {
			return unavailable()
		}
	}
	return CheckUpdate(r.Object, r.OldObject, scopeLabels, nsLabels, r.Namespace != "")
}

// claimedKeys are the keys of the harnesses claiming username, if it is a
// service account.
func claimedKeys(username string, state State) ([]string, error) {
	namespace, _, ok := ServiceAccount(username)
	if !ok {
		return nil, nil
	}
	harnesses, err := state.HarnessesIn(namespace)
	if err != nil {
		return nil, err
	}
	return ClaimedKeys(harnesses, username), nil
}

// harnessedAccount reports whether username is a service account that some
// OperatorHarness claims.
func harnessedAccount(username string, state State) (bool, error) {
	namespace, _, ok := ServiceAccount(username)
	if !ok {
		return false, nil
	}
	harnesses, err := state.HarnessesIn(namespace)
	if err != nil {
		return false, err
	}
	return Harnessed(harnesses, username), nil
}

// addsAny reports whether obj carries one of scopeLabels that oldObj lacks.
func addsAny(obj, oldObj map[string]any, scopeLabels []string) bool {
	for _, key := range scopeLabels {
		_, had := label(oldObj, key)
		_, has := label(obj, key)
		if has && !had {
			return true
		}
	}
	return false
}

// unavailable is the denial when the view of namespaces or OperatorHarnesses
// could not answer, so which scope labels apply is unknown.
func unavailable() []policies.Finding {
	return []policies.Finding{policies.Unratcheted(policies.StateUnavailable, pathLabels,
		"the webhook's view of namespaces and OperatorHarnesses is not available (cache not synced or failed), "+
			"so the scope labels this object needs are unknown; retry later")}
}
