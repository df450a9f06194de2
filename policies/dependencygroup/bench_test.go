package dependencygroup

import (
	"fmt"
	"testing"
)

// benchState holds n groups of 5 CRDs each, indexed by CRD as the webhook's
// informer index is.
func benchState(n int) *fakeState {
	s := newFakeState()
	for i := range n {
		name := fmt.Sprintf("group-%d", i)
		crds := make([]string, 5)
		for j := range crds {
			crds[j] = fmt.Sprintf("kind%d.group%d.example.io", j, i)
		}
		s.addGroup(name, crds...)
	}
	return s
}

// BenchmarkValidateGroup is the per-review cost of a group of 5 CRDs: an
// UPDATE of a stored group (its own entries found and excluded) and a
// CREATE of a new one. The lookups are map accesses, so the cost must not
// grow with the number of groups.
func BenchmarkValidateGroup(b *testing.B) {
	for _, n := range []int{100, 10000} {
		state := benchState(n)
		update := group("group-7", "", "kind0.group7.example.io", "kind1.group7.example.io", "kind2.group7.example.io",
			"kind3.group7.example.io", "kind4.group7.example.io")
		create := group("new", "", "a.new.example.io", "b.new.example.io", "c.new.example.io", "d.new.example.io", "e.new.example.io")
		for _, bm := range []struct {
			name string
			obj  map[string]any
		}{{"update", update}, {"create", create}} {
			b.Run(fmt.Sprintf("groups=%d/%s", n, bm.name), func(b *testing.B) {
				if findings := ValidateGroup(bm.obj, state); len(findings) != 0 {
					b.Fatalf("benchmark object has findings: %+v", findings)
				}
				b.ReportAllocs()
				for b.Loop() {
					ValidateGroup(bm.obj, state)
				}
			})
		}
	}
}

func BenchmarkValidateSource(b *testing.B) {
	state := seededState()
	obj := source("mariadb-cluster", map[string]any{"manages": "mariadb as mariadb-dev", "requires": requiresList("mariadb", "strimzi")})
	if findings := ValidateSource(obj, state); len(findings) != 0 {
		b.Fatalf("benchmark object has findings: %+v", findings)
	}
	b.ReportAllocs()
	for b.Loop() {
		ValidateSource(obj, state)
	}
}
