package perf

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var l Latencies
	if got := l.Percentile(0.5); got != 0 {
		t.Errorf("empty: p50 = %v, want 0", got)
	}
	// 1ms..100ms in reverse order: the nearest-rank p50 is the 50th value,
	// p99 the 99th, p99.9 and max the 100th.
	for i := 100; i >= 1; i-- {
		l.Add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0.001, 1 * time.Millisecond},
		{0.5, 50 * time.Millisecond},
		{0.9, 90 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{0.999, 100 * time.Millisecond},
		{1, 100 * time.Millisecond},
	} {
		if got := l.Percentile(tc.q); got != tc.want {
			t.Errorf("p%g = %v, want %v", tc.q*100, got, tc.want)
		}
	}
	// Adding after a percentile was read re-sorts.
	l.Add(0)
	if got := l.Percentile(0.001); got != 0 {
		t.Errorf("after adding 0: minimum = %v, want 0", got)
	}
	s := l.Summarize()
	if s.Count != 101 || s.Max != 100 || s.P50 != 50 {
		t.Errorf("summary = %+v", s)
	}
}

func TestMergeKeepsEveryDuration(t *testing.T) {
	var a, b Latencies
	a.Add(3 * time.Millisecond)
	b.Add(1 * time.Millisecond)
	b.Add(2 * time.Millisecond)
	a.Merge(&b)
	if a.Count() != 3 || a.Percentile(0.01) != time.Millisecond || a.Max() != 3*time.Millisecond {
		t.Errorf("merged: count %d, min %v, max %v", a.Count(), a.Percentile(0.01), a.Max())
	}
}

func TestSpreadOf(t *testing.T) {
	if got := SpreadOf([]float64{3, 1, 2}); got != (Spread{1, 2, 3}) {
		t.Errorf("odd count: %+v", got)
	}
	if got := SpreadOf([]float64{4, 1, 3, 2}); got != (Spread{1, 2.5, 4}) {
		t.Errorf("even count: %+v", got)
	}
	if got := SpreadOf(nil); got != (Spread{}) {
		t.Errorf("empty: %+v", got)
	}
	if Ratio(1, 0) != 0 || Ratio(3, 2) != 1.5 {
		t.Error("Ratio")
	}
}
