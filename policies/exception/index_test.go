package exception

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

var (
	gkStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkPod         = schema.GroupKind{Kind: "Pod"}
	gkNamespace   = schema.GroupKind{Kind: "Namespace"}
)

// hdfs is the StatefulSet the base exceptions name.
func hdfs() Subject {
	return Subject{Namespace: "team-a", Kind: gkStatefulSet, Name: "hdfs", Labels: map[string]string{"app": "hdfs", "tier": "data"}}
}

// TestExcusable: a content finding can be excused; a finding about the
// review or the view (no evidence: StateUnavailable, a limit, a parse
// failure) never is, and StateUnavailable is not even when given evidence.
func TestExcusable(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    policies.Finding
		want bool
	}{
		{"a content denial", policies.Denial(codeDelimiter, field.NewPath("spec"), "v", "m"), true},
		{"a content warning", policies.Warning(codeDelimiter, field.NewPath("spec"), "v", "m"), true},
		{"a content finding with empty evidence", policies.Denial(codeDelimiter, nil, "", "m"), true},
		{"StateUnavailable", policies.Unratcheted(policies.StateUnavailable, nil, "m"), false},
		{"a limit", policies.Unratcheted("ScopeWalkLimit", nil, "m"), false},
		{"a parse failure", policies.Unratcheted("OverrideDocumentInvalid", nil, "m"), false},
		{"StateUnavailable with evidence", policies.Denial(policies.StateUnavailable, nil, "v", "m"), false},
		{"a finding built without evidence", policies.Finding{Code: codeDelimiter}, false},
	} {
		if got := Excusable(tt.f); got != tt.want {
			t.Errorf("%s: Excusable() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestExcuse(t *testing.T) {
	withMatch := func(e Entry, m ...exceptionsv1alpha1.ObjectSelector) Entry {
		e.Spec.Match = m
		return e
	}
	labelled := func(ls *metav1.LabelSelector) exceptionsv1alpha1.ObjectSelector {
		return exceptionsv1alpha1.ObjectSelector{LabelSelector: ls}
	}
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	tests := []struct {
		name    string
		entries []Entry
		opts    Options
		subject func(*Subject)
		webhook string
		finding policies.Finding
		want    string // the exception named; "" for none
		expired string // the expired exception Expired names
	}{
		{name: "namespace, kind and name", entries: []Entry{cluster("c")}, want: "c"},
		{name: "another namespace", entries: []Entry{cluster("c")}, subject: func(s *Subject) { s.Namespace = "team-b" }},
		{name: "another kind", entries: []Entry{cluster("c")}, subject: func(s *Subject) { s.Kind = schema.GroupKind{Group: "apps", Kind: "Deployment"} }},
		{name: "same kind in another group", entries: []Entry{cluster("c")}, subject: func(s *Subject) { s.Kind.Group = "example.com" }},
		{name: "another name", entries: []Entry{cluster("c")}, subject: func(s *Subject) { s.Name = "hdfs-2" }},
		{name: "no name (generateName)", entries: []Entry{cluster("c")}, subject: func(s *Subject) { s.Name = "" }},
		{name: "another webhook", entries: []Entry{cluster("c")}, webhook: "pod-security"},
		{name: "another code", entries: []Entry{cluster("c")}, finding: content(codeOther)},
		{name: "every webhook", entries: []Entry{func() Entry { e := cluster("c"); e.Spec.Webhooks = []string{"*"}; return e }()},
			webhook: "pod-security", want: "c"},
		{name: "every code", entries: []Entry{func() Entry { e := cluster("c"); e.Spec.Codes = []string{"*"}; return e }()},
			finding: content(codeOther), want: "c"},
		{name: "one of several webhooks and codes", entries: []Entry{func() Entry {
			e := cluster("c")
			e.Spec.Webhooks = []string{"pod-security", "secret-scope"}
			e.Spec.Codes = []string{string(codeOther), string(codeDelimiter)}
			return e
		}()}, want: "c"},
		{name: "every code excuses no StateUnavailable", entries: []Entry{func() Entry {
			e := cluster("c")
			e.Spec.Webhooks, e.Spec.Codes = []string{"*"}, []string{"*"}
			return e
		}()}, finding: policies.Unratcheted(policies.StateUnavailable, nil, "m")},
		{name: "a limit is never excused, even by its code", entries: []Entry{func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{"ScopeWalkLimit"}
			return e
		}()}, finding: policies.Unratcheted("ScopeWalkLimit", nil, "m")},
		{name: "StateUnavailable named in codes", entries: []Entry{func() Entry {
			e := cluster("c")
			e.Spec.Codes = []string{string(policies.StateUnavailable)}
			return e
		}()}, finding: policies.Denial(policies.StateUnavailable, nil, "v", "m")},
		{name: "a match entry of several", entries: []Entry{withMatch(cluster("c"),
			exceptionsv1alpha1.ObjectSelector{Names: []string{"other"}},
			exceptionsv1alpha1.ObjectSelector{Namespaces: []string{"team-b", "team-a"}, Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Pod"}, {Group: "apps", Kind: "StatefulSet"}}},
		)}, want: "c"},
		{name: "matchLabels", entries: []Entry{withMatch(cluster("c"), labelled(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "hdfs"}}))}, want: "c"},
		{name: "matchLabels not held", entries: []Entry{withMatch(cluster("c"), labelled(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "hbase"}}))}},
		{name: "matchExpressions In", entries: []Entry{withMatch(cluster("c"), labelled(expr("tier", metav1.LabelSelectorOpIn, "web", "data")))}, want: "c"},
		{name: "matchExpressions NotIn", entries: []Entry{withMatch(cluster("c"), labelled(expr("tier", metav1.LabelSelectorOpNotIn, "data")))}},
		{name: "matchExpressions Exists", entries: []Entry{withMatch(cluster("c"), labelled(expr("app", metav1.LabelSelectorOpExists)))}, want: "c"},
		{name: "matchExpressions DoesNotExist", entries: []Entry{withMatch(cluster("c"), labelled(expr("app", metav1.LabelSelectorOpDoesNotExist)))}},
		{name: "matchExpressions on an unlabelled object", entries: []Entry{withMatch(cluster("c"), labelled(expr("app", metav1.LabelSelectorOpDoesNotExist)))},
			subject: func(s *Subject) { s.Labels = nil }, want: "c"},
		{name: "labels and name both required", entries: []Entry{withMatch(cluster("c"), exceptionsv1alpha1.ObjectSelector{
			Names: []string{"hdfs"}, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hbase"}}})}},
		{name: "an invalid label selector excuses nothing", entries: []Entry{withMatch(cluster("c"),
			exceptionsv1alpha1.ObjectSelector{Names: []string{"hdfs"}},
			labelled(expr("app", "Near", "x")))}},
		{name: "ClusterException without namespaces reaches every namespace", entries: []Entry{withMatch(cluster("c"), exceptionsv1alpha1.ObjectSelector{Names: []string{"hdfs"}})},
			subject: func(s *Subject) { s.Namespace = "team-z" }, want: "c"},
		{name: "ClusterException without namespaces reaches cluster-scoped objects", entries: []Entry{withMatch(cluster("c"),
			exceptionsv1alpha1.ObjectSelector{Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Namespace"}}})},
			subject: func(s *Subject) { *s = Subject{Kind: gkNamespace, Name: "team-a"} }, want: "c"},
		{name: "ClusterException with namespaces reaches no cluster-scoped object", entries: []Entry{withMatch(cluster("c"),
			exceptionsv1alpha1.ObjectSelector{Namespaces: []string{"team-a"}, Kinds: []exceptionsv1alpha1.GroupKind{{Kind: "Namespace"}}})},
			subject: func(s *Subject) { *s = Subject{Kind: gkNamespace, Name: "team-a"} }},
		{name: "Exception in its namespace", entries: []Entry{namespaced("team-a", "e")}, opts: Options{Namespaced: true}, want: "team-a/e"},
		{name: "Exception whose whole namespace is selected", entries: []Entry{withMatch(namespaced("team-a", "e"), exceptionsv1alpha1.ObjectSelector{})},
			opts: Options{Namespaced: true}, subject: func(s *Subject) { s.Kind, s.Name = gkPod, "any" }, want: "team-a/e"},
		{name: "Exception while namespaced exceptions are off", entries: []Entry{namespaced("team-a", "e")}},
		{name: "Exception in another namespace", entries: []Entry{namespaced("team-b", "e")}, opts: Options{Namespaced: true}},
		{name: "Exception naming another namespace reaches nothing", entries: []Entry{withMatch(namespaced("team-b", "e"),
			exceptionsv1alpha1.ObjectSelector{Namespaces: []string{"team-a"}, Names: []string{"hdfs"}})}, opts: Options{Namespaced: true}},
		{name: "Exception naming its own and another namespace reaches its own only", entries: []Entry{withMatch(namespaced("team-b", "e"),
			exceptionsv1alpha1.ObjectSelector{Namespaces: []string{"team-a", "team-b"}, Names: []string{"hdfs"}})}, opts: Options{Namespaced: true}},
		{name: "Exception without namespaces reaches no cluster-scoped object", entries: []Entry{withMatch(namespaced("team-a", "e"),
			exceptionsv1alpha1.ObjectSelector{})}, opts: Options{Namespaced: true},
			subject: func(s *Subject) { *s = Subject{Kind: gkNamespace, Name: "team-a"} }},
		{name: "expired", entries: []Entry{func() Entry { e := cluster("c"); e.Spec.Expires = in(-time.Second); return e }()}, expired: "c"},
		{name: "expiring at the review", entries: []Entry{func() Entry { e := cluster("c"); e.Spec.Expires = in(0); return e }()}, expired: "c"},
		{name: "expired beside one in force", entries: []Entry{
			func() Entry { e := cluster("a"); e.Spec.Expires = in(-time.Second); return e }(), cluster("b"),
		}, want: "b", expired: "a"},
		{name: "the first by key of several", entries: []Entry{cluster("z"), cluster("m"), namespaced("team-a", "e"), cluster("x")},
			opts: Options{Namespaced: true}, want: "m"},
		{name: "the first by key, the namespace's own sorted in", entries: []Entry{cluster("z"), namespaced("team-a", "e")},
			opts: Options{Namespaced: true}, want: "team-a/e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subject := hdfs()
			if tt.subject != nil {
				tt.subject(&subject)
			}
			webhook, finding := tt.webhook, tt.finding
			if webhook == "" {
				webhook = "secret-scope"
			}
			if finding.Code == "" {
				finding = content(codeDelimiter)
			}
			m := NewIndex(tt.entries, tt.opts).Match(subject, now)
			name, ok := m.Excuse(webhook, finding)
			if name != tt.want || ok != (tt.want != "") {
				t.Errorf("Excuse() = %q, %v; want %q", name, ok, tt.want)
			}
			name, ok = m.Expired(webhook, finding)
			if name != tt.expired || ok != (tt.expired != "") {
				t.Errorf("Expired() = %q, %v; want %q", name, ok, tt.expired)
			}
			if m.Empty() && (tt.want != "" || tt.expired != "") {
				t.Errorf("Empty() = true with a match")
			}
		})
	}
}

// TestExcuseIsOrderIndependent: the exception named, and the statuses, do
// not depend on the order the exceptions are given in.
func TestExcuseIsOrderIndependent(t *testing.T) {
	entries := []Entry{cluster("z"), cluster("m"), namespaced("team-a", "e"), cluster("x"), namespaced("team-a", "a")}
	var first string
	for i := range entries {
		rotated := append(append([]Entry{}, entries[i:]...), entries[:i]...)
		ix := NewIndex(rotated, Options{Namespaced: true})
		name, _ := ix.Match(hdfs(), now).Excuse("secret-scope", content(codeDelimiter))
		if i == 0 {
			first = name
		} else if name != first {
			t.Errorf("rotation %d: Excuse() = %q, want %q", i, name, first)
		}
		statuses := ix.Statuses(now, nil)
		for j := 1; j < len(statuses); j++ {
			if statuses[j-1].Name >= statuses[j].Name {
				t.Errorf("rotation %d: statuses not in key order: %v", i, statuses)
			}
		}
	}
	if first != "m" {
		t.Errorf("Excuse() = %q, want m, the first key", first)
	}
}

// TestExpiryIsJudgedAtMatch: an index built while an exception is in force
// stops excusing at its expiry.
func TestExpiryIsJudgedAtMatch(t *testing.T) {
	ix := NewIndex([]Entry{cluster("c")}, Options{})
	if _, ok := ix.Match(hdfs(), now.Add(24*time.Hour-time.Nanosecond)).Excuse("secret-scope", content(codeDelimiter)); !ok {
		t.Error("not excused just before the expiry")
	}
	if name, ok := ix.Match(hdfs(), now.Add(24*time.Hour)).Excuse("secret-scope", content(codeDelimiter)); ok {
		t.Errorf("excused by %s at its expiry", name)
	}
}

func TestStatuses(t *testing.T) {
	expired := cluster("expired")
	expired.Spec.Expires = in(-time.Hour)
	invalid := cluster("invalid")
	invalid.Spec.Match[0].LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
	entries := []Entry{cluster("used"), cluster("unused"), expired, invalid, namespaced("team-a", "off")}
	ix := NewIndex(entries, Options{})
	got := ix.Statuses(now, map[string]int{"used": 3, "expired": 1, "unknown": 7})
	want := []Status{
		{Name: "expired", State: StateExpired, Expires: expired.Spec.Expires.Time, Excused: 1},
		{Name: "invalid", State: StateInvalid, Expires: now.Add(24 * time.Hour)},
		{Name: "team-a/off", State: StateDisabled, Expires: now.Add(24 * time.Hour)},
		{Name: "unused", State: StateUnused, Expires: now.Add(24 * time.Hour)},
		{Name: "used", State: StateUsed, Expires: now.Add(24 * time.Hour), Excused: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("Statuses() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].State != want[i].State || !got[i].Expires.Equal(want[i].Expires) || got[i].Excused != want[i].Excused {
			t.Errorf("Statuses()[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := ix.Statuses(now.Add(25*time.Hour), map[string]int{"used": 3}); s[4].State != StateExpired {
		t.Errorf("a day later: %+v, want used Expired", s[4])
	}
}

// TestNilIndexExcusesNothing: a server without exceptions may pass a nil
// index.
func TestNilIndexExcusesNothing(t *testing.T) {
	var ix *Index
	m := ix.Match(hdfs(), now)
	if _, ok := m.Excuse("secret-scope", content(codeDelimiter)); ok || !m.Empty() || ix.Statuses(now, nil) != nil {
		t.Error("a nil index excused or reported something")
	}
}

// TestMatchesExpires: the expiry of an exception that selects the object,
// in force or expired, for the warning that names it; none for one that
// does not select it.
func TestMatchesExpires(t *testing.T) {
	expired := cluster("expired")
	expired.Spec.Expires = in(-time.Hour)
	m := NewIndex([]Entry{cluster("c"), expired}, Options{}).Match(hdfs(), now)
	if got, ok := m.Expires("c"); !ok || !got.Equal(now.Add(24*time.Hour)) {
		t.Errorf("Expires(c) = %v, %v; want %v", got, ok, now.Add(24*time.Hour))
	}
	if got, ok := m.Expires("expired"); !ok || !got.Equal(expired.Spec.Expires.Time) {
		t.Errorf("Expires(expired) = %v, %v; want %v", got, ok, expired.Spec.Expires.Time)
	}
	if _, ok := m.Expires("other"); ok {
		t.Error("Expires(other) found an exception that does not select the object")
	}
}

// TestUnreviewedExceptionsExcuseNothing: an exception stored while the
// exception webhook did not enforce (Warn, Audit, not yet installed) is held
// to the same rules by the index: one that selects every object, or has no
// reason, excuses nothing and is Invalid; one whose expiry lies further
// than the maximum duration excuses nothing until it is within it.
func TestUnreviewedExceptionsExcuseNothing(t *testing.T) {
	everything := cluster("everything")
	everything.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{}}
	noReason := cluster("no-reason")
	noReason.Spec.Reason = " "
	wildcards := cluster("wildcards")
	wildcards.Spec.Match[0].Names = nil
	wildcards.Spec.Webhooks, wildcards.Spec.Codes = []string{"*"}, []string{"*"}
	for _, e := range []Entry{everything, noReason, wildcards} {
		ix := NewIndex([]Entry{e}, Options{})
		if name, ok := ix.Match(hdfs(), now).Excuse("secret-scope", content(codeDelimiter)); ok {
			t.Errorf("%s excused the finding as %s", e.Name, name)
		}
		if got := ix.Statuses(now, nil); got[0].State != StateInvalid {
			t.Errorf("%s: state %s, want Invalid", e.Name, got[0].State)
		}
	}

	far := cluster("far")
	far.Spec.Expires = in(365 * 24 * time.Hour)
	ix := NewIndex([]Entry{far}, Options{MaxDuration: 30 * 24 * time.Hour})
	if name, ok := ix.Match(hdfs(), now).Excuse("secret-scope", content(codeDelimiter)); ok {
		t.Errorf("an expiry a year away excused the finding as %s", name)
	}
	if got := ix.Statuses(now, nil); got[0].State != StateInvalid {
		t.Errorf("an expiry a year away: state %s, want Invalid", got[0].State)
	}
	late := now.Add(340 * 24 * time.Hour)
	if _, ok := ix.Match(hdfs(), late).Excuse("secret-scope", content(codeDelimiter)); !ok {
		t.Error("within the maximum duration of its expiry, the exception did not excuse")
	}
}
