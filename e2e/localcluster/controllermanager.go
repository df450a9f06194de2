package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControllerManager is a running kube-controller-manager, built from the
// pinned module sources like kube-apiserver (e2e/tools/build.sh): the
// controllers that create pods in a real cluster (ReplicaSet, Deployment,
// StatefulSet, Job, CronJob), each with its own service account's
// credentials as in a kubeadm cluster, and the service account, token,
// root CA publisher, namespace and garbage collector controllers.
type ControllerManager struct {
	cmd  *exec.Cmd
	done chan error
	// Log is the controller manager's log file.
	Log string
}

// ErrNoControllerManager: the binary directory has no kube-controller-manager.
var ErrNoControllerManager = errors.New("no kube-controller-manager")

// controllers are the controllers started: the ones a pod's way from its
// owner to the API server passes through, and the ones a namespace's life
// needs (the PVC protection controller removes the finalizer the API server
// puts on every claim, without which no namespace holding one goes). No
// node, scheduler or cloud runs here.
const controllers = "serviceaccount-token-controller,serviceaccount-controller,root-ca-certificate-publisher-controller," +
	"namespace-controller,garbage-collector-controller,persistentvolumeclaim-protection-controller," +
	"replicaset-controller,deployment-controller,statefulset-controller,job-controller,cronjob-controller"

// StartControllerManager starts kube-controller-manager against the control
// plane as the cluster admin, with --use-service-account-credentials, so
// that every controller writes as its own service account
// (system:serviceaccount:kube-system:<controller>), the users gatehouse
// sees in a real cluster. Stop it with Stop; the cluster's Stop does not.
func (c *Cluster) StartControllerManager(ctx context.Context) (*ControllerManager, error) {
	binary := filepath.Join(c.opts.BinaryDir, "kube-controller-manager")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%w in %s (e2e/tools/build.sh builds it)", ErrNoControllerManager, c.opts.BinaryDir)
	}
	api := c.env.ControlPlane.GetAPIServer()
	dir := filepath.Join(c.opts.WorkDir, "controller-manager")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rootCA := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(rootCA, c.Config.CAData, 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "kube-controller-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, binary,
		"--kubeconfig", c.Kubeconfig,
		"--authentication-kubeconfig", c.Kubeconfig,
		"--authorization-kubeconfig", c.Kubeconfig,
		"--secure-port", "0",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file", filepath.Join(api.CertDir, "sa-signer.key"),
		"--root-ca-file", rootCA,
		"--controllers", controllers,
		// Pods are created at once, whatever the controllers' backoffs.
		"--concurrent-replicaset-syncs", "2",
		"--v", "2",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	m := &ControllerManager{cmd: cmd, done: make(chan error, 1), Log: logPath}
	go func() { m.done <- cmd.Wait() }()
	// It is up when it has made its own service accounts' credentials work:
	// the ServiceAccount controller creates "default" in a new namespace.
	probe := "kcm-probe-" + fmt.Sprint(time.Now().UnixNano()%100000)
	if err := c.ensureNamespace(ctx, probe); err != nil {
		_ = m.Stop()
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-m.done:
			return nil, fmt.Errorf("kube-controller-manager exited: %v (log %s)", err, logPath)
		case <-time.After(200 * time.Millisecond):
		}
		if ok, err := c.serviceAccountExists(ctx, probe, "default"); err != nil {
			_ = m.Stop()
			return nil, err
		} else if ok {
			return m, nil
		}
		if time.Now().After(deadline) {
			_ = m.Stop()
			return nil, fmt.Errorf("kube-controller-manager made no ServiceAccount in 2 minutes (log %s)", logPath)
		}
	}
}

// Stop stops the controller manager and waits for it.
func (m *ControllerManager) Stop() error {
	if m.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
	}
	return nil
}

// serviceAccountExists reports whether namespace/name exists.
func (c *Cluster) serviceAccountExists(ctx context.Context, namespace, name string) (bool, error) {
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.ServiceAccount{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
