package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// rolloutNamespace is where the walk of docs/rollout.md stores its pods.
const rolloutNamespace = "rollout-walk"

// rolloutLeaseNamespace holds the Lease of the walk's gatehouse.
const rolloutLeaseNamespace = "rollout-walk-lease"

// scopePod is a pod whose secret-operator scope has an empty entry, which
// secret-scope denies in Enforce (ScopeEntryEmpty).
func scopePod(name string) *corev1.Pod {
	class := "secrets.kubedoop.dev"
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rolloutNamespace, Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"secrets.kubedoop.dev/class": "tls", "secrets.kubedoop.dev/scope": "pod,,node"}},
					Spec: corev1.PersistentVolumeClaimSpec{
						StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
					},
				},
			}}}},
		},
	}
}

// rolloutStep is one gatehouse of the walk, serving in the modes its flags
// set, with the webhook configurations rendered for the same modes.
type rolloutStep struct {
	g     *localcluster.Gatehouse
	flags []string
}

// TestRolloutWalk walks docs/rollout.md on the local control plane: an object
// stored before gatehouse was registered; gatehouse installed in Audit,
// where new violations are admitted silently and counted under mode Audit;
// one contract switched to Warn, where they are admitted with kubectl's
// warning; then to Enforce, where they are denied with the code and field.
// Each step is a new `gatehouse serve` with the step's flags, and the
// configurations `gatehouse manifests` renders with the same flags (a
// contract in Warn or Audit fails open).
func TestRolloutWalk(t *testing.T) {
	e := requireCluster(t)
	if e.local == nil {
		t.Skip("the walk starts its own gatehouse with other modes: local control plane only")
	}
	ctx := context.Background()
	caBundle := liveCABundle(t, e)
	_, restore := saveWebhooks(t, e)

	// Before: no webhook of gatehouse is registered.
	for _, kind := range configurationKinds {
		setWebhooks(t, e, kind, nil)
	}
	ensureNamespace(t, e, rolloutNamespace, nil)
	ensureNamespace(t, e, rolloutLeaseNamespace, nil)
	t.Cleanup(func() {
		_ = e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rolloutNamespace}})
	})
	stored := scopePod("stored-before")
	if err := e.client.Create(ctx, stored); err != nil {
		t.Fatalf("storing a pod before gatehouse is registered: %v", err)
	}
	// The reports' kinds, as deploy/policyreport-crds installs them.
	if _, err := envtest.InstallCRDs(e.config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(repo, "deploy", "policyreport-crds")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	reports := dynamic.NewForConfigOrDie(e.config).Resource(policyReportsGVR).Namespace(rolloutNamespace)

	bin, err := localcluster.BuildGatehouse(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var current, auditor *localcluster.Gatehouse
	t.Cleanup(func() {
		for _, g := range []*localcluster.Gatehouse{current, auditor} {
			if g != nil {
				g.Stop(30 * time.Second)
			}
		}
	})
	t.Cleanup(restore) // runs first: the suite's gatehouse is called again before the walk's stops
	// register points the webhook configurations at g, rendered for flags.
	register := func(g *localcluster.Gatehouse, flags ...string) {
		t.Helper()
		cfg := configv1alpha1.Default()
		applyModeFlags(t, &cfg, flags)
		for kind, hooks := range renderedWebhooksFor(t, route.ManifestOptions{URL: g.URL, Options: route.OptionsFromConfig(cfg)}, caBundle) {
			setWebhooks(t, e, kind, hooks)
		}
	}
	// install serves a gatehouse with flags, registers it, and stops the
	// previous one once the API server calls the new one. The new one is
	// ready only once the entries are rendered for its modes
	// (/readyz/mode-drift), as a rolled pod behind entries applied with it;
	// then it replaces the audit (the audit role, as deploy/'s
	// gatehouse-audit Deployment) with one of the same flags.
	install := func(flags ...string) *localcluster.Gatehouse {
		t.Helper()
		metrics, err := localcluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		g, err := localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
			CertDir: e.local.CertDir, WorkDir: e.local.WorkDir(), Kubeconfig: e.local.Kubeconfig, Binary: bin,
			MetricsAddr: metrics, LogName: "gatehouse-rollout.log", Args: flags,
		})
		if err != nil {
			t.Fatal(err)
		}
		register(g, flags...)
		if err := g.WaitReady(time.Minute); err != nil {
			t.Fatalf("gatehouse %v: %v (log %s)", flags, err, g.Log)
		}
		if current != nil {
			waitUntilCalled(t, e, g)
			current.Stop(30 * time.Second)
		}
		current = g
		waitUntilCalled(t, e, g)
		if auditor != nil {
			_, _ = auditor.Stop(30 * time.Second) // releases the audit's Lease
		}
		// Its own Lease, beside the suite's: its background audit runs a
		// pass as it starts, and writes the reports. (The Lease's namespace
		// is taken for gatehouse's own, which is never audited.)
		if auditor, err = localcluster.LaunchGatehouse(ctx, localcluster.GatehouseOptions{
			Role: "audit", WorkDir: e.local.WorkDir(), Kubeconfig: e.local.Kubeconfig, Binary: bin,
			LeaderElectionNamespace: rolloutLeaseNamespace, LogName: "gatehouse-rollout-audit.log", Args: flags,
		}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	c, warnings := clientWithWarnings(t, e)

	// 1. Audit: every contract admits and records.
	g := install("--default-mode", "Audit")
	before := scopeDenials(t, g, "Audit")
	n := len(warnings.all())
	if err := c.Create(ctx, scopePod("audit-new")); err != nil {
		t.Fatalf("Audit must admit: %v", err)
	}
	if got := warnings.all()[n:]; len(got) > 0 {
		t.Errorf("Audit must be silent, warned %q", got)
	}
	if got := scopeDenials(t, g, "Audit") - before; got < 1 {
		t.Errorf("Audit did not count the violation under mode Audit (%v)", got)
	}
	// The object stored before: in the background audit's report, and in
	// `gatehouse audit`, as what Enforce would deny.
	waitForReport(t, reports, string(stored.UID), "warn secret-scope ScopeEntryEmpty Audit")
	out, code := runAudit(t, bin, e.local.Kubeconfig, "--default-mode", "Audit")
	// The verdict column is as wide as its widest word (UNDECIDED).
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if code != 0 || !strings.Contains(words(out), "warned Pod rollout-walk/stored-before (pods)") {
		t.Errorf("gatehouse audit in Audit: exit %d, want 0 and stored-before warned:\n%s", code, out)
	}
	out, code = runAudit(t, bin, e.local.Kubeconfig, "--default-mode", "Audit", "--mode", "secret-scope=Enforce")
	if code != 1 || !strings.Contains(words(out), "DENIED Pod rollout-walk/stored-before (pods)") || !strings.Contains(out, "ScopeEntryEmpty") {
		t.Errorf("gatehouse audit with secret-scope in Enforce: exit %d, want 1 and stored-before denied:\n%s", code, out)
	}

	// 2. Warn: secret-scope admits with a warning per finding.
	warnFlags := []string{"--default-mode", "Audit", "--mode", "secret-scope=Warn"}
	g = install(warnFlags...)
	n = len(warnings.all())
	if err := c.Create(ctx, scopePod("warn-new")); err != nil {
		t.Fatalf("Warn must admit: %v", err)
	}
	got := strings.Join(warnings.all()[n:], "\n")
	if !strings.Contains(got, "gatehouse secret-scope (Warn, would deny): ScopeEntryEmpty at spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]") {
		t.Errorf("Warn: warnings %q", got)
	}
	// docs/rollout.md shows what kubectl prints for this create: each
	// warning after "Warning: ", then the object created.
	var printed strings.Builder
	for _, w := range warnings.all()[n:] {
		printed.WriteString("Warning: " + w + "\n")
	}
	printed.WriteString("pod/warn-new created\n")
	for _, c := range docSamples(t, "kubectl apply -f pod.yaml") {
		if err := quotes(c.quoted, printed.String()); err != nil {
			t.Errorf("%s: %v\n--- kubectl prints:\n%s", c, err, printed.String())
		}
	}

	// Mode drift: the entries are rendered for Enforce, the Warn server is
	// not rolled (a changed configuration that never reached the pods). The
	// server decides by the stricter reading: the fail-closed entry's pod is
	// denied, saying so; its readiness and gatehouse_mode_drift name
	// secret-scope; back behind its own entries it is ready again.
	enforceFlags := []string{"--default-mode", "Audit", "--mode", "secret-scope=Enforce"}
	register(g, enforceFlags...)
	var driftErr error
	n = len(warnings.all())
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		driftErr = c.Create(ctx, scopePod("drift-new"), client.DryRunAll)
		return driftErr != nil, nil
	})
	if err != nil || !apierrors.IsInvalid(driftErr) || !strings.Contains(driftErr.Error(), "ScopeEntryEmpty") {
		t.Errorf("a Warn server behind the Enforce entry must deny as Enforce, got %v", driftErr)
	}
	if got := strings.Join(warnings.all()[n:], "\n"); !strings.Contains(got, "gatehouse secret-scope: mode drift: entry validating-fail.gatehouse.dev is rendered for Enforce, this server's configuration says Warn") {
		t.Errorf("mode drift: warnings %q", got)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return g.Check("mode-drift") != 200, nil
	})
	if err != nil || g.Ready() {
		t.Errorf("a server behind entries rendered for other modes must not be ready (log %s)", g.Log)
	}
	raw, err := g.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	fams := parseMetrics(t, raw)
	if v := sampleValue(fams, "gatehouse_mode_drift", map[string]string{"webhook": "secret-scope"}); v != 1 {
		t.Errorf("gatehouse_mode_drift{webhook=secret-scope} = %v, want 1", v)
	}
	if v := sampleValue(fams, "gatehouse_mode_drift_reviews_total", map[string]string{"webhook": "secret-scope", "entry": "validating-fail.gatehouse.dev", "mode": "Warn"}); v < 1 {
		t.Errorf("gatehouse_mode_drift_reviews_total{webhook=secret-scope,entry=validating-fail.gatehouse.dev,mode=Warn} = %v, want at least 1", v)
	}
	register(g, warnFlags...)
	if err := g.WaitReady(time.Minute); err != nil {
		t.Errorf("behind its own entries again: %v", err)
	}

	// 3. Enforce: secret-scope denies, naming code and field.
	install(enforceFlags...)
	err = c.Create(ctx, scopePod("enforce-new"))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "ScopeEntryEmpty") || !strings.Contains(err.Error(), "spec.volumes[0].ephemeral") {
		t.Fatalf("Enforce must deny with the code and field, got %v", err)
	}
	// The report of the object stored before now fails, in place.
	waitForReport(t, reports, string(stored.UID), "fail secret-scope ScopeEntryEmpty Enforce")
	// Exempt requests are never sent: with gatehouse down, the fail-closed
	// entry refuses the others, and the exempt ones go through.
	exemptNS := rolloutNamespace + "-exempt"
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: gatehouse.dev/v1alpha1
kind: ServerConfig
exemptions:
  namespaces: [kube-system, kube-node-lease]
  namespaceLabels: [{key: rollout.example/exempt, operator: Exists}]
  usernames: [rollout-breakglass]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ensureNamespace(t, e, exemptNS, map[string]string{"rollout.example/exempt": "true"})
	t.Cleanup(func() { _ = e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exemptNS}}) })
	g = install("--config", config, "--default-mode", "Audit", "--mode", "secret-scope=Enforce")
	kubeconfig, err := e.local.UserKubeconfig("rollout-breakglass", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	breakglass := clientFor(t, kubeconfig)
	if _, err := g.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	current = nil
	if err := c.Create(ctx, scopePod("refused-while-down")); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("with gatehouse down a judged request must be refused by the fail-closed entry, got %v", err)
	}
	inExempt := scopePod("exempt-namespace")
	inExempt.Namespace = exemptNS
	if err := c.Create(ctx, inExempt); err != nil {
		t.Errorf("a pod in a namespace exempt by label must never wait on gatehouse: %v", err)
	}
	if err := breakglass.Create(ctx, scopePod("exempt-user")); err != nil {
		t.Errorf("an exempt user's request must never wait on gatehouse: %v", err)
	}

	// What was stored before and admitted while watching stays.
	for _, name := range []string{"stored-before", "audit-new", "warn-new"} {
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: rolloutNamespace, Name: name}, &corev1.Pod{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// applyModeFlags sets the modes the walk's flags give, as serve does.
func applyModeFlags(t *testing.T, cfg *configv1alpha1.ServerConfig, flags []string) {
	t.Helper()
	for i := 0; i+1 < len(flags); i += 2 {
		switch flags[i] {
		case "--default-mode":
			cfg.DefaultMode = configv1alpha1.Mode(flags[i+1])
		case "--config":
			loaded, err := configv1alpha1.Load(flags[i+1])
			if err != nil {
				t.Fatal(err)
			}
			*cfg = loaded
		case "--mode":
			name, mode, _ := strings.Cut(flags[i+1], "=")
			if cfg.Webhooks == nil {
				cfg.Webhooks = map[string]configv1alpha1.Webhook{}
			}
			cfg.Webhooks[name] = configv1alpha1.Webhook{Mode: configv1alpha1.Mode(mode)}
		default:
			t.Fatalf("flag %s", flags[i])
		}
	}
	if errs := route.ValidateConfig(*cfg); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
}

// scopeDenials is g's count of secret-scope's ScopeEntryEmpty denials in mode.
func scopeDenials(t *testing.T, g *localcluster.Gatehouse, mode string) float64 {
	t.Helper()
	raw, err := g.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return sampleValue(parseMetrics(t, raw), "gatehouse_webhook_decisions_total",
		map[string]string{"webhook": "secret-scope", "decision": "denied", "mode": mode, "code": "ScopeEntryEmpty"})
}

// waitUntilCalled waits until the API server calls g: a dry-run create of a
// violating pod is counted by g's secret-scope in some mode.
func waitUntilCalled(t *testing.T, e *env, g *localcluster.Gatehouse) {
	t.Helper()
	count := func() float64 {
		var sum float64
		for _, m := range []string{"Enforce", "Warn", "Audit"} {
			sum += scopeDenials(t, g, m)
		}
		return sum
	}
	before := count()
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		_ = e.client.Create(context.Background(), scopePod(fmt.Sprintf("probe-%d", i)), client.DryRunAll)
		if count() > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not call %s within 30s", g.URL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runAudit runs `gatehouse audit` against the cluster and returns its
// output and exit status.
func runAudit(t *testing.T, bin, kubeconfig string, flags ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"audit", "--kubeconfig", kubeconfig}, flags...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("gatehouse audit: %v", err)
	return "", 0
}

// waitForReport waits until the PolicyReport named name (its object's UID)
// holds the result want, "<result> <policy> <rule> <mode>".
func waitForReport(t *testing.T, reports dynamic.ResourceInterface, name, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var got []string
	for time.Now().Before(deadline) {
		got = got[:0]
		if r, err := reports.Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			results, _, _ := unstructured.NestedSlice(r.Object, "results")
			for _, item := range results {
				res, _ := item.(map[string]any)
				mode, _, _ := unstructured.NestedString(res, "properties", "mode")
				got = append(got, fmt.Sprintf("%s %s %s %s", res["result"], res["policy"], res["rule"], mode))
			}
			if slices.Contains(got, want) {
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("PolicyReport %s/%s: results %q, want %q among them", rolloutNamespace, name, got, want)
}

// clientFor is a client of the API server as kubeconfig's user.
func clientFor(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: localcluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
