package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Component is a control-plane binary other than kube-apiserver and etcd
// (kube-controller-manager, kube-scheduler, a hollow node), built from the
// pinned module sources like kube-apiserver (tools/controlplane/build.sh) and run as
// a process of its own group. The cluster's Stop does not stop it: Stop it.
type Component struct {
	cmd  *exec.Cmd
	done chan error
	// Log is the component's log file.
	Log string
	// leftovers are removed after the component stopped.
	leftovers []string
}

// startComponent starts binary with args and env (added to this process's),
// logging to <dir>/<binary's name>.log.
func startComponent(ctx context.Context, binary, dir string, env []string, args ...string) (*Component, error) {
	name := filepath.Base(binary)
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	m := &Component{cmd: cmd, done: make(chan error, 1), Log: logPath}
	go func() { m.done <- cmd.Wait() }()
	return m, nil
}

// waitFor polls ready until it reports true, the component exits, or
// timeout passes (then the component is stopped and the error says what it
// failed to do).
func (m *Component) waitFor(timeout time.Duration, failed string, ready func() (bool, error)) error {
	name := filepath.Base(m.cmd.Path)
	deadline := time.Now().Add(timeout)
	for {
		select {
		case err := <-m.done:
			m.done <- err
			return fmt.Errorf("%s exited: %v (log %s)", name, err, m.Log)
		case <-time.After(200 * time.Millisecond):
		}
		if ok, err := ready(); err != nil {
			_ = m.Stop()
			return err
		} else if ok {
			return nil
		}
		if time.Now().After(deadline) {
			_ = m.Stop()
			return fmt.Errorf("%s %s in %s (log %s)", name, failed, timeout, m.Log)
		}
	}
}

// Stop stops the component and waits for it.
func (m *Component) Stop() error {
	if m.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-m.done:
		m.done <- err
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		m.done <- <-m.done
	}
	for _, path := range m.leftovers {
		_ = os.RemoveAll(path)
	}
	return nil
}
