package perf

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports (the kernel exports
// USER_HZ=100 to user space regardless of its internal HZ).
const clockTicks = 100

// ProcSample is one reading of a process from /proc.
type ProcSample struct {
	// CPU is user plus system time consumed since the process started.
	CPU time.Duration
	// RSS is the resident set now, PeakRSS its high-water mark (VmHWM), in
	// bytes.
	RSS, PeakRSS int64
}

// ReadProc reads /proc/<pid>/stat and /proc/<pid>/status.
func ReadProc(pid int) (ProcSample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcSample{}, err
	}
	cpu, err := ParseStatCPU(string(stat))
	if err != nil {
		return ProcSample{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcSample{}, err
	}
	rss, peak, err := ParseStatusMemory(string(status))
	if err != nil {
		return ProcSample{}, err
	}
	return ProcSample{CPU: cpu, RSS: rss, PeakRSS: peak}, nil
}

// ParseStatCPU returns utime+stime of a /proc/<pid>/stat line. The command
// name (field 2) is in parentheses and may itself hold spaces and
// parentheses, so fields are counted from the last ")".
func ParseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat: no command field")
	}
	// After ")": state(3) ppid(4) ... utime(14) stime(15).
	fields := strings.Fields(stat[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("/proc stat: %d fields after the command, want more than %d", len(fields), stime)
	}
	var ticks int64
	for _, i := range []int{utime, stime} {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: field %d: %w", i+3, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// ParseStatusMemory returns VmRSS and VmHWM of /proc/<pid>/status in bytes.
func ParseStatusMemory(status string) (rss, peak int64, err error) {
	found := 0
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc status: %s is not in kB", key)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status: %s: %w", key, err)
		}
		if key == "VmRSS" {
			rss = kb * 1024
		} else {
			peak = kb * 1024
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("/proc status: VmRSS or VmHWM missing")
	}
	return rss, peak, nil
}

// MiB converts bytes to mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }
