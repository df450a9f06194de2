package perf

import (
	"math"
	"sort"
	"time"
)

// Latencies collects durations and answers percentiles over them. The zero
// value is ready to use; it is not safe for concurrent use (each load worker
// keeps its own and they are merged).
type Latencies struct {
	d      []time.Duration
	sorted bool
}

// Add records one duration.
func (l *Latencies) Add(d time.Duration) {
	l.d = append(l.d, d)
	l.sorted = false
}

// Merge adds every duration of other.
func (l *Latencies) Merge(other *Latencies) {
	l.d = append(l.d, other.d...)
	l.sorted = false
}

// Count is the number of durations recorded.
func (l *Latencies) Count() int { return len(l.d) }

// Percentile returns the nearest-rank q-quantile (0 < q <= 1): the smallest
// recorded duration such that at least q of all durations are at most it.
// It returns 0 when nothing was recorded.
func (l *Latencies) Percentile(q float64) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	if !l.sorted {
		sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
		l.sorted = true
	}
	rank := int(math.Ceil(q * float64(len(l.d))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(l.d) {
		rank = len(l.d)
	}
	return l.d[rank-1]
}

// Max is the largest recorded duration.
func (l *Latencies) Max() time.Duration { return l.Percentile(1) }

// Summary is a latency distribution in milliseconds, as reported.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Ms"`
	P90   float64 `json:"p90Ms"`
	P99   float64 `json:"p99Ms"`
	P999  float64 `json:"p999Ms"`
	Max   float64 `json:"maxMs"`
}

// Summarize returns the reported percentiles.
func (l *Latencies) Summarize() Summary {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Summary{
		Count: l.Count(),
		P50:   ms(l.Percentile(0.50)),
		P90:   ms(l.Percentile(0.90)),
		P99:   ms(l.Percentile(0.99)),
		P999:  ms(l.Percentile(0.999)),
		Max:   ms(l.Max()),
	}
}

// Spread is the minimum, median and maximum of a few numbers (one per round
// or run).
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// SpreadOf returns the spread of values; the median of an even count is the
// mean of the two middle values.
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	mid := len(s) / 2
	median := s[mid]
	if len(s)%2 == 0 {
		median = (s[mid-1] + s[mid]) / 2
	}
	return Spread{Min: s[0], Median: median, Max: s[len(s)-1]}
}

// Ratio returns a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
