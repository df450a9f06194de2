package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

// The suite runs against one of two clusters, with the same test code:
//   - the local control plane (KUBEBUILDER_ASSETS names the directory of the
//     kube-apiserver and etcd binaries tools/controlplane/build.sh built),
//     started once by the first test that needs it;
//   - an existing cluster where gatehouse is installed from deploy/default
//     (E2E_KUBECONFIG, the kind path of `make e2e-kind`).
var (
	clusterOnce sync.Once
	clusterErr  error
	live        *env
)

type env struct {
	config *rest.Config
	client client.Client
	// local is nil on an existing cluster.
	local *localcluster.Cluster
}

const repo = ".."

func requireCluster(t testing.TB) *env {
	t.Helper()
	clusterOnce.Do(func() { live, clusterErr = startEnv() })
	if clusterErr != nil {
		t.Fatalf("no cluster for the e2e suite: %v", clusterErr)
	}
	return live
}

func startEnv() (*env, error) {
	if kc := os.Getenv("E2E_KUBECONFIG"); kc != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			return nil, err
		}
		c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
		return &env{config: cfg, client: c}, err
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("set KUBEBUILDER_ASSETS (make e2e does) or E2E_KUBECONFIG (make e2e-kind does)")
	}
	work, err := os.MkdirTemp("", "gatehouse-e2e-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		Repo:    repo,
		WorkDir: work,
		Progress: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "e2e [%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w (logs in %s)", err, work)
	}
	return &env{config: c.Config, client: c.Client, local: c}, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopBareCluster()
	if live != nil && live.local != nil {
		if err := live.local.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the local cluster:", err)
		}
		select {
		case err := <-live.local.Errors:
			fmt.Fprintln(os.Stderr, "an in-process component failed during the run:", err)
			code = 1
		default:
		}
		if code == 0 {
			os.RemoveAll(filepath.Dir(live.local.Kubeconfig))
		}
	}
	os.Exit(code)
}
