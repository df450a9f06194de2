package perf

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// BenchLine is one result line of `go test -bench -benchmem`.
type BenchLine struct {
	Package     string  `json:"package"`
	Name        string  `json:"name"`
	NsPerOp     float64 `json:"nsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
}

// ParseBench reads `go test -bench -benchmem` output: "pkg: <path>" lines
// name the package of the Benchmark lines that follow. The -<GOMAXPROCS>
// suffix is dropped from names. A benchmark run several times (-count) is
// reported once, with its fastest time: on a shared machine the minimum is
// the least disturbed estimate.
func ParseBench(r io.Reader) ([]BenchLine, error) {
	var out []BenchLine
	index := map[string]int{}
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		b := BenchLine{Package: pkg, Name: fields[0]}
		if i := strings.LastIndexByte(b.Name, '-'); i > 0 {
			if _, err := strconv.Atoi(b.Name[i+1:]); err == nil {
				b.Name = b.Name[:i]
			}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "ns/op":
				b.NsPerOp = v
			case "B/op":
				b.BytesPerOp = v
			case "allocs/op":
				b.AllocsPerOp = v
			}
		}
		if i, seen := index[b.Package+" "+b.Name]; seen {
			if b.NsPerOp < out[i].NsPerOp {
				out[i] = b
			}
			continue
		}
		index[b.Package+" "+b.Name] = len(out)
		out = append(out, b)
	}
	return out, sc.Err()
}
