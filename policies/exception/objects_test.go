package exception

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// now is the time of every test review.
var now = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

const (
	codeDelimiter policies.Code = "ScopeNameHasDelimiter"
	codeOther     policies.Code = "ScopeValueMissing"
)

// rules are the Rules of the tests: the default maximum, namespaced
// exceptions on, two webhooks and three codes known.
func rules() Rules {
	return Rules{
		MaxDuration: 720 * time.Hour,
		Namespaced:  true,
		Webhooks:    []string{"secret-scope", "pod-security"},
		Codes:       []policies.Code{codeDelimiter, codeOther, policies.StateUnavailable},
	}
}

// in is a time d after now, as a spec holds it.
func in(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }

// cluster is a valid ClusterException: one code of one webhook for one
// StatefulSet of team-a, for a day.
func cluster(name string) Entry {
	return Entry{Name: name, Spec: exceptionsv1alpha1.ExceptionSpec{
		Match: []exceptionsv1alpha1.ObjectSelector{{
			Namespaces: []string{"team-a"},
			Kinds:      []exceptionsv1alpha1.GroupKind{{Group: "apps", Kind: "StatefulSet"}},
			Names:      []string{"hdfs"},
		}},
		Webhooks: []string{"secret-scope"},
		Codes:    []string{string(codeDelimiter)},
		Reason:   "migrating to per-service scopes, PLAT-1234",
		Expires:  in(24 * time.Hour),
	}}
}

// namespaced is cluster as an Exception of namespace ns.
func namespaced(ns, name string) Entry {
	e := cluster(name)
	e.Namespace = ns
	e.Spec.Match[0].Namespaces = nil
	return e
}

// content is a content finding (it has evidence) with code.
func content(code policies.Code) policies.Finding {
	return policies.Denial(code, nil, "value", "message")
}
