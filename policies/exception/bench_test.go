package exception

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
)

// benchEntries are 1,000 exceptions as a large cluster might hold them:
// nine Exceptions in each of 100 namespaces (names, label selectors, kinds),
// 80 ClusterExceptions naming three namespaces each, and 20 naming none but
// a kind.
func benchEntries() []Entry {
	var out []Entry
	for ns := range 100 {
		namespace := fmt.Sprintf("team-%d", ns)
		for i := range 9 {
			e := namespaced(namespace, fmt.Sprintf("e-%d", i))
			e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{
				Kinds: []exceptionsv1alpha1.GroupKind{{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "StatefulSet"}},
				Names: []string{fmt.Sprintf("app-%d", i)},
			}}
			if i%3 == 0 {
				e.Spec.Match = append(e.Spec.Match, exceptionsv1alpha1.ObjectSelector{LabelSelector: &metav1.LabelSelector{
					MatchLabels:      map[string]string{"app.kubernetes.io/name": fmt.Sprintf("svc-%d", i)},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"data", "web"}}},
				}})
			}
			out = append(out, e)
		}
	}
	for i := range 80 {
		e := cluster(fmt.Sprintf("c-%d", i))
		e.Spec.Match[0].Namespaces = []string{fmt.Sprintf("team-%d", i), fmt.Sprintf("team-%d", (i+1)%100), fmt.Sprintf("team-%d", (i+2)%100)}
		e.Spec.Match[0].Names = []string{fmt.Sprintf("app-%d", i%9)}
		out = append(out, e)
	}
	for i := range 20 {
		e := cluster(fmt.Sprintf("k-%d", i))
		e.Spec.Match = []exceptionsv1alpha1.ObjectSelector{{Kinds: []exceptionsv1alpha1.GroupKind{{Group: "example.com", Kind: fmt.Sprintf("Widget%d", i)}}}}
		e.Spec.Webhooks = []string{"*"}
		out = append(out, e)
	}
	return out
}

// BenchmarkExcuse1000 is one review's exception matching against 1,000
// exceptions: Match for a Deployment that two of them select, then Excuse
// for each of its six findings (one excused, one about the view).
func BenchmarkExcuse1000(b *testing.B) {
	ix := NewIndex(benchEntries(), Options{Namespaced: true})
	subject := Subject{Namespace: "team-42", Kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Name: "app-4",
		Labels: map[string]string{"app.kubernetes.io/name": "svc-3", "tier": "web", "pod-template-hash": "5d8f9c7b6"}}
	type review struct {
		webhook string
		finding policies.Finding
	}
	reviews := []review{
		{"secret-scope", content(codeDelimiter)},
		{"secret-scope", content(codeOther)},
		{"pod-security", content("PodSecurityPrivileged")},
		{"pod-security", content("PodSecurityHostPath")},
		{"service-account", content("ServiceAccountOverridden")},
		{"secret-scope", policies.Unratcheted(policies.StateUnavailable, nil, "m")},
	}
	at := now.Add(time.Hour)
	if name, ok := ix.Match(subject, at).Excuse("secret-scope", content(codeDelimiter)); !ok || name != "team-42/e-3" {
		b.Fatalf("Excuse() = %q, %v; the benchmark no longer matches what it means to", name, ok)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := ix.Match(subject, at)
		for _, r := range reviews {
			m.Excuse(r.webhook, r.finding)
		}
	}
}

// BenchmarkNewIndex1000 is the cost of compiling 1,000 exceptions, paid
// when the exceptions change, not per review.
func BenchmarkNewIndex1000(b *testing.B) {
	entries := benchEntries()
	b.ReportAllocs()
	for b.Loop() {
		NewIndex(entries, Options{Namespaced: true})
	}
}
