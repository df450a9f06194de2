package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hollowRoots matches the root directories of hollow kubelets.
const hollowRoots = "/tmp/hollow-kubelet.*"

// ErrNoNode: the binary directory has no kube-scheduler or kubemark.
var ErrNoNode = errors.New("no kube-scheduler or kubemark")

// StartScheduler starts kube-scheduler against the control plane as the
// cluster admin, so that pods are bound to a node. Stop it with Stop.
func (c *Cluster) StartScheduler(ctx context.Context) (*Component, error) {
	binary := filepath.Join(c.opts.BinaryDir, "kube-scheduler")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%w: %s has no kube-scheduler (tools/controlplane/build.sh builds it)", ErrNoNode, c.opts.BinaryDir)
	}
	dir := filepath.Join(c.opts.WorkDir, "scheduler")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return startComponent(ctx, binary, dir, nil,
		"--kubeconfig", c.Kubeconfig,
		"--authentication-kubeconfig", c.Kubeconfig,
		"--authorization-kubeconfig", c.Kubeconfig,
		"--secure-port", "0",
		"--leader-elect=false",
		"--v", "2",
	)
}

// StartHollowNode registers a node named name, run by Kubernetes' hollow
// kubelet (kubemark --morph=kubelet): the real kubelet's code, with a fake
// container runtime and image service (CRI) behind it, so that the kubelet
// admits, refuses and starts pods as a real one does, without containers.
// The node carries taint (key=value:NoSchedule, or none when empty), so that
// only pods that tolerate it are bound to it. StartHollowNode returns once
// the node is Ready; Stop it with Stop, and delete the Node.
func (c *Cluster) StartHollowNode(ctx context.Context, name, taint string) (*Component, error) {
	binary := filepath.Join(c.opts.BinaryDir, "kubemark")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%w: %s has no kubemark (tools/controlplane/build.sh builds it)", ErrNoNode, c.opts.BinaryDir)
	}
	dir := filepath.Join(c.opts.WorkDir, "node-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--morph", "kubelet",
		"--name", name,
		"--kubeconfig", c.Kubeconfig,
		"--kubelet-port", fmt.Sprint(port),
		"--kubelet-read-only-port", "0",
		// The fake image service: no containerd on the host.
		"--use-host-image-service=false",
	}
	if taint != "" {
		args = append(args, "--register-with-taints", taint)
	}
	// The hollow kubelet makes its root directory as /tmp/hollow-kubelet.*
	// (not under TMPDIR) and never removes it: the new one is removed on
	// Stop.
	before, err := filepath.Glob(hollowRoots)
	if err != nil {
		return nil, err
	}
	n, err := startComponent(ctx, binary, dir, nil, args...)
	if err != nil {
		return nil, err
	}
	err = n.waitFor(2*time.Minute, "registered no Ready node", func() (bool, error) {
		node := &corev1.Node{}
		err := c.Client.Get(ctx, client.ObjectKey{Name: name}, node)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	after, _ := filepath.Glob(hollowRoots)
	for _, root := range after {
		if !slices.Contains(before, root) {
			n.leftovers = append(n.leftovers, root)
		}
	}
	if err != nil {
		// waitFor stopped it before its directory was known.
		_ = n.Stop()
		return nil, err
	}
	return n, nil
}
