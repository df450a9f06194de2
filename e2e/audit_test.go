package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks"
	"github.com/gatehouse-dev/gatehouse/webhooks/audit"
	"github.com/gatehouse-dev/gatehouse/webhooks/clusterstate"
	"github.com/gatehouse-dev/gatehouse/webhooks/controllers"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The audit tests need objects that were stored before gatehouse was ever
// registered, as on a cluster gatehouse is installed into: a second local
// control plane (the same kube-apiserver and etcd binaries, the suite's
// CRDs and the report CRDs of deploy/policyreport-crds and
// deploy/openreports-crds) on which no
// webhook configuration ever exists. The suite's own cluster admits through
// gatehouse, so it could not hold the violating objects.
var (
	bareOnce sync.Once
	bare     *bareCluster
	bareErr  error
)

type bareCluster struct {
	env *envtest.Environment
	// admin is a system:masters client; readerKubeconfig is a user that may
	// only get, list and watch (the verbs the audit promises to use).
	admin            client.Client
	adminConfig      *rest.Config
	adminKubeconfig  string
	readerKubeconfig string
	dir              string
}

// auditExamples are stored on the bare cluster: the denied and allowed
// examples of deploy/examples for SCOPE and SA, and three DependencyGroups,
// two of which list the same CRD.
var auditExamples = []string{
	"hdfscluster-denied.yaml", "hdfscluster-allowed.yaml", "pod-denied.yaml", "pod-allowed.yaml",
	"pvc-denied.yaml", "pvc-allowed.yaml", "statefulset-denied.yaml", "dependencygroups.yaml",
}

func requireBareCluster(t *testing.T) *bareCluster {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		// The kind path (E2E_KUBECONFIG) has gatehouse registered from the
		// start; e2e/kind/README.md lists this test among what skips there.
		t.Skip("the audit tests start a second local control plane: set KUBEBUILDER_ASSETS (make e2e does)")
	}
	bareOnce.Do(func() { bare, bareErr = startBareCluster() })
	if bareErr != nil {
		t.Fatalf("second local control plane: %v", bareErr)
	}
	return bare
}

func startBareCluster() (*bareCluster, error) {
	dir, err := os.MkdirTemp("", "gatehouse-e2e-audit-")
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS"),
		CRDDirectoryPaths: []string{filepath.Join(repo, "deploy", "crds"), filepath.Join(repo, "deploy", "helmetica-crds"),
			filepath.Join(repo, "deploy", "policyreport-crds"), filepath.Join(repo, "deploy", "openreports-crds"), filepath.Join(repo, "e2e", "testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	if _, err := env.Start(); err != nil {
		return nil, err
	}
	b := &bareCluster{env: env, dir: dir}
	admin, err := env.AddUser(envtest.User{Name: "audit-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return b, err
	}
	b.adminConfig = admin.Config()
	adminKC, err := admin.KubeConfig()
	if err != nil {
		return b, err
	}
	b.adminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(b.adminKubeconfig, adminKC, 0o600); err != nil {
		return b, err
	}
	if b.admin, err = client.New(b.adminConfig, client.Options{Scheme: localcluster.Scheme()}); err != nil {
		return b, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "audit-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "audit-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "audit-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "auditor"}}}
	for _, obj := range []client.Object{reader, binding, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: localcluster.Namespace}}} {
		if err := b.admin.Create(ctx, obj); err != nil {
			return b, err
		}
	}
	for _, name := range auditExamples {
		objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", name))
		if err != nil {
			return b, err
		}
		for _, obj := range objs {
			if err := b.admin.Create(ctx, obj); err != nil {
				return b, fmt.Errorf("storing %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	user, err := env.AddUser(envtest.User{Name: "auditor"}, nil)
	if err != nil {
		return b, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return b, err
	}
	b.readerKubeconfig = filepath.Join(dir, "reader.kubeconfig")
	return b, os.WriteFile(b.readerKubeconfig, kc, 0o600)
}

// stopBareCluster stops the second control plane, if a test started it.
func stopBareCluster() {
	if bare != nil && bare.env != nil {
		if err := bare.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the audit tests' control plane:", err)
		}
		os.RemoveAll(bare.dir)
	}
}

// auditFinding is one denying finding of `gatehouse audit -o json`.
type auditFinding struct{ object, webhook, code, field string }

func (f auditFinding) String() string {
	return fmt.Sprintf("%s %s %s at %s", f.object, f.webhook, f.code, f.field)
}

// wantAuditFindings are what the stored examples violate: those `gatehouse
// check` finds in the same manifests (the README shows them), plus the two
// DependencyGroups that list one CRD, which each clash with the other. The
// third group, alone with its CRD, must not clash with itself.
var wantAuditFindings = []auditFinding{
	{"DependencyGroup mariadb", "dependency-group", "DependencyGroupCRDClaimed", "spec.crds[1].name"},
	{"DependencyGroup mariadb-fork", "dependency-group", "DependencyGroupCRDClaimed", "spec.crds[0].name"},
	{"HdfsCluster team-a/prod-widened", "secret-scope", "ScopeNameHasDelimiter", "spec.clusterConfig.authentication.tls.scope.services[0]"},
	{"HdfsCluster team-a/prod-widened", "service-account", "ServiceAccountOverridden", "spec.dataNode.roleGroups.default.podOverrides.spec.serviceAccountName"},
	{"PersistentVolumeClaim team-a/gateway-tls-broken", "secret-scope", "ScopeValueMissing", "metadata.annotations[secrets.kubedoop.dev/scope]"},
	{"PersistentVolumeClaim team-a/gateway-tls-broken", "secret-scope", "SecretJitterFactorInvalid", "metadata.annotations[secrets.kubedoop.dev/autoTlsCertJitterFactor]"},
	{"Pod team-a/web-broken-scope", "secret-scope", "ScopeEntryEmpty", "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]"},
	{"Pod team-a/web-broken-scope", "secret-scope", "ScopeValueMissing", "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations[secrets.kubedoop.dev/scope]"},
	{"StatefulSet team-a/prod-datanode-default", "secret-scope", "ScopeValueHasDelimiter", "spec.volumeClaimTemplates[0].metadata.annotations[secrets.kubedoop.dev/scope]"},
	{"StatefulSet team-a/prod-datanode-default", "service-account", "ServiceAccountMismatch", "spec.template.spec.serviceAccountName"},
}

// TestAuditStoredObjects runs `gatehouse audit` (the command, in process) as
// a user who may only get, list and watch, against objects stored before
// any webhook existed, and checks the exact codes and fields it finds, that
// no clean object is denied, and the exit status; an unreachable cluster
// exits 2.
func TestAuditStoredObjects(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var stdout, stderr bytes.Buffer
	code := app.Run(ctx, []string{"audit", "--kubeconfig", b.readerKubeconfig, "-o", "json", "--page-size", "2"}, nil, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("audit -o json exit status %d, want 1 (objects Enforce would deny); stderr:\n%s", code, stderr.String())
	}
	var out struct {
		Results []app.CheckResult `json:"results"`
		Objects []app.ObjectOut   `json:"objects"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("audit -o json: %v\n%s", err, stdout.String())
	}
	var got []auditFinding
	denied := map[string]bool{}
	for _, r := range out.Results {
		name := r.Object.Kind + " " + r.Object.Name
		if r.Object.Namespace != "" {
			name = r.Object.Kind + " " + r.Object.Namespace + "/" + r.Object.Name
		}
		if !r.Allowed {
			denied[name] = true
		}
		for _, f := range r.Findings {
			got = append(got, auditFinding{name, r.Webhook, f.Code, f.Field})
		}
		if r.Error != "" {
			t.Errorf("%s: %s could not decide: %s", name, r.Webhook, r.Error)
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
	if !slices.Equal(got, wantAuditFindings) {
		t.Errorf("audit found\n  %v\nwant\n  %v", got, wantAuditFindings)
	}
	for _, clean := range []string{"HdfsCluster team-a/prod", "Pod team-a/web", "PersistentVolumeClaim team-a/gateway-tls", "DependencyGroup strimzi"} {
		if denied[clean] {
			t.Errorf("audit denies %s, which violates nothing", clean)
		}
	}
	for _, o := range out.Objects {
		if o.Source == "" {
			t.Errorf("object %v has no source", o.Object)
		}
	}

	stdout.Reset()
	stderr.Reset()
	if code := app.Run(ctx, []string{"audit", "--kubeconfig", b.readerKubeconfig}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("audit exit status %d, want 1; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), ", 6 denied,") || !strings.Contains(stdout.String(), "DENIED    HdfsCluster team-a/prod-widened (hdfsclusters.hdfs.kubedoop.dev)") {
		t.Errorf("audit text output lacks the denials or the summary:\n%s", stdout.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("audit wrote to stderr, which is no terminal here:\n%s", stderr.String())
	}
	// docs/audit.md shows this audit's output.
	for _, c := range docSamples(t, "gatehouse audit") {
		if c.command != "gatehouse audit" {
			t.Errorf("%s: the sample is this audit without flags", c)
		}
		if c.exit >= 0 && c.exit != 1 {
			t.Errorf("%s: exit status %d in the document, 1 from the audit", c, c.exit)
		}
		if err := quotes(c.quoted, stdout.String()); err != nil {
			t.Errorf("%s: %v\n--- the audit prints:\n%s", c, err, stdout.String())
		}
	}

	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(unreachable, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := app.Run(ctx, []string{"audit", "--kubeconfig", unreachable}, nil, &stdout, &stderr); code != 2 {
		t.Errorf("audit of an unreachable cluster: exit status %d, want 2; stderr:\n%s", code, stderr.String())
	}
}

var (
	policyReportsGVR        = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	clusterPolicyReportsGVR = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
	openReportsGVR          = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	clusterOpenReportsGVR   = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

// TestAuditWritesPolicyReports runs passes of the background audit
// (controllers.Audit, as serve wires it, over the caches serve reads) on the
// objects stored before gatehouse: one PolicyReport per violating namespaced
// object and one ClusterPolicyReport per violating cluster-scoped one,
// named by the object's UID and owned by it, with the exact results; a
// second pass over the unchanged cluster writes nothing; an object that is
// fixed gets its report updated in place, one that is deleted loses it.
func TestAuditWritesPolicyReports(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, dyn := newBackgroundAudit(ctx, t, b.adminConfig)
	deleteReports(ctx, t, dyn)

	stats, err := a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Written != 6 || stats.Deleted != 0 || stats.Reports != 6 {
		t.Errorf("first pass: %+v, want 6 reports written (4 namespaced objects, 2 DependencyGroups)", stats)
	}
	reports := func() map[string]unstructured.Unstructured {
		t.Helper()
		out := map[string]unstructured.Unstructured{}
		for _, gvr := range []schema.GroupVersionResource{policyReportsGVR, clusterPolicyReportsGVR} {
			list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list.Items {
				kind, _, _ := unstructured.NestedString(r.Object, "scope", "kind")
				name, _, _ := unstructured.NestedString(r.Object, "scope", "name")
				key := kind + " " + name
				if _, dup := out[key]; dup {
					t.Errorf("two reports for %s", key)
				}
				out[key] = r
			}
		}
		return out
	}
	first := reports()
	want := map[string][]string{}
	for _, f := range wantAuditFindings {
		kind, name, _ := strings.Cut(f.object, " ")
		if _, n, ok := strings.Cut(name, "/"); ok {
			name = n
		}
		want[kind+" "+name] = append(want[kind+" "+name], "fail "+f.webhook+" "+f.code+" "+f.field)
	}
	for key, lines := range want {
		sort.Strings(lines)
		r, ok := first[key]
		if !ok {
			t.Errorf("no report for %s", key)
			continue
		}
		uid, _, _ := unstructured.NestedString(r.Object, "scope", "uid")
		if r.GetName() != uid || len(r.GetOwnerReferences()) != 1 || string(r.GetOwnerReferences()[0].UID) != uid {
			t.Errorf("report %s/%s of %s: want it named by and owned by its object %s", r.GetNamespace(), r.GetName(), key, uid)
		}
		if strings.HasPrefix(key, "DependencyGroup ") != (r.GetKind() == "ClusterPolicyReport") {
			t.Errorf("report of %s is a %s", key, r.GetKind())
		}
		if got := reportLines(t, r, "fail", "warn", "error"); !slices.Equal(got, lines) {
			t.Errorf("report of %s:\n  %v\nwant\n  %v", key, got, lines)
		}
		if fails, _, _ := unstructured.NestedInt64(r.Object, "summary", "fail"); int(fails) != len(lines) {
			t.Errorf("report of %s: summary.fail %d, want %d", key, fails, len(lines))
		}
	}
	if len(first) != len(want) {
		t.Errorf("%d reports, want %d (clean objects get none)", len(first), len(want))
	}

	stats, err = a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Written != 0 || stats.Deleted != 0 || stats.Reports != 6 {
		t.Errorf("second pass over the unchanged cluster: %+v, want nothing written or deleted", stats)
	}
	for key, r := range reports() {
		before := first[key]
		if r.GetResourceVersion() != before.GetResourceVersion() {
			t.Errorf("report of %s rewritten by a pass that found the same", key)
		}
	}

	// Fix one finding of the PVC, delete the pod; put both back afterwards
	// for the other tests of the stored examples.
	t.Cleanup(func() { restoreExamples(t, b, "pvc-denied.yaml", "pod-denied.yaml") })
	pvc := &corev1.PersistentVolumeClaim{}
	if err := b.admin.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "gateway-tls-broken"}, pvc); err != nil {
		t.Fatal(err)
	}
	pvc.Annotations["secrets.kubedoop.dev/scope"] = "service=gateway"
	if err := b.admin.Update(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	if err := b.admin.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-broken-scope"}}); err != nil {
		t.Fatal(err)
	}
	stats, err = a.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Written != 1 || stats.Deleted != 1 || stats.Reports != 5 {
		t.Errorf("pass after a fix and a deletion: %+v, want the PVC's report updated and the pod's deleted", stats)
	}
	third := reports()
	if _, ok := third["Pod web-broken-scope"]; ok {
		t.Error("the deleted pod still has a report")
	}
	r := third["PersistentVolumeClaim gateway-tls-broken"]
	before := first["PersistentVolumeClaim gateway-tls-broken"]
	if r.GetName() != before.GetName() {
		t.Errorf("the PVC's report was replaced (%s), not updated", r.GetName())
	}
	if got := reportLines(t, r, "fail", "warn", "error"); !slices.Equal(got, []string{"fail secret-scope SecretJitterFactorInvalid metadata.annotations[secrets.kubedoop.dev/autoTlsCertJitterFactor]"}) {
		t.Errorf("the fixed PVC's report: %v", got)
	}
}

// reportLines renders a report's results of the given outcomes as
// "<result> <policy> <rule> <field>", sorted, checking that each names the
// report's object and its mode.
func reportLines(t *testing.T, r unstructured.Unstructured, outcomes ...string) []string {
	t.Helper()
	results, _, _ := unstructured.NestedSlice(r.Object, "results")
	scopeUID, _, _ := unstructured.NestedString(r.Object, "scope", "uid")
	var out []string
	for _, item := range results {
		res, _ := item.(map[string]any)
		outcome, _ := res["result"].(string)
		if !slices.Contains(outcomes, outcome) {
			continue
		}
		field, _, _ := unstructured.NestedString(res, "properties", "field")
		mode, _, _ := unstructured.NestedString(res, "properties", "mode")
		if mode != "Enforce" || res["source"] != "gatehouse" {
			t.Errorf("result %v: want source gatehouse and mode Enforce", res)
		}
		resources, _, _ := unstructured.NestedSlice(res, "resources")
		if len(resources) != 1 || resources[0].(map[string]any)["uid"] != scopeUID {
			t.Errorf("result %v does not name the report's object", res)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", outcome, res["policy"], res["rule"], field))
	}
	sort.Strings(out)
	return out
}

// TestServeAuditsInTheBackground: `gatehouse serve --role=audit` with
// cluster access and the default configuration (audit.interval 1h) becomes
// leader of the audit's Lease and runs a first audit pass at once, which
// writes the report of a stored violating object under the audit's field
// manager.
func TestServeAuditsInTheBackground(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn := dynamic.NewForConfigOrDie(b.adminConfig)
	deleteReports(ctx, t, dyn)
	var widened unstructured.Unstructured
	widened.SetAPIVersion("hdfs.kubedoop.dev/v1alpha1")
	widened.SetKind("HdfsCluster")
	if err := b.admin.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "prod-widened"}, &widened); err != nil {
		t.Fatal(err)
	}
	probe, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- app.Run(serveCtx, []string{"serve", "--role", "audit", "--kubeconfig", b.adminKubeconfig,
			"--probe-address", probe, "--metrics-address", "0", "--leader-election-namespace", localcluster.Namespace}, nil, io.Discard, &stderr)
	}()
	defer func() {
		stop()
		<-done
	}()
	var report *unstructured.Unstructured
	for report == nil {
		r, err := dyn.Resource(policyReportsGVR).Namespace("team-a").Get(ctx, string(widened.GetUID()), metav1.GetOptions{})
		switch {
		case err == nil:
			report = r
		case ctx.Err() != nil:
			t.Fatalf("no report of HdfsCluster team-a/prod-widened from serve's background audit; serve's log:\n%s", stderr.String())
		case len(done) > 0:
			t.Fatalf("serve exited; its log:\n%s", stderr.String())
		default:
			time.Sleep(200 * time.Millisecond)
		}
	}
	managers := []string{}
	for _, m := range report.GetManagedFields() {
		managers = append(managers, m.Manager)
	}
	if !slices.Equal(managers, []string{controllers.AuditFieldManager}) {
		t.Errorf("report written by %v, want %s alone", managers, controllers.AuditFieldManager)
	}
	if got := reportLines(t, *report, "fail"); !slices.Equal(got, []string{
		"fail secret-scope ScopeNameHasDelimiter spec.clusterConfig.authentication.tls.scope.services[0]",
		"fail service-account ServiceAccountOverridden spec.dataNode.roleGroups.default.podOverrides.spec.serviceAccountName",
	}) {
		t.Errorf("serve's report of prod-widened: %v", got)
	}
}

// newBackgroundAudit builds the background audit as serve does: the webhooks
// of the default configuration over informer caches of the cluster, read
// with rc, which also writes the reports; it waits for the caches.
func newBackgroundAudit(ctx context.Context, t *testing.T, rc *rest.Config) (*controllers.Audit, dynamic.Interface) {
	t.Helper()
	cfg := configv1alpha1.Default()
	opts := route.OptionsFromConfig(cfg)
	state, err := clusterstate.NewCachedState(rc)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = state.Start(ctx) }()
	opts.ClusterState, opts.Namespaces = state, state
	dyn := dynamic.NewForConfigOrDie(rc)
	pager, err := audit.NewPager(rc)
	if err != nil {
		t.Fatal(err)
	}
	scanner := audit.NewScanner(pager, discovery.NewDiscoveryClientForConfigOrDie(rc), webhooks.Build(opts, cfg.Enabled), opts)
	return &controllers.Audit{Scanner: scanner, Pager: pager, Dynamic: dyn, Interval: time.Hour, Synced: func() bool { return state.Ready(nil) == nil }}, dyn
}

// TestAuditWithTheDeployedRBAC runs a background pass with exactly the
// rights deploy/default and deploy/overrides-rbac grant the audit's
// ServiceAccount (gatehouse-audit): it lists and writes all it needs, and the
// product custom resources, which need a rule per group (docs/audit.md,
// "RBAC"), are the only resource it may not list; their reports are kept,
// not deleted as stale.
func TestAuditWithTheDeployedRBAC(t *testing.T) {
	b := requireBareCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const user = "deployed-gatehouse"
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	const auditSA = "gatehouse-audit"
	boundToAudit := func(subjects []any) bool {
		for _, s := range subjects {
			if m, _ := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == auditSA {
				return true
			}
		}
		return false
	}
	var objs []client.Object
	rendered := renderDeploy(t, deployDefaultDir)
	for _, binding := range rendered.clusterRoleBindings {
		if !slices.ContainsFunc(binding.Subjects, func(s rbacv1.Subject) bool { return s.Kind == rbacv1.ServiceAccountKind && s.Name == auditSA }) {
			continue
		}
		role := rendered.clusterRole(binding.RoleRef.Name).DeepCopy()
		role.ObjectMeta = metav1.ObjectMeta{Name: "deployed-" + role.Name}
		objs = append(objs, role, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}})
	}
	overrides, err := localcluster.Render(deployOverridesRBACDir)
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.Default().Overrides.Namespace}})
	roles := map[string]*unstructured.Unstructured{}
	for _, obj := range overrides {
		if obj.GetKind() == "Role" {
			roles[obj.GetNamespace()+"/"+obj.GetName()] = obj
		}
	}
	for _, obj := range overrides {
		if list, _, _ := unstructured.NestedSlice(obj.Object, "subjects"); obj.GetKind() != "RoleBinding" || !boundToAudit(list) {
			continue
		}
		refName, _, _ := unstructured.NestedString(obj.Object, "roleRef", "name")
		role := roles[obj.GetNamespace()+"/"+refName].DeepCopy()
		role.SetName("deployed-" + role.GetName())
		objs = append(objs, role, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: role.GetNamespace(), Name: role.GetName()},
			Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.GetName()}})
	}
	for _, obj := range objs {
		if err := b.admin.Create(ctx, obj); err != nil {
			t.Fatalf("%T %s: %v", obj, obj.GetName(), err)
		}
	}
	if len(objs) < 5 {
		t.Fatalf("deploy/default and deploy/overrides-rbac render %d RBAC objects for %s", len(objs), auditSA)
	}
	deployed, err := b.env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever ran before, a pass with every right writes the reports the
	// restricted pass must keep.
	full, admin := newBackgroundAudit(ctx, t, b.adminConfig)
	if _, err := full.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	a, _ := newBackgroundAudit(ctx, t, deployed.Config())
	before, err := admin.Resource(policyReportsGVR).Namespace("team-a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := a.Pass(ctx)
	if err != nil {
		t.Fatalf("a pass with the deployed RBAC: %v", err)
	}
	var forbidden []string
	for _, tg := range stats.Forbidden {
		forbidden = append(forbidden, tg.GVR.GroupResource().String())
	}
	sort.Strings(forbidden)
	// The product resources of e2e/testdata/crds.
	products := []string{"exampleclusters.example.kubedoop.dev", "hdfsclusters.hdfs.kubedoop.dev", "kafkaclusters.kafka.kubedoop.dev",
		"trinoclusters.trino.kubedoop.dev", "zookeeperclusters.zookeeper.kubedoop.dev"}
	if !slices.Equal(forbidden, products) {
		t.Errorf("not allowed to list %v, want the product resources alone (%v)", forbidden, products)
	}
	after, err := admin.Resource(policyReportsGVR).Namespace("team-a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := func(l *unstructured.UnstructuredList) []string {
		var out []string
		for _, r := range l.Items {
			kind, _, _ := unstructured.NestedString(r.Object, "scope", "kind")
			out = append(out, kind)
		}
		sort.Strings(out)
		return out
	}
	if !slices.Contains(kinds(after), "HdfsCluster") || !slices.Equal(kinds(before), kinds(after)) {
		t.Errorf("reports before the pass %v, after %v: want the same, the HdfsCluster's kept", kinds(before), kinds(after))
	}
}

// deleteReports deletes every report of both report APIs, so that a test
// starts from none whatever ran before it.
func deleteReports(ctx context.Context, t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	for _, gvr := range []schema.GroupVersionResource{policyReportsGVR, clusterPolicyReportsGVR, openReportsGVR, clusterOpenReportsGVR} {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Items {
			if err := dyn.Resource(gvr).Namespace(r.GetNamespace()).Delete(ctx, r.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// restoreExamples puts the named example files back as stored: an object
// that is gone is created again, one that exists gets the example's
// annotations back (a PVC cannot be deleted and recreated here: its
// protection finalizer waits for a controller no test runs).
func restoreExamples(t *testing.T, b *bareCluster, files ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range files {
		objs, err := localcluster.ReadManifests(filepath.Join(repo, "deploy", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range objs {
			have := want.DeepCopy()
			err := b.admin.Get(ctx, client.ObjectKeyFromObject(want), have)
			switch {
			case apierrors.IsNotFound(err):
				err = b.admin.Create(ctx, want.DeepCopy())
			case err == nil:
				have.SetAnnotations(want.GetAnnotations())
				err = b.admin.Update(ctx, have)
			}
			if err != nil {
				t.Fatalf("restoring %s %s: %v", want.GetKind(), want.GetName(), err)
			}
		}
	}
}
