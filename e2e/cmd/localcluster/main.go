// Command localcluster is `make run`: it starts a local control plane
// (kube-apiserver and etcd built from module sources) with cert-manager and
// gatehouse registered, applies deploy/examples/ through the real API server,
// prints what was admitted, patched and denied in the API server's own words,
// and keeps everything running for kubectl until Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
)

func main() {
	repo := flag.String("repo", ".", "gatehouse repository root")
	examples := flag.String("examples", "", "manifests to apply (default <repo>/deploy/examples)")
	once := flag.Bool("once", false, "stop after applying the examples instead of waiting for Ctrl-C")
	flag.Parse()
	if *examples == "" {
		*examples = filepath.Join(*repo, "deploy", "examples")
	}
	if err := run(*repo, *examples, *once); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(repo, examples string, once bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "gatehouse-local-")
	if err != nil {
		return err
	}
	start := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{
		Repo:    repo,
		WorkDir: work,
		Progress: func(format string, args ...any) {
			fmt.Printf("[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
		},
	})
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, work)
	}
	defer func() {
		fmt.Println("stopping gatehouse, cert-manager and the control plane")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping:", err)
		}
	}()

	fmt.Printf("\napplying %s through the API server:\n\n", examples)
	if err := applyExamples(ctx, c, examples); err != nil {
		return err
	}
	stopControllers, err := controllersView(ctx, c)
	if err != nil {
		return err
	}
	defer stopControllers()

	fmt.Printf(`
gatehouse is serving at %s, registered with the API server, with the
certificate cert-manager issued (mirrored into %s).
  kubeconfig:   %s
  gatehouse log: %s

Try your own manifests:
  export KUBECONFIG=%s
  kubectl create namespace demo
  kubectl apply -f your-manifests.yaml
(kube-controller-manager runs, so workloads get pods; no scheduler or kubelet runs here:
pods are admitted and stored, not started)
`, c.Gatehouse.URL, c.CertDir, c.Kubeconfig, c.Gatehouse.Log, c.Kubeconfig)
	if once {
		return nil
	}
	fmt.Println("\nCtrl-C stops everything.")
	select {
	case <-ctx.Done():
	case err := <-c.Errors:
		return err
	}
	return nil
}

// demoNamespace is where the controllers' view runs: opted in to the pod
// security defaults.
const demoNamespace = "controllers-demo"

// controllersView starts kube-controller-manager and shows what a cluster's
// controllers meet: a Deployment created in an opted-in namespace, and the
// pod its ReplicaSet creates, admitted and patched by gatehouse on the
// controller's request. It returns a function that stops the controller
// manager.
func controllersView(ctx context.Context, c *localcluster.Cluster) (func(), error) {
	fmt.Println("\nstarting kube-controller-manager (every controller as its own service account)")
	m, err := c.StartControllerManager(ctx)
	if errors.Is(err, localcluster.ErrNoControllerManager) {
		fmt.Printf("  skipped: %v\n", err)
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	stop := func() { _ = m.Stop() }
	fmt.Printf("  log: %s\n", m.Log)
	fmt.Println("  (its garbage collector deletes the examples whose ownerReferences name an owner that does not exist)")
	cl := c.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace, Labels: map[string]string{"gatehouse.dev/security-defaults": "enabled"}}}
	if err := cl.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		stop()
		return nil, err
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}},
			},
		},
	}
	fmt.Printf("\nthe controllers' view (namespace %s, opted in to the pod security defaults):\n\n", demoNamespace)
	if err := cl.Create(ctx, d); err != nil && !apierrors.IsAlreadyExists(err) {
		stop()
		return nil, err
	}
	fmt.Printf("admitted  Deployment %s/%s\n", demoNamespace, d.Name)
	pods, err := waitForPods(ctx, cl, int(*d.Spec.Replicas))
	if err != nil {
		stop()
		return nil, err
	}
	for _, pod := range pods {
		ref := metav1.GetControllerOf(&pod)
		rs := &appsv1.ReplicaSet{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: ref.Name}, rs); err != nil {
			stop()
			return nil, err
		}
		// What the ReplicaSet controller sent: its template.
		sent := &unstructured.Unstructured{Object: map[string]any{}}
		template, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rs.Spec.Template)
		if err != nil {
			stop()
			return nil, err
		}
		sent.Object["metadata"], sent.Object["spec"] = template["metadata"], template["spec"]
		stored, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
		if err != nil {
			stop()
			return nil, err
		}
		fmt.Printf("admitted  Pod %s/%s, created by ReplicaSet %s (system:serviceaccount:kube-system:replicaset-controller)\n",
			demoNamespace, pod.Name, rs.Name)
		if changed := gatehouseChanges(sent, &unstructured.Unstructured{Object: stored}); len(changed) > 0 {
			fmt.Printf("          patched by gatehouse: %s\n", strings.Join(changed, ", "))
		}
	}
	return stop, nil
}

// waitForPods waits for n pods in the demo namespace and returns them by name.
func waitForPods(ctx context.Context, cl client.Client, n int) ([]corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		pods := &corev1.PodList{}
		if err := cl.List(ctx, pods, client.InNamespace(demoNamespace)); err != nil {
			return nil, err
		}
		if len(pods.Items) >= n {
			sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
			return pods.Items, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the Deployment's ReplicaSet created %d of %d pods in a minute", len(pods.Items), n)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// applyExamples creates every example object in file order, as kubectl
// apply -f would, and reports each result.
func applyExamples(ctx context.Context, c *localcluster.Cluster, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	warnings := &warningPrinter{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = warnings
	cl, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		return err
	}
	for _, f := range files {
		objs, err := localcluster.ReadManifests(f)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if ns := obj.GetNamespace(); ns != "" {
				if err := ensureNamespace(ctx, cl, ns); err != nil {
					return err
				}
			}
			sent := obj.DeepCopy()
			warnings.list = nil
			err := cl.Create(ctx, obj)
			name := obj.GetKind() + " " + qualified(obj)
			switch {
			case err == nil:
				fmt.Printf("admitted  %s\n", name)
				if changed := gatehouseChanges(sent, obj); len(changed) > 0 {
					fmt.Printf("          patched by gatehouse: %s\n", strings.Join(changed, ", "))
				}
			case apierrors.IsAlreadyExists(err):
				fmt.Printf("exists    %s\n", name)
			default:
				fmt.Printf("DENIED    %s\n          %s\n", name, indent(describe(err)))
			}
			for _, w := range warnings.list {
				fmt.Printf("          Warning: %s\n", w)
			}
		}
	}
	return nil
}

func ensureNamespace(ctx context.Context, cl client.Client, name string) error {
	err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The ServiceAccount admission plugin needs the default account, which a
	// controller-manager would create.
	err = cl.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func qualified(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// describe renders a denial as kubectl does for an Invalid status: the
// object, then one line per cause.
func describe(err error) string {
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return err.Error()
	}
	d := status.Status().Details
	lines := []string{fmt.Sprintf("The %s %q is invalid:", d.Kind, d.Name)}
	for _, c := range d.Causes {
		lines = append(lines, fmt.Sprintf("* %s: %s", c.Field, c.Message))
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n          ") }

// gatehouseChanges names the security contexts the admission chain
// filled in.
func gatehouseChanges(sent, stored *unstructured.Unstructured) []string {
	var out []string
	paths := [][]string{{"spec", "securityContext"}}
	containers, _, _ := unstructured.NestedSlice(stored.Object, "spec", "containers")
	for i := range containers {
		paths = append(paths, []string{"spec", "containers", fmt.Sprint(i), "securityContext"})
	}
	for _, p := range paths {
		if !reflect.DeepEqual(emptyIsNil(localcluster.Lookup(sent.Object, p)), emptyIsNil(localcluster.Lookup(stored.Object, p))) {
			out = append(out, strings.Join(p, "."))
		}
	}
	// harness-labels: scope labels added.
	sentLabels := sent.GetLabels()
	var added []string
	for k := range stored.GetLabels() {
		if _, ok := sentLabels[k]; !ok && k != "kubernetes.io/metadata.name" {
			added = append(added, "metadata.labels["+k+"]")
		}
	}
	sort.Strings(added)
	out = append(out, added...)
	// harness-proxy: the proxy's volume in place of the plugin's token.
	volumes, _, _ := unstructured.NestedSlice(stored.Object, "spec", "volumes")
	for _, v := range volumes {
		if m, ok := v.(map[string]any); ok && m["name"] == "proxy-api-access" {
			out = append(out, "spec.volumes[proxy-api-access] (harness proxy: token, CA, KUBERNETES_SERVICE_*)")
		}
	}
	return out
}

// emptyIsNil treats an empty object as absent: the API server defaults a
// missing securityContext to {}, which is not gatehouse's doing.
func emptyIsNil(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return v
}

type warningPrinter struct{ list []string }

func (w *warningPrinter) HandleWarningHeader(_ int, _ string, text string) {
	w.list = append(w.list, text)
}
