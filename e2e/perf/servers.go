package perf

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a webhook server run as its own process, so its CPU and memory
// are its own.
type Process struct {
	Name string
	// Base is the https URL of the webhook listener on loopback.
	Base string
	cmd  *exec.Cmd
	done chan error
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Sample reads the process's CPU and memory from /proc.
func (p *Process) Sample() (ProcSample, error) { return ReadProc(p.Pid()) }

// StartProcess runs bin with args (which must make it listen on port on
// 127.0.0.1), writing its output to logPath, and waits until ready reports
// true, for at most timeout. The process is killed if it does not get ready.
func StartProcess(name, bin string, args []string, port int, logPath string, ready func() bool, timeout time.Duration) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the load tool
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &Process{Name: name, Base: "https://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan error, 1)}
	go func() {
		p.done <- cmd.Wait()
		logFile.Close()
	}()
	deadline := time.Now().Add(timeout)
	for !ready() {
		select {
		case err := <-p.done:
			p.done <- err
			return nil, fmt.Errorf("%s exited before it was ready (%v); see %s", name, err, logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s not ready after %s; see %s", name, timeout, logPath)
		}
	}
	return p, nil
}

// Stop sends SIGTERM, and SIGKILL if the process has not exited within 10
// seconds.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// HTTPReady reports whether GET url answers 200.
func HTTPReady(url string) func() bool {
	return func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// ReviewReady reports whether the server at base answers review r.
func ReviewReady(client *http.Client, base string, r Review) func() bool {
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, kind := send(ctx, client, base, r)
		return kind == ""
	}
}

// PeakRSSOf runs bin with args to completion and returns its peak RSS in
// MiB, the largest VmHWM read from /proc while it runs (every 2 ms, so the
// last instants of a very short run can be missed); an exit status outside
// okExit is an error. (The rusage of a child is no use here: a Go parent
// starts children with vfork, and the kernel folds the parent's own peak
// into the child's ru_maxrss on exec.)
func PeakRSSOf(ctx context.Context, bin string, args []string, okExit []int) (float64, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	ticker := time.NewTicker(2 * time.Millisecond)
	defer ticker.Stop()
	for {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err == nil {
			if _, hwm, err := ParseStatusMemory(string(status)); err == nil {
				peak = max(peak, hwm)
			}
		}
		select {
		case <-done:
			code := cmd.ProcessState.ExitCode()
			if !slices.Contains(okExit, code) {
				return 0, fmt.Errorf("%s %s exited with %d", bin, strings.Join(args, " "), code)
			}
			if peak == 0 {
				return 0, fmt.Errorf("%s exited before its memory could be read", bin)
			}
			return MiB(peak), nil
		case <-ticker.C:
		}
	}
}
