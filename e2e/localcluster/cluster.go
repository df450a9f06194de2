// Package localcluster starts the real thing on one machine, without Docker:
// kube-apiserver and etcd built from pinned module sources (tools/controlplane),
// started by controller-runtime's envtest with the ServiceAccount admission
// plugin on; cert-manager's controllers and cainjector in-process; the
// Issuer chain and webhook configurations rendered from deploy/e2e; and
// `gatehouse serve` with the certificate cert-manager issued. The e2e suite
// and `make run` both start it.
package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	helmeticav1 "github.com/gatehouse-dev/gatehouse/api/helmetica/v1"
)

// Options configure Start.
type Options struct {
	// Repo is the gatehouse repository root (deploy/, e2e/testdata/).
	Repo string
	// WorkDir receives the kubeconfig, the serving certificate and logs.
	WorkDir string
	// BinaryDir holds kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS).
	BinaryDir string
	// Progress, if set, is told what is happening.
	Progress func(format string, args ...any)
	// GatehouseBinary, when set, runs that executable as a child process
	// instead of gatehouse in this process (the soak measures it alone).
	GatehouseBinary string
}

// Cluster is a running local control plane with gatehouse registered.
type Cluster struct {
	Config     *rest.Config
	Client     client.Client
	Kubeconfig string
	// GatehouseKubeconfig is the user gatehouse serves as: its
	// ServiceAccount's name in deploy/ (ServiceAccountUser), which the
	// admission policy protecting the managed namespace labels lets
	// through, with the rights of the suite's admin.
	GatehouseKubeconfig string
	// CertDir is where the serving certificate Secret is mirrored, as a
	// kubelet mirrors a Secret volume; gatehouse serves from it.
	CertDir string
	// Gatehouse is the running `gatehouse serve`.
	Gatehouse *Gatehouse
	// Errors receives failures of the in-process components.
	Errors <-chan error

	env    *envtest.Environment
	runCtx context.Context
	cancel context.CancelFunc
	opts   Options
}

// The deploy/ names the suite relies on.
const (
	Namespace         = "gatehouse-system"
	ServingSecret     = "gatehouse-serving-cert"
	ServingCert       = "gatehouse-serving"
	WebhookConfigName = "gatehouse"
	// ServiceAccountUser is the user of deploy/'s gatehouse pods.
	ServiceAccountUser = "system:serviceaccount:" + Namespace + ":gatehouse"
)

// Start brings everything up; Stop tears it down.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	if o.BinaryDir == "" {
		o.BinaryDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if o.BinaryDir == "" {
		return nil, errors.New("no kube-apiserver/etcd: set KUBEBUILDER_ASSETS (make e2e builds them with tools/controlplane/build.sh)")
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	// cert-manager and client-go log through klog; keep them in a file so the
	// suite's and make run's output stays readable.
	componentsLog, err := os.Create(filepath.Join(o.WorkDir, "components.log"))
	if err != nil {
		return nil, err
	}
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := flags.Set(name, value); err != nil {
			return nil, err
		}
	}
	klog.SetOutput(componentsLog)
	cmCRDs, err := CertManagerCRDs(o.Repo)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 16)
	c = &Cluster{runCtx: runCtx, cancel: cancel, opts: o, Errors: errs}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()

	o.Progress("starting etcd and kube-apiserver from %s", o.BinaryDir)
	c.env = &envtest.Environment{
		BinaryAssetsDirectory: o.BinaryDir,
		CRDDirectoryPaths:     []string{cmCRDs, filepath.Join(o.Repo, "deploy", "crds"), filepath.Join(o.Repo, "deploy", "helmetica-crds"), filepath.Join(o.Repo, "e2e", "testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	// envtest disables the ServiceAccount admission plugin; real clusters
	// run it, and the pods gatehouse sees carry what it adds.
	c.env.ControlPlane.GetAPIServer().Configure().
		Append("enable-admission-plugins", "ServiceAccount").
		Disable("disable-admission-plugins")
	start := time.Now()
	cfg, err := c.env.Start()
	if err != nil {
		return nil, fmt.Errorf("control plane: %w", err)
	}
	o.Progress("control plane up in %.1fs at %s", time.Since(start).Seconds(), cfg.Host)

	admin, err := c.env.AddUser(envtest.User{Name: "gatehouse-e2e-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	c.Config = admin.Config()
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(o.WorkDir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: Scheme()}); err != nil {
		return nil, err
	}
	// gatehouse runs as the user its pods are in a cluster (a client
	// certificate naming it), so that what the API server lets only
	// gatehouse do is tested as gatehouse.
	self, err := c.env.AddUser(envtest.User{Name: ServiceAccountUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	selfKubeconfig, err := self.KubeConfig()
	if err != nil {
		return nil, err
	}
	c.GatehouseKubeconfig = filepath.Join(o.WorkDir, "gatehouse.kubeconfig")
	if err := os.WriteFile(c.GatehouseKubeconfig, selfKubeconfig, 0o600); err != nil {
		return nil, err
	}

	o.Progress("starting cert-manager controllers and cainjector in-process")
	if err := c.ensureNamespace(ctx, "cert-manager"); err != nil {
		return nil, err
	}
	if err := startCertManager(runCtx, c.Kubeconfig, errs); err != nil {
		return nil, err
	}
	if err := startCAInjector(runCtx, c.Config, errs); err != nil {
		return nil, err
	}

	objs, err := Render(filepath.Join(o.Repo, "deploy", "e2e"))
	if err != nil {
		return nil, err
	}
	var webhookConfigs []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Namespace", "Issuer", "Certificate", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			// (Admission policies are decided by the API server itself:
			// they need no gatehouse to be in effect.)
			if err := c.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			webhookConfigs = append(webhookConfigs, obj)
		}
	}
	if len(webhookConfigs) == 0 {
		return nil, errors.New("deploy/e2e renders no webhook configuration")
	}

	o.Progress("waiting for cert-manager to issue %s/%s", Namespace, ServingSecret)
	start = time.Now()
	if _, err := c.ServingSecret(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	o.Progress("serving certificate issued by cert-manager in %.1fs", time.Since(start).Seconds())
	c.CertDir = filepath.Join(o.WorkDir, "tls")
	if err := c.mirrorSecret(ctx, runCtx, errs); err != nil {
		return nil, err
	}

	o.Progress("starting gatehouse serve")
	gopts := GatehouseOptions{CertDir: c.CertDir, WorkDir: o.WorkDir, Kubeconfig: c.GatehouseKubeconfig, Binary: o.GatehouseBinary, ReconcileDependencyGroups: true}
	// Metrics on a free loopback port: the monitoring test and the soak read them.
	if gopts.MetricsAddr, err = FreeAddr(); err != nil {
		return nil, err
	}
	if c.Gatehouse, err = LaunchGatehouse(runCtx, gopts); err != nil {
		return nil, err
	}
	if err := c.Gatehouse.WaitReady(time.Minute); err != nil {
		return nil, err
	}

	o.Progress("registering the webhook configurations (clientConfig -> %s)", c.Gatehouse.URL)
	for _, wc := range webhookConfigs {
		if err := pointAt(wc, c.Gatehouse.URL); err != nil {
			return nil, err
		}
		if err := c.Client.Create(ctx, wc); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating %s: %w", wc.GetKind(), err)
		}
	}
	if err := c.waitForCABundles(ctx, webhookConfigs); err != nil {
		return nil, err
	}
	o.Progress("cainjector filled every caBundle; gatehouse is registered")
	return c, nil
}

// Stop stops gatehouse, cert-manager and the control plane.
func (c *Cluster) Stop() error {
	c.cancel()
	if c.Gatehouse != nil {
		c.Gatehouse.Wait(30 * time.Second)
	}
	if c.env != nil {
		return c.env.Stop()
	}
	return nil
}

// StopGatehouse stops the registered gatehouse, as when its pods are gone:
// the webhook configurations stay and the API server's calls fail.
func (c *Cluster) StopGatehouse() error {
	code, err := c.Gatehouse.Stop(30 * time.Second)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("gatehouse serve exited with %d on stop; see %s", code, c.Gatehouse.Log)
	}
	return nil
}

// RestartGatehouse starts gatehouse again on the port the webhook
// configurations name, after StopGatehouse, and returns without waiting for
// readiness: the caller watches /readyz (Gatehouse.WaitReady). binary, when
// set, runs that executable as a new process, as a restarted pod does; an
// in-process restart cannot run the DependencyGroup reconciler again
// (controller-runtime allows a controller name once per process), so it
// runs without it.
func (c *Cluster) RestartGatehouse(binary string) error {
	opts := c.Gatehouse.opts
	if binary != "" {
		opts.Binary = binary
	}
	if opts.Binary == "" {
		opts.ReconcileDependencyGroups = false
	}
	g, err := LaunchGatehouse(c.runCtx, opts)
	if err != nil {
		return err
	}
	c.Gatehouse = g
	return nil
}

// UserKubeconfig writes a kubeconfig for a new user of the API server in the
// given groups (none: only what RBAC grants the user by name) and returns
// its path.
func (c *Cluster) UserKubeconfig(name string, groups []string) (string, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.opts.WorkDir, name+".kubeconfig")
	return path, os.WriteFile(path, kubeconfig, 0o600)
}

// WaitForCABundles waits until cainjector has filled the caBundle of every
// webhook of gatehouse's live configurations (after they were registered
// again without one, as a break-glass restore does).
func (c *Cluster) WaitForCABundles(ctx context.Context) error {
	var configs []*unstructured.Unstructured
	for _, kind := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
		wc := &unstructured.Unstructured{}
		wc.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		wc.SetName(WebhookConfigName)
		configs = append(configs, wc)
	}
	return c.waitForCABundles(ctx, configs)
}

// WorkDir is where logs, certificates and kubeconfigs are written.
func (c *Cluster) WorkDir() string { return c.opts.WorkDir }

// Scheme knows the Kubernetes and cert-manager types.
func Scheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	utilruntime.Must(helmeticav1.AddToScheme(scheme))
	return scheme
}

func (c *Cluster) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// ServingSecret waits for the serving certificate Secret to hold a
// certificate and returns it.
func (c *Cluster) ServingSecret(ctx context.Context, timeout time.Duration) (*corev1.Secret, error) {
	var secret corev1.Secret
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Client.Get(ctx, types.NamespacedName{Namespace: Namespace, Name: ServingSecret}, &secret)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return len(secret.Data[corev1.TLSCertKey]) > 0 && len(secret.Data[corev1.TLSPrivateKeyKey]) > 0 && len(secret.Data["ca.crt"]) > 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate Secret %s/%s: %w", Namespace, ServingSecret, err)
	}
	return &secret, nil
}

// mirrorSecret writes the serving Secret into CertDir now and whenever it
// changes, as the kubelet updates a mounted Secret volume.
func (c *Cluster) mirrorSecret(ctx, runCtx context.Context, errs chan<- error) error {
	if err := os.MkdirAll(c.CertDir, 0o700); err != nil {
		return err
	}
	sync := func(ctx context.Context) error {
		secret, err := c.ServingSecret(ctx, 10*time.Second)
		if err != nil {
			return err
		}
		for _, name := range []string{"ca.crt", corev1.TLSPrivateKeyKey, corev1.TLSCertKey} {
			path := filepath.Join(c.CertDir, name)
			if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, secret.Data[name]) {
				continue
			}
			if err := writeAtomic(path, secret.Data[name]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := sync(ctx); err != nil {
		return err
	}
	go func() {
		ticker := time.NewTicker(500 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-ticker.C:
				if err := sync(runCtx); err != nil && runCtx.Err() == nil {
					errs <- fmt.Errorf("mirroring the serving Secret: %w", err)
				}
			}
		}
	}()
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pointAt rewrites every webhook's clientConfig to call base+path directly:
// without kube-proxy the API server cannot reach a Service.
func pointAt(wc *unstructured.Unstructured, base string) error {
	hooks, _, err := unstructured.NestedSlice(wc.Object, "webhooks")
	if err != nil {
		return err
	}
	for i, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: webhook %d is not an object", wc.GetName(), i)
		}
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		if path == "" {
			return fmt.Errorf("%s: webhook %d has no service path", wc.GetName(), i)
		}
		hook["clientConfig"] = map[string]any{"url": base + path}
		hooks[i] = hook
	}
	return unstructured.SetNestedSlice(wc.Object, hooks, "webhooks")
}

// waitForCABundles waits until cainjector has written the CA of the serving
// Certificate into every webhook of every configuration.
func (c *Cluster) waitForCABundles(ctx context.Context, configs []*unstructured.Unstructured) error {
	secret, err := c.ServingSecret(ctx, time.Minute)
	if err != nil {
		return err
	}
	ca := secret.Data["ca.crt"]
	for _, wc := range configs {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(wc.GroupVersionKind())
			if err := c.Client.Get(ctx, types.NamespacedName{Name: wc.GetName()}, live); err != nil {
				return false, err
			}
			hooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
			for _, h := range hooks {
				bundle, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
				if bundle == "" {
					return false, nil
				}
				decoded, err := decodeBase64(bundle)
				if err != nil || !bytes.Equal(decoded, ca) {
					return false, nil
				}
			}
			return len(hooks) > 0, nil
		})
		if err != nil {
			return fmt.Errorf("cainjector did not fill the caBundle of %s %s: %w", wc.GetKind(), wc.GetName(), err)
		}
	}
	return nil
}

// moduleDir finds a dependency of the e2e module in the module cache.
func moduleDir(repo, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-json", module)
	cmd.Dir = filepath.Join(repo, "e2e")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go list -m %s: no module directory (run go mod download in e2e/)", module)
	}
	return m.Dir, nil
}
