package perf

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command may hold spaces and parentheses; utime is field 14 and
	// stime field 15 of the whole line.
	stat := "4242 (gate (house) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 100 1000000 2000 18446744073709551615"
	got, err := ParseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Errorf("cpu = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 5"} {
		if _, err := ParseStatCPU(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestParseStatusMemory(t *testing.T) {
	status := "Name:\tgatehouse\nVmPeak:\t 1300000 kB\nVmHWM:\t   40960 kB\nVmRSS:\t   32768 kB\nThreads:\t9\n"
	rss, peak, err := ParseStatusMemory(status)
	if err != nil {
		t.Fatal(err)
	}
	if rss != 32<<20 || peak != 40<<20 {
		t.Errorf("rss %d, peak %d", rss, peak)
	}
	if _, _, err := ParseStatusMemory("VmRSS:\t 1 kB\n"); err == nil {
		t.Error("missing VmHWM: want an error")
	}
	if _, _, err := ParseStatusMemory("VmRSS:\t 1 MB\nVmHWM:\t 1 kB\n"); err == nil {
		t.Error("unit not kB: want an error")
	}
}

func TestReadProcOfThisProcess(t *testing.T) {
	s, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSS <= 0 || s.PeakRSS < s.RSS {
		t.Errorf("rss %d, peak %d", s.RSS, s.PeakRSS)
	}
	if _, err := ReadProc(-1); err == nil {
		t.Error("pid -1: want an error")
	}
}

// Benchmarks run several times are reported once with the fastest time,
// and extra metrics (MB/s) do not shift the columns.
func TestParseBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/gatehouse-dev/gatehouse/policies/scope
BenchmarkValidate/StatefulSet-2         	   12345	      9876 ns/op	    1234 B/op	      12 allocs/op
PASS
pkg: github.com/gatehouse-dev/gatehouse/webhooks
BenchmarkAdapter/secret-scope-2   1000   55000.5 ns/op   30000 B/op   300 allocs/op
BenchmarkAdapter/secret-scope-2   1000   75000 ns/op   30000 B/op   300 allocs/op
pkg: github.com/gatehouse-dev/gatehouse/policies/overrides
BenchmarkValidate-2   1000   5000 ns/op   6.33 MB/s   104109 B/op   500 allocs/op
BenchmarkValidate-2   1000   4000 ns/op   7.33 MB/s   104109 B/op   500 allocs/op
`
	got, err := ParseBench(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []BenchLine{
		{Package: "github.com/gatehouse-dev/gatehouse/policies/scope", Name: "BenchmarkValidate/StatefulSet", NsPerOp: 9876, BytesPerOp: 1234, AllocsPerOp: 12},
		{Package: "github.com/gatehouse-dev/gatehouse/webhooks", Name: "BenchmarkAdapter/secret-scope", NsPerOp: 55000.5, BytesPerOp: 30000, AllocsPerOp: 300},
		{Package: "github.com/gatehouse-dev/gatehouse/policies/overrides", Name: "BenchmarkValidate", NsPerOp: 4000, BytesPerOp: 104109, AllocsPerOp: 500},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"https://127.0.0.1:9443", "https://localhost:1", "https://[::1]:9443"} {
		if err := CheckLoopback(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://10.0.0.1:9443", "https://example.com", "https://0.0.0.0:1"} {
		if err := CheckLoopback(bad); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestPeakRSSOf(t *testing.T) {
	ctx := context.Background()
	mib, err := PeakRSSOf(ctx, "/bin/sh", []string{"-c", "sleep 0.05"}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if mib <= 0 {
		t.Errorf("peak %.2f MiB", mib)
	}
	if _, err := PeakRSSOf(ctx, "/bin/sh", []string{"-c", "sleep 0.05; exit 3"}, []int{0, 1}); err == nil {
		t.Error("exit 3: want an error")
	}
}
