package exception

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// FuzzExceptions feeds random objects to FromObject and Validate, and the
// exceptions that decode to the index with a random subject, for panics,
// and checks the matcher's promises on every answer: an exception named by
// Excuse is in force, its own namespace's if it is an Exception, named by
// Key, and never excuses a finding about the review or the view.
func FuzzExceptions(f *testing.F) {
	f.Add([]byte(docExample), "team-a", "apps", "StatefulSet", "hdfs-namenode", "secret-scope", "ScopeNameHasDelimiter", int64(0))
	f.Add([]byte(strings.Replace(docExample, "kind: Exception", "kind: ClusterException", 1)), "team-b", "", "Pod", "x", "*", "*", int64(1))
	f.Add([]byte(`{"apiVersion":"gatehouse.dev/v1alpha1","kind":"ClusterException","metadata":{"name":"c"},"spec":{"match":[{},{"labelSelector":{"matchExpressions":[{"key":"a","operator":"Near"}]}}],"webhooks":["*"],"codes":["*"],"reason":"r","expires":"2026-12-04T00:00:00Z"}}`),
		"", "", "Namespace", "team-a", "pod-security", "StateUnavailable", int64(2))
	f.Add([]byte(`{"apiVersion":"gatehouse.dev/v1alpha1","kind":"Exception","metadata":{"name":"e","namespace":"a"},"spec":{"match":[{"namespaces":["b",""],"labelSelector":{"matchLabels":{"k":"v"}}}],"webhooks":[],"codes":[""],"expires":"1970-01-01T00:00:00Z"}}`),
		"b", "", "Pod", "", "", "", int64(3))
	f.Add([]byte(`[1, 2]`), "", "", "", "", "", "", int64(0))
	f.Fuzz(func(t *testing.T, data []byte, namespace, group, kind, name, webhook, code string, flags int64) {
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return
		}
		e, err := FromObject(obj)
		if err != nil {
			return
		}
		r := rules()
		r.Namespaced = flags&1 == 0
		findings := Validate(e, now, r)
		if !slices.IsSortedFunc(findings, func(a, b policies.Finding) int {
			return cmp.Or(strings.Compare(a.Field, b.Field), strings.Compare(string(a.Code), string(b.Code)), strings.Compare(a.Message, b.Message))
		}) {
			t.Fatalf("findings are not sorted: %v", findings)
		}
		other := cluster("zz-other")
		ix := NewIndex([]Entry{e, other}, Options{Namespaced: r.Namespaced})
		subject := Subject{Namespace: namespace, Kind: schema.GroupKind{Group: group, Kind: kind}, Name: name, Labels: map[string]string{"app": name}}
		at := now.Add(time.Duration(flags>>1) % (1000 * time.Hour))
		m := ix.Match(subject, at)
		for _, finding := range []policies.Finding{content(policies.Code(code)), policies.Unratcheted(policies.Code(code), nil, "m")} {
			excusedBy, ok := m.Excuse(webhook, finding)
			if !ok {
				continue
			}
			if !Excusable(finding) {
				t.Fatalf("%s excused a finding about the review", excusedBy)
			}
			if excusedBy == other.Key() {
				continue
			}
			if excusedBy != e.Key() {
				t.Fatalf("Excuse() named %q, not a key of the index", excusedBy)
			}
			if !at.Before(e.Spec.Expires.Time) {
				t.Fatalf("%s excused at %v, after its expiry %v", excusedBy, at, e.Spec.Expires)
			}
			if e.Namespaced() && (!r.Namespaced || subject.Namespace != e.Namespace) {
				t.Fatalf("Exception %s excused an object of namespace %q (namespaced exceptions honoured: %v)", excusedBy, subject.Namespace, r.Namespaced)
			}
		}
		if s := ix.Statuses(at, nil); len(s) != 2 {
			t.Fatalf("Statuses() = %v, want two", s)
		}
	})
}
