// Command auditscale measures `gatehouse audit` at scale (docs/performance.md,
// "Audit"): it starts a local control plane on which no webhook is
// registered, stores N objects that gatehouse intercepts (Pods and
// HdfsClusters from deploy/examples, one in ten of them violating, in equal
// parts; with -pod-bytes, admissible Pods of that size), then runs the
// gatehouse binary's audit against it and reports its wall time, CPU time
// (rusage) and peak RSS (VmHWM, read while it runs). With -examples it stores
// those files of deploy/examples instead and prints the text audit (the
// README's). With -keep it leaves the control plane running and prints its
// kubeconfig.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/e2e/perf"
)

func main() {
	repo := flag.String("repo", ".", "gatehouse repository root")
	binary := flag.String("gatehouse", "", "the gatehouse binary to measure")
	n := flag.Int("objects", 10000, "objects to store")
	keep := flag.Bool("keep", false, "keep the control plane running until Ctrl-C")
	examples := flag.String("examples", "", "comma-separated files of deploy/examples to store instead, then print the text audit of them")
	podBytes := flag.Int("pod-bytes", 0, "store only admissible Pods (pod-allowed.yaml), each padded to about this many bytes by a container's environment value (e.g. -objects 64 -pod-bytes 1048576)")
	flag.Parse()
	if err := run(*repo, *binary, *n, *keep, *examples, *podBytes); err != nil {
		fmt.Fprintln(os.Stderr, "auditscale:", err)
		os.Exit(1)
	}
}

func run(repo, binary string, n int, keep bool, examples string, podBytes int) error {
	env := &envtest.Environment{
		BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS"),
		CRDDirectoryPaths: []string{filepath.Join(repo, "deploy", "crds"), filepath.Join(repo, "deploy", "helmetica-crds"),
			filepath.Join(repo, "deploy", "policyreport-crds"), filepath.Join(repo, "e2e", "testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	if _, err := env.Start(); err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "gatehouse-auditscale-")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	cfg := admin.Config()
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		return err
	}
	if examples != "" {
		return auditExamples(ctx, c, repo, binary, kubeconfig, strings.Split(examples, ","))
	}
	var templates []*unstructured.Unstructured
	for _, name := range []string{"pod-allowed.yaml", "hdfscluster-allowed.yaml", "pod-denied.yaml", "hdfscluster-denied.yaml"} {
		objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", name))
		if err != nil {
			return err
		}
		templates = append(templates, objs...)
	}
	if podBytes > 0 {
		pod := templates[0]
		containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
		containers[0].(map[string]any)["env"] = []any{map[string]any{"name": "PAYLOAD", "value": strings.Repeat("x", max(0, podBytes-4<<10))}}
		if err := unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers"); err != nil {
			return err
		}
		templates = []*unstructured.Unstructured{pod, pod, pod, pod} // all clean
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				// Templates 0 and 1 are clean, 2 and 3 violate: one object
				// in ten violates.
				t := templates[i%2]
				if i%10 == 0 {
					t = templates[2+i%2]
				}
				obj := t.DeepCopy()
				obj.SetName(fmt.Sprintf("%s-%05d", t.GetName(), i))
				if err := c.Create(ctx, obj); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("stored %d objects in %.1fs\n", n, time.Since(start).Seconds())
	if binary != "" {
		var out bytes.Buffer
		cmd := exec.Command(binary, "audit", "--kubeconfig", kubeconfig, "-o", "json", "--qps", "100", "--burst", "200")
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		start = time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		// The peak is the child's VmHWM, read while it runs: the rusage of a
		// child started by a Go parent folds in the parent's own peak
		// (e2e/perf.PeakRSSOf says why).
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var peak int64
		var err error
	wait:
		for {
			if status, rerr := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); rerr == nil {
				if _, hwm, perr := perf.ParseStatusMemory(string(status)); perr == nil {
					peak = max(peak, hwm)
				}
			}
			select {
			case err = <-done:
				break wait
			case <-time.After(2 * time.Millisecond):
			}
		}
		wall := time.Since(start)
		if exit, ok := err.(*exec.ExitError); err != nil && (!ok || exit.ExitCode() != 1) {
			return fmt.Errorf("gatehouse audit: %w", err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		fmt.Printf("gatehouse audit of %d objects: %.1fs wall, %.1fs CPU, peak RSS %.1f MiB, exit %d, %d bytes of JSON\n", n, wall.Seconds(),
			(time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds(), perf.MiB(peak), cmd.ProcessState.ExitCode(), out.Len())
	}
	if keep {
		fmt.Printf("export KUBECONFIG=%s\n", kubeconfig)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
	}
	return nil
}

// auditExamples stores the named example files and prints what
// `gatehouse audit` says of them (the README quotes it).
func auditExamples(ctx context.Context, c client.Client, repo, binary, kubeconfig string, files []string) error {
	for _, name := range files {
		objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", name))
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := c.Create(ctx, obj); err != nil {
				return err
			}
		}
	}
	fmt.Printf("$ gatehouse audit --kubeconfig %s\n", kubeconfig)
	cmd := exec.Command(binary, "audit", "--kubeconfig", kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	fmt.Printf("$ echo $?\n%d\n", cmd.ProcessState.ExitCode())
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
		return nil
	}
	return err
}
