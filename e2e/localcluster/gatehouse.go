package localcluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
)

// GatehouseOptions configure one `gatehouse serve`.
type GatehouseOptions struct {
	// Role is serve's --role: "" or "webhook" serves the webhooks, "audit"
	// runs the background audit alone (no certificate, no webhook port;
	// CertDir, Port and ReconcileDependencyGroups are then unused).
	Role string
	// LeaderElectionNamespace holds the audit role's Lease (default
	// "default").
	LeaderElectionNamespace string
	// CertDir holds tls.crt and tls.key; WorkDir receives the log.
	CertDir, WorkDir string
	// Kubeconfig is the cluster gatehouse reads state from, as which user.
	Kubeconfig string
	// Port is the webhook port and ProbeAddr the /readyz address; zero
	// values pick free ones. A restart passes the previous ones, since the
	// webhook configurations name the port.
	Port      int
	ProbeAddr string
	// MetricsAddr serves /metrics when set ("" switches metrics off).
	MetricsAddr string
	// Binary, when set, runs that gatehouse executable as a child process
	// instead of in this process, so its memory and goroutines are its own.
	Binary string
	// ReconcileDependencyGroups runs the leader-elected status reconciler.
	ReconcileDependencyGroups bool
	// LogName is the log file's name in WorkDir (default gatehouse.log); a
	// restart appends to it.
	LogName string
	// Args are more flags of serve (e.g. --default-mode Audit).
	Args []string
}

// Gatehouse is a running `gatehouse serve`: in this process through the same
// command-line entry point as the binary, or the binary as a child process.
type Gatehouse struct {
	// URL is the base URL the API server calls.
	URL string
	// Port is the webhook port; ProbeAddr serves /readyz, MetricsAddr
	// /metrics (empty when off).
	Port        int
	ProbeAddr   string
	MetricsAddr string
	// Log is the file its JSON log lines go to.
	Log string
	// Pid is the child process's id, or this process's when in-process.
	Pid int

	opts   GatehouseOptions
	cancel context.CancelFunc
	done   chan int
}

// StartGatehouse serves gatehouse with the certificate in certDir, reading
// cluster state through kubeconfig, and waits until it is ready.
func StartGatehouse(ctx context.Context, certDir, workDir, kubeconfig string) (*Gatehouse, error) {
	g, err := LaunchGatehouse(ctx, GatehouseOptions{CertDir: certDir, WorkDir: workDir, Kubeconfig: kubeconfig, ReconcileDependencyGroups: true})
	if err != nil {
		return nil, err
	}
	if err := g.WaitReady(time.Minute); err != nil {
		g.Stop(30 * time.Second)
		return nil, err
	}
	return g, nil
}

// LaunchGatehouse starts gatehouse and returns at once, ready or not: the
// caller decides whether to wait for /readyz (WaitReady).
func LaunchGatehouse(ctx context.Context, o GatehouseOptions) (*Gatehouse, error) {
	if o.Port == 0 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		o.Port = port
	}
	if o.ProbeAddr == "" {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		o.ProbeAddr = "127.0.0.1:" + strconv.Itoa(port)
	}
	if o.LogName == "" {
		o.LogName = "gatehouse.log"
	}
	metricsAddr := "0"
	if o.MetricsAddr != "" {
		metricsAddr = o.MetricsAddr
	}
	ctx, cancel := context.WithCancel(ctx)
	g := &Gatehouse{
		URL:         "https://127.0.0.1:" + strconv.Itoa(o.Port),
		Port:        o.Port,
		ProbeAddr:   o.ProbeAddr,
		MetricsAddr: o.MetricsAddr,
		Log:         filepath.Join(o.WorkDir, o.LogName),
		opts:        o,
		cancel:      cancel,
		done:        make(chan int, 1),
	}
	logFile, err := os.OpenFile(g.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		cancel()
		return nil, err
	}
	args := []string{"serve", "--cert-dir", o.CertDir, "--host", "127.0.0.1", "--port", strconv.Itoa(o.Port),
		"--probe-address", o.ProbeAddr, "--metrics-address", metricsAddr, "--shutdown-delay", "0s", "--cert-poll-interval", "1s",
		"--kubeconfig", o.Kubeconfig}
	leaseNamespace := o.LeaderElectionNamespace
	if leaseNamespace == "" {
		leaseNamespace = "default"
	}
	if o.ReconcileDependencyGroups {
		args = append(args, "--reconcile-dependencygroups", "--manage-selections", "--leader-election-namespace", leaseNamespace)
	}
	if o.Role == "audit" {
		args = []string{"serve", "--role", "audit", "--probe-address", o.ProbeAddr, "--metrics-address", metricsAddr,
			"--kubeconfig", o.Kubeconfig, "--leader-election-namespace", leaseNamespace}
	}
	args = append(args, o.Args...)
	if o.Binary == "" {
		g.Pid = os.Getpid()
		// The log file stays open: controller-runtime's global logger keeps
		// writing to it from goroutines that outlive Run.
		go func() { g.done <- app.Run(ctx, args, strings.NewReader(""), logFile, logFile) }()
		return g, nil
	}
	cmd := exec.Command(o.Binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", o.Binary, err)
	}
	g.Pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		defer logFile.Close()
		err := cmd.Wait()
		close(exited)
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			code = -1
		}
		g.done <- code
	}()
	// The child stops as the binary stops in a pod: on SIGTERM.
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case <-exited:
		}
	}()
	return g, nil
}

// BuildGatehouse builds the gatehouse binary of the repository at repo into
// dir and returns its path (the Go build cache makes repeats cheap).
func BuildGatehouse(repo, dir string) (string, error) {
	out := filepath.Join(dir, "gatehouse")
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", abs, "./cmd/gatehouse")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/gatehouse: %w: %s", err, msg)
	}
	return abs, nil
}

// Ready reports whether /readyz answers 200.
func (g *Gatehouse) Ready() bool {
	return probe(g.ProbeAddr, "/readyz") == http.StatusOK
}

// Check returns the HTTP status of one readiness check ("/readyz/<name>"),
// or 0 when the probe address does not answer.
func (g *Gatehouse) Check(name string) int {
	return probe(g.ProbeAddr, "/readyz/"+name)
}

// WaitReady waits up to timeout for /readyz to answer 200; it fails at once
// if gatehouse exits.
func (g *Gatehouse) WaitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !g.Ready() {
		select {
		case code := <-g.done:
			g.done <- code // Wait and Stop still see the exit
			return fmt.Errorf("gatehouse serve exited with %d; see %s", code, g.Log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gatehouse serve not ready after %s; see %s", timeout, g.Log)
		}
	}
	return nil
}

// Stop ends gatehouse (SIGTERM for a child process) and waits up to timeout
// for it to exit; it returns the exit code, or an error on timeout.
func (g *Gatehouse) Stop(timeout time.Duration) (int, error) {
	g.cancel()
	select {
	case code := <-g.done:
		g.done <- code
		return code, nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("gatehouse serve did not exit within %s; see %s", timeout, g.Log)
	}
}

// Wait waits up to timeout for gatehouse to exit after its context ended.
func (g *Gatehouse) Wait(timeout time.Duration) {
	select {
	case code := <-g.done:
		g.done <- code
	case <-time.After(timeout):
	}
}

// Metrics returns the text exposition of /metrics.
func (g *Gatehouse) Metrics() ([]byte, error) {
	if g.MetricsAddr == "" {
		return nil, errors.New("gatehouse serves no metrics (GatehouseOptions.MetricsAddr)")
	}
	resp, err := http.Get("http://" + g.MetricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func probe(addr, path string) int {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr returns a free loopback address (host:port).
func FreeAddr() (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}
