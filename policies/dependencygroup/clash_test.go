package dependencygroup

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

const (
	t1 = "2026-01-01T00:00:00Z"
	t2 = "2026-02-01T00:00:00Z"
	t3 = "2026-03-01T00:00:00Z"
)

func TestClashes(t *testing.T) {
	tests := []struct {
		name   string
		groups []map[string]any
		want   []Clash
	}{
		{name: "no groups"},
		{name: "disjoint", groups: []map[string]any{group("a", t1, "x.io"), group("b", t2, "y.io")}},
		{name: "oldest wins", groups: []map[string]any{group("young", t2, "x.io"), group("old", t1, "x.io")},
			want: []Clash{{CRD: "x.io", Group: "young", Winner: "old"}}},
		{name: "tie goes to the smaller name", groups: []map[string]any{group("b", t1, "x.io"), group("a", t1, "x.io")},
			want: []Clash{{CRD: "x.io", Group: "b", Winner: "a"}}},
		{name: "missing timestamp is newest", groups: []map[string]any{group("a", "", "x.io"), group("z", t3, "x.io")},
			want: []Clash{{CRD: "x.io", Group: "a", Winner: "z"}}},
		{name: "unparsable timestamp is newest", groups: []map[string]any{group("a", "yesterday", "x.io"), group("z", t3, "x.io")},
			want: []Clash{{CRD: "x.io", Group: "a", Winner: "z"}}},
		{name: "both missing: name decides", groups: []map[string]any{group("b", "", "x.io"), group("a", "", "x.io")},
			want: []Clash{{CRD: "x.io", Group: "b", Winner: "a"}}},
		{name: "timezone offsets compare as instants", groups: []map[string]any{
			group("a", "2026-01-01T01:00:00+02:00", "x.io"), group("b", "2026-01-01T00:00:00Z", "x.io"),
		}, want: []Clash{{CRD: "x.io", Group: "b", Winner: "a"}}},
		{name: "a group being deleted neither wins nor loses", groups: []map[string]any{
			deleting(group("old", t1, "x.io")), group("young", t2, "x.io"), deleting(group("other", t3, "x.io")),
		}},
		{name: "three claimants", groups: []map[string]any{group("c", t3, "x.io"), group("a", t1, "x.io"), group("b", t2, "x.io")},
			want: []Clash{{CRD: "x.io", Group: "b", Winner: "a"}, {CRD: "x.io", Group: "c", Winner: "a"}}},
		{name: "one group loses several CRDs to different winners", groups: []map[string]any{
			group("loser", t3, "x.io", "y.io", "z.io"), group("wx", t1, "x.io"), group("wy", t2, "y.io"),
		}, want: []Clash{{CRD: "x.io", Group: "loser", Winner: "wx"}, {CRD: "y.io", Group: "loser", Winner: "wy"}}},
		{name: "a loser still wins against younger groups", groups: []map[string]any{
			group("a", t1, "x.io"), group("b", t2, "x.io", "y.io"), group("c", t3, "y.io"),
		}, want: []Clash{{CRD: "x.io", Group: "b", Winner: "a"}, {CRD: "y.io", Group: "c", Winner: "b"}}},
		{name: "a CRD listed twice by one group counts once", groups: []map[string]any{group("a", t1, "x.io", "x.io")}},
		{name: "unnamed groups and malformed entries are skipped", groups: []map[string]any{
			group("", t1, "x.io"), group("b", t2, "x.io", 1.0, ""), {"spec": "x"}, nil,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clashes(tt.groups); !slices.Equal(got, tt.want) {
				t.Errorf("Clashes = %v\nwant     %v", got, tt.want)
			}
			reversed := slices.Clone(tt.groups)
			slices.Reverse(reversed)
			if got := Clashes(reversed); !slices.Equal(got, tt.want) {
				t.Errorf("Clashes depends on input order: %v", got)
			}
		})
	}
}

// TestDeletingWinnerPromotesNext: without the owner, the next oldest group
// owns the CRD and is Accepted.
func TestDeletingWinnerPromotesNext(t *testing.T) {
	a, b, c := group("a", t1, "x.io"), group("b", t2, "x.io"), group("c", t3, "x.io")
	states := func(groups ...map[string]any) map[string]string {
		out := map[string]string{}
		for name, v := range Decide(groups) {
			out[name] = v.State
		}
		return out
	}
	if got, want := states(a, b, c), map[string]string{"a": Accepted, "b": Rejected, "c": Rejected}; !maps.Equal(got, want) {
		t.Errorf("with a: %v, want %v", got, want)
	}
	if got, want := states(b, c), map[string]string{"b": Accepted, "c": Rejected}; !maps.Equal(got, want) {
		t.Errorf("a deleted: %v, want %v", got, want)
	}
	if got := Clashes([]map[string]any{b, c}); !slices.Equal(got, []Clash{{CRD: "x.io", Group: "c", Winner: "b"}}) {
		t.Errorf("a deleted: clashes %v", got)
	}
	if got, want := states(c), map[string]string{"c": Accepted}; !maps.Equal(got, want) {
		t.Errorf("a and b deleted: %v, want %v", got, want)
	}
}

func TestDecide(t *testing.T) {
	verdicts := Decide([]map[string]any{
		group("loser", t3, "x.io", "y.io", "z.io"), group("wx", t1, "x.io"), group("wy", t2, "y.io"), group("", t1, "z.io"),
	})
	if len(verdicts) != 3 {
		t.Fatalf("verdicts = %v", verdicts)
	}
	for _, name := range []string{"wx", "wy"} {
		if verdicts[name].State != Accepted || verdicts[name].Message == "" {
			t.Errorf("%s: %+v", name, verdicts[name])
		}
	}
	loser := verdicts["loser"]
	want := "CRD x.io belongs to the older DependencyGroup wx; CRD y.io belongs to the older DependencyGroup wy"
	if loser.State != Rejected || loser.Message != want {
		t.Errorf("loser: %+v", loser)
	}
	if strings.Contains(loser.Message, "z.io") {
		t.Error("an unnamed group owns nothing")
	}
}
