package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNoControllerManager: the binary directory has no kube-controller-manager.
var ErrNoControllerManager = errors.New("no kube-controller-manager")

// controllers are the controllers started: the ones a pod's way from its
// owner to the API server passes through, and the ones a namespace's life
// needs (the PVC protection controller removes the finalizer the API server
// puts on every claim, without which no namespace holding one goes), and the
// node lifecycle controller, which lifts the not-ready taint a kubelet
// registers its node with once the node is Ready (StartHollowNode). No cloud
// runs here.
const controllers = "serviceaccount-token-controller,serviceaccount-controller,root-ca-certificate-publisher-controller," +
	"namespace-controller,garbage-collector-controller,persistentvolumeclaim-protection-controller," +
	"replicaset-controller,deployment-controller,statefulset-controller,job-controller,cronjob-controller," +
	"node-lifecycle-controller"

// StartControllerManager starts kube-controller-manager against the control
// plane as the cluster admin, with --use-service-account-credentials, so
// that every controller writes as its own service account
// (system:serviceaccount:kube-system:<controller>), the users gatehouse
// sees in a real cluster: the controllers that create pods (ReplicaSet,
// Deployment, StatefulSet, Job, CronJob), and the service account, token,
// root CA publisher, namespace, garbage collector and PVC protection
// controllers.
func (c *Cluster) StartControllerManager(ctx context.Context) (*Component, error) {
	binary := filepath.Join(c.opts.BinaryDir, "kube-controller-manager")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%w in %s (tools/controlplane/build.sh builds it)", ErrNoControllerManager, c.opts.BinaryDir)
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
	m, err := startComponent(ctx, binary, dir, nil,
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
	if err != nil {
		return nil, err
	}
	// It is up when it has made its own service accounts' credentials work:
	// the ServiceAccount controller creates "default" in a new namespace.
	probe := "kcm-probe-" + fmt.Sprint(time.Now().UnixNano()%100000)
	if err := c.ensureNamespace(ctx, probe); err != nil {
		_ = m.Stop()
		return nil, err
	}
	if err := m.waitFor(2*time.Minute, "made no ServiceAccount", func() (bool, error) {
		return c.serviceAccountExists(ctx, probe, "default")
	}); err != nil {
		return nil, err
	}
	return m, nil
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
