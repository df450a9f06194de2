package e2e

// Static checks of the kustomize installation in deploy/: render deploy/default
// and deploy/e2e exactly as `kubectl apply -k` would (krusty is kubectl's
// kustomize), decode every object strictly into its typed API struct, and
// check the properties an operator relies on. No cluster is needed.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/policies/dependencygroup"
	"github.com/gatehouse-dev/gatehouse/policies/harness"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

const (
	deployDefaultDir = "../deploy/default"
	deployE2EDir     = "../deploy/e2e"

	deployImage = "ghcr.io/gatehouse-dev/gatehouse"

	// deployShutdownDelay is the default of `gatehouse serve --shutdown-delay`.
	deployShutdownDelay = 5 * time.Second

	deployInjectCAFrom = "cert-manager.io/inject-ca-from"
	deployNameLabel    = "kubernetes.io/metadata.name"
)

// expectedClusterRoleRules is the published least privilege of the server
// (deploy/default/README.md, section RBAC), rule by rule: read access to the
// cluster-scoped objects dependency-group, crd-source and harness check
// against, the roles harness reviews when a harness binds them, and what
// the controllers write. A contract that caches more adds exactly its rules
// here, in deploy/default/rbac.yaml and in the README (and to
// expectedAuditClusterRoleRules, since the audit reads the same caches).
// Nothing the audit needs: the replicas that serve admission never audit.
var expectedClusterRoleRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, ResourceNames: []string{"gatehouse"}, Verbs: []string{"get", "patch"}},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"helmetica.io"}, Resources: []string{"customresourcedefinitionsources", "dependencygroups", "operatorharnesses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"helmetica.io"}, Resources: []string{"dependencygroups/status"}, Verbs: []string{"update"}},
	{APIGroups: []string{"vshn.net"}, Resources: []string{"operatorharnesses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "roles"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"gatehouse.dev"}, Resources: []string{"clusterexceptions", "exceptions"}, Verbs: []string{"list", "watch"}},
}

// expectedAuditClusterRoleRules is the published least privilege of the
// background audit (deploy/default/README.md, "The audit's RBAC"): the read
// rules of the server's caches, which the audit's webhooks read too, the
// stored objects of the built-in resources the webhooks intercept, and the
// reports it writes.
var expectedAuditClusterRoleRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"helmetica.io"}, Resources: []string{"customresourcedefinitionsources", "dependencygroups", "operatorharnesses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"vshn.net"}, Resources: []string{"operatorharnesses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "roles"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"gatehouse.dev"}, Resources: []string{"clusterexceptions", "exceptions"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "pods", "podtemplates", "replicationcontrollers"}, Verbs: []string{"list"}},
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "replicasets", "statefulsets"}, Verbs: []string{"list"}},
	{APIGroups: []string{"batch"}, Resources: []string{"cronjobs", "jobs"}, Verbs: []string{"list"}},
	{APIGroups: []string{"wgpolicyk8s.io"}, Resources: []string{"clusterpolicyreports", "policyreports"}, Verbs: []string{"list", "create", "patch", "delete"}},
	{APIGroups: []string{"openreports.io"}, Resources: []string{"clusterreports", "reports"}, Verbs: []string{"list", "create", "patch", "delete"}},
}

// TestDeployShipsTheCRDs: deploy/default installs the CRDs of gatehouse's own
// kinds (vshn.net OperatorHarness, the gatehouse.dev exceptions) and none of
// helmetica's (a cluster running
// helmetica has its own, which a CRD of the same name cannot coexist with);
// the optional component deploy/helmetica-crds has exactly helmetica's.
func TestDeployShipsTheCRDs(t *testing.T) {
	kinds := func(crds []apiextensionsv1.CustomResourceDefinition) map[string]bool {
		have := map[string]bool{}
		for _, crd := range crds {
			for _, v := range crd.Spec.Versions {
				have[crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind] = true
			}
		}
		return have
	}
	key := func(gvk schema.GroupVersionKind) string { return gvk.GroupVersion().String() + " " + gvk.Kind }
	defaults := kinds(renderDeploy(t, deployDefaultDir).crds)
	own := []schema.GroupVersionKind{harness.GVK,
		exceptionsv1alpha1.SchemeGroupVersion.WithKind(exceptionsv1alpha1.KindException), exceptionsv1alpha1.SchemeGroupVersion.WithKind(exceptionsv1alpha1.KindClusterException)}
	for _, gvk := range own {
		if !defaults[key(gvk)] {
			t.Errorf("deploy/default installs no CRD for %s", gvk)
		}
	}
	if len(defaults) != len(own) {
		t.Errorf("deploy/default installs CRDs for %v, want only %v", defaults, own)
	}
	component := kinds(renderHelmeticaCRDs(t).crds)
	for _, gvk := range []schema.GroupVersionKind{dependencygroup.GroupGVK, dependencygroup.SourceGVK, harness.HelmeticaGVK} {
		if !component[key(gvk)] {
			t.Errorf("deploy/helmetica-crds has no CRD for %s", gvk)
		}
	}
	if len(component) != 3 {
		t.Errorf("deploy/helmetica-crds has CRDs for %v, want helmetica's three", component)
	}
}

// deployAlwaysExcluded are the namespaces no webhook may ever be sent, besides
// gatehouse's own: the control plane and node heartbeats must start whatever
// gatehouse's state.
var deployAlwaysExcluded = []string{"kube-system", "kube-node-lease"}

func TestDeployDefault(t *testing.T) {
	checkDeployInstall(t, renderDeploy(t, deployDefaultDir))
}

// TestDeployE2E checks the overlay for the local control plane: a complete
// installation whose serving certificate also names localhost and 127.0.0.1,
// and that differs from deploy/default in nothing else.
func TestDeployE2E(t *testing.T) {
	def, e2e := renderDeploy(t, deployDefaultDir), renderDeploy(t, deployE2EDir)
	serving := checkDeployInstall(t, e2e)
	if serving == nil {
		return
	}
	if !slices.Contains(serving.Spec.DNSNames, "localhost") {
		t.Errorf("%s: Certificate %s: dnsNames %v lack localhost, which the API server dials on a local control plane", e2e.dir, serving.Name, serving.Spec.DNSNames)
	}
	if !slices.Contains(serving.Spec.IPAddresses, "127.0.0.1") {
		t.Errorf("%s: Certificate %s: ipAddresses %v lack 127.0.0.1, which the API server dials on a local control plane", e2e.dir, serving.Name, serving.Spec.IPAddresses)
	}

	// Take the two additions out again: what remains must be deploy/default.
	serving.Spec.DNSNames = slices.DeleteFunc(slices.Clone(serving.Spec.DNSNames), func(s string) bool { return s == "localhost" })
	serving.Spec.IPAddresses = slices.DeleteFunc(slices.Clone(serving.Spec.IPAddresses), func(s string) bool { return s == "127.0.0.1" })
	if len(serving.Spec.IPAddresses) == 0 {
		serving.Spec.IPAddresses = nil
	}
	if got, want := e2e.keys(), def.keys(); !slices.Equal(got, want) {
		t.Fatalf("%s renders other objects than %s:\n%s", e2e.dir, def.dir, cmp.Diff(want, got))
	}
	for i, o := range e2e.objects {
		if diff := cmp.Diff(def.objects[i].obj, o.obj); diff != "" {
			t.Errorf("%s: %s differs from %s beyond the serving certificate's localhost and 127.0.0.1 (-default +e2e):\n%s", e2e.dir, o.key, def.dir, diff)
		}
	}
}

// TestDeployImagePinnable renders an overlay that pins the image the way
// deploy/default/README.md says, proving the kustomize images: entry matches
// the Deployment's image.
func TestDeployImagePinnable(t *testing.T) {
	base, err := filepath.Abs(deployDefaultDir)
	if err != nil {
		t.Fatal(err)
	}
	overlay := t.TempDir()
	rel, err := filepath.Rel(overlay, base) // kustomize refuses absolute bases
	if err != nil {
		t.Fatal(err)
	}
	kustomization := fmt.Sprintf("resources:\n- %s\nimages:\n- name: %s\n  newTag: v9.9.9\n", filepath.ToSlash(rel), deployImage)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	r := renderDeploy(t, overlay)
	for _, d := range r.deployments {
		for _, c := range deployContainers(&d.Spec.Template.Spec) {
			if c.Image != deployImage+":v9.9.9" {
				t.Errorf("an overlay pinning %s to v9.9.9 renders Deployment %s container %s with image %q: the Deployment's image is not the one deploy/default's images: entry names", deployImage, d.Name, c.Name, c.Image)
			}
		}
	}
	def := renderDeploy(t, deployDefaultDir).deployment(t)
	release := makefileVersion(t)
	if def != nil && def.Spec.Template.Spec.Containers[0].Image != deployImage+":"+release {
		t.Errorf("%s: Deployment %s runs image %q, want %s:%s, the Makefile's VERSION (overlays pin others)", strings.TrimPrefix(deployDefaultDir, "../"), def.Name, def.Spec.Template.Spec.Containers[0].Image, deployImage, release)
	}
	chart, err := os.ReadFile(filepath.Join(repo, "charts", "gatehouse", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chart), "\nappVersion: \""+release+"\"\n") {
		t.Errorf("charts/gatehouse/Chart.yaml: appVersion is not the Makefile's VERSION %q (the chart's image tag defaults to it)", release)
	}
}

// makefileVersion is the release the Makefile builds (VERSION ?= ...): the
// image tag of deploy/default and the chart's appVersion.
func makefileVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VERSION\s*\?=\s*(\S+)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("the Makefile sets no VERSION")
	}
	return string(m[1])
}

// TestDeployRBACPublished checks that deploy/default/README.md publishes the
// expected ClusterRole rules as its RBAC table.
func TestDeployRBACPublished(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(deployDefaultDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for heading, rules := range map[string][]rbacv1.PolicyRule{deployRBACHeading: expectedClusterRoleRules, deployAuditRBACHeading: expectedAuditClusterRoleRules} {
		published, err := deployRBACTable(string(readme), heading)
		if err != nil {
			t.Fatalf("%s/README.md: %v", strings.TrimPrefix(deployDefaultDir, "../"), err)
		}
		want := deployFlattenRules(rules)
		if !slices.Equal(published, want) {
			t.Errorf("%s/README.md: the table of %q grants %v, the expected ClusterRole rules %v: publish exactly the rules rbac.yaml grants", strings.TrimPrefix(deployDefaultDir, "../"), heading, published, want)
		}
	}
}

// The README's headings of the two RBAC tables.
const (
	deployRBACHeading      = "## RBAC"
	deployAuditRBACHeading = "### The audit's RBAC"
)

// checkDeployInstall checks one rendered installation and returns its
// serving Certificate (nil, after reporting why, if there is none).
func checkDeployInstall(t *testing.T, r *deployRender) *cmv1.Certificate {
	t.Helper()
	d := r.deployment(t)
	if d == nil {
		return nil
	}
	ns := d.Namespace
	where := fmt.Sprintf("%s: Deployment %s/%s", r.dir, ns, d.Name)

	checkDeployNamespace(t, r, ns)
	cfg, configMountDir := checkDeployConfig(t, r, d)
	if cfg == nil {
		return nil
	}
	checkDeployDeployment(t, where, d, cfg, configMountDir)
	checkDeployPDB(t, r, d)
	svc := checkDeployService(t, r, d, cfg)
	serving := checkDeployCertificates(t, r, d, cfg, svc)
	checkDeployWebhooks(t, r, ns, svc, serving, cfg)
	checkDeployManagedLabels(t, r, d, cfg)
	checkDeployRBAC(t, r, d, cfg)
	checkDeployAudit(t, r, d, cfg)
	return serving
}

// checkDeployAudit checks the background audit's Deployment: `serve
// --role=audit` with the same configuration as the webhooks, one replica,
// its own ServiceAccount bound to exactly the audit's rights (the webhooks'
// holds none of them), a memory limit, nothing the webhooks need (no
// certificate, no webhook port, no critical priority), pods that neither the
// webhook Service nor the PodDisruptionBudget select, and a Service for its
// metrics.
func checkDeployAudit(t *testing.T, r *deployRender, webhook *appsv1.Deployment, cfg *configv1alpha1.ServerConfig) {
	t.Helper()
	d := r.auditDeployment(t)
	if d == nil {
		return
	}
	where := fmt.Sprintf("%s: Deployment %s/%s", r.dir, d.Namespace, d.Name)
	pod := &d.Spec.Template.Spec
	c := &pod.Containers[0]
	if len(c.Args) < 2 || c.Args[0] != "serve" || !slices.Contains(c.Args, "--role=audit") {
		t.Errorf("%s: args %q, want serve --role=audit", where, c.Args)
	}
	auditCfg, configDir := checkDeployConfig(t, r, d)
	if auditCfg != nil && !reflect.DeepEqual(auditCfg, cfg) {
		t.Errorf("%s: runs another configuration than Deployment %s: both must read the one ConfigMap", where, webhook.Name)
	}
	if m, _ := deployMountAt(pod, c, configDir); m != nil && !m.ReadOnly {
		t.Errorf("%s: the configuration at %s is mounted writable", where, configDir)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("%s: replicas = %v, want 1 (one audit at a time, under its Lease)", where, deployDeref(d.Spec.Replicas))
	}
	if pod.PriorityClassName == "system-cluster-critical" || pod.PriorityClassName == "system-node-critical" {
		t.Errorf("%s: priorityClassName %s: the audit serves no admission and must yield to the webhooks", where, pod.PriorityClassName)
	}
	checkDeployPodSecurity(t, where, pod)
	if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || limit.Cmp(deployQuantity(c.Resources.Requests, corev1.ResourceMemory)) < 0 {
		t.Errorf("%s: resources.limits.memory = %v, want set and at least the request", where, c.Resources.Limits.Memory())
	}
	gotPorts := map[string]int{}
	for _, p := range c.Ports {
		gotPorts[p.Name] = int(p.ContainerPort)
	}
	if want := map[string]int{"probes": deployAddressPort(t, where, "serving.probeAddress", cfg.Serving.ProbeAddress),
		"metrics": deployAddressPort(t, where, "serving.metricsAddress", cfg.Serving.MetricsAddress)}; !reflect.DeepEqual(gotPorts, want) {
		t.Errorf("%s: container ports %v, want %v (no webhook port: it serves none)", where, gotPorts, want)
	}
	if m, _ := deployMountAt(pod, c, cfg.Serving.CertDir); m != nil {
		t.Errorf("%s: mounts the serving certificate, which it does not serve with", where)
	}
	auditPods, webhookPods := labels.Set(d.Spec.Template.Labels), labels.Set(webhook.Spec.Template.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || !sel.Matches(auditPods) || sel.Matches(webhookPods) {
		t.Errorf("%s: selector %v must select its own pods and not the webhooks'", where, metav1.FormatLabelSelector(d.Spec.Selector))
	}
	if sel, err := metav1.LabelSelectorAsSelector(webhook.Spec.Selector); err != nil || sel.Matches(auditPods) {
		t.Errorf("%s: Deployment %s's selector selects the audit's pods", where, webhook.Name)
	}
	if svc := r.service("gatehouse"); svc != nil && labels.SelectorFromSet(svc.Spec.Selector).Matches(auditPods) {
		t.Errorf("%s: Service gatehouse selects the audit's pods: the API server would send them reviews", where)
	}
	for _, pdb := range r.pdbs {
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && sel.Matches(auditPods) {
			t.Errorf("%s: PodDisruptionBudget %s counts the audit's pods among the webhooks'", where, pdb.Name)
		}
	}
	if svc := r.service("gatehouse-audit"); svc == nil {
		t.Errorf("%s: no Service gatehouse-audit for its metrics", where)
	} else if !labels.SelectorFromSet(svc.Spec.Selector).Matches(auditPods) || labels.SelectorFromSet(svc.Spec.Selector).Matches(webhookPods) ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort != intstr.FromInt32(int32(gotPorts["metrics"])) {
		t.Errorf("%s: Service gatehouse-audit (selector %v, ports %+v) must select the audit's pods alone, on their metrics port only", where, svc.Spec.Selector, svc.Spec.Ports)
	}

	// Its own identity, with exactly the audit's rights.
	sa := pod.ServiceAccountName
	if sa == "" || sa == webhook.Spec.Template.Spec.ServiceAccountName || !slices.ContainsFunc(r.serviceAccounts, func(s corev1.ServiceAccount) bool { return s.Name == sa }) {
		t.Errorf("%s: runs as ServiceAccount %q, want its own, rendered (not the webhooks' %s)", where, sa, webhook.Spec.Template.Spec.ServiceAccountName)
	}
	role, b := r.clusterRole("gatehouse-audit"), r.clusterRoleBinding("gatehouse-audit")
	if role == nil || b == nil {
		t.Errorf("%s: no ClusterRole and ClusterRoleBinding gatehouse-audit", r.dir)
		return
	}
	if !reflect.DeepEqual(role.Rules, expectedAuditClusterRoleRules) {
		t.Errorf("%s: ClusterRole %s grants\n  %v\nwant exactly\n  %v", r.dir, role.Name, deployFlattenRules(role.Rules), deployFlattenRules(expectedAuditClusterRoleRules))
	}
	if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}) ||
		!reflect.DeepEqual(b.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: d.Namespace}}) {
		t.Errorf("%s: ClusterRoleBinding %s binds %+v to %+v, want ServiceAccount %s/%s to ClusterRole %s", r.dir, b.Name, b.Subjects, b.RoleRef, d.Namespace, sa, role.Name)
	}
	if pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken {
		t.Errorf("%s: mounts no ServiceAccount token, so it cannot read what it audits", where)
	}
}

func checkDeployNamespace(t *testing.T, r *deployRender, ns string) {
	t.Helper()
	if ns == "" {
		t.Errorf("%s: the Deployment has no namespace: set namespace: in the kustomization", r.dir)
		return
	}
	var found bool
	for _, n := range r.namespaces {
		if n.Name != ns {
			t.Errorf("%s: Namespace %s is rendered, but gatehouse runs in %s", r.dir, n.Name, ns)
			continue
		}
		found = true
		if got := n.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			t.Errorf("%s: Namespace %s: label pod-security.kubernetes.io/enforce is %q, want restricted: gatehouse's own webhooks never see this namespace, so the built-in Pod Security Admission must guard it", r.dir, ns, got)
		}
	}
	if !found {
		t.Errorf("%s: no Namespace %s is rendered, but gatehouse runs in it", r.dir, ns)
	}
	for _, o := range r.objects {
		if got := o.meta.GetNamespace(); o.namespaced && got != ns {
			t.Errorf("%s: %s is in namespace %q, want %s (gatehouse's namespace)", r.dir, o.key, got, ns)
		}
	}
}

// checkDeployConfig finds the server configuration the Deployment runs with
// (--config, mounted from a ConfigMap) and loads it with the server's own
// strict loader. It returns the configuration and the directory it is
// mounted at.
func checkDeployConfig(t *testing.T, r *deployRender, d *appsv1.Deployment) (*configv1alpha1.ServerConfig, string) {
	t.Helper()
	c := &d.Spec.Template.Spec.Containers[0]
	where := fmt.Sprintf("%s: Deployment %s/%s container %s", r.dir, d.Namespace, d.Name, c.Name)
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("%s: args %q do not start with serve", where, c.Args)
	}
	path, ok := deployFlagValue(c.Args, "--config")
	if !ok {
		t.Errorf("%s: args %q have no --config: the server would run on defaults, not the ConfigMap", where, c.Args)
		return nil, ""
	}
	mount, vol := deployMountAt(&d.Spec.Template.Spec, c, filepath.Dir(path))
	if mount == nil || vol.ConfigMap == nil {
		t.Errorf("%s: --config %s is not in a mounted ConfigMap (want a configMap volume mounted at %s)", where, path, filepath.Dir(path))
		return nil, ""
	}
	if len(vol.ConfigMap.Items) > 0 {
		t.Errorf("%s: volume %s maps ConfigMap keys to other file names; mount the ConfigMap whole so %s is its key %s", where, vol.Name, path, filepath.Base(path))
	}
	cm := r.configMap(vol.ConfigMap.Name)
	if cm == nil {
		t.Errorf("%s: volume %s mounts ConfigMap %s, which is not rendered", where, vol.Name, vol.ConfigMap.Name)
		return nil, ""
	}
	data, ok := cm.Data[filepath.Base(path)]
	if !ok {
		t.Errorf("%s: ConfigMap %s has no key %s, which --config %s reads", where, cm.Name, filepath.Base(path), path)
		return nil, ""
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configv1alpha1.Load(file)
	if err == nil {
		err = route.ValidateConfig(cfg).ToAggregate()
	}
	if err != nil {
		t.Errorf("%s: ConfigMap %s key %s is not a configuration the server accepts: %v", r.dir, cm.Name, filepath.Base(path), err)
		return nil, ""
	}
	return &cfg, mount.MountPath
}

func checkDeployDeployment(t *testing.T, where string, d *appsv1.Deployment, cfg *configv1alpha1.ServerConfig, configDir string) {
	t.Helper()
	pod := &d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)

	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("%s: replicas = %v, want 3 (every webhook fails closed)", where, deployDeref(d.Spec.Replicas))
	}
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		t.Errorf("%s: selector %v does not select its pod labels %v", where, metav1.FormatLabelSelector(d.Spec.Selector), podLabels)
	}
	if pod.PriorityClassName != "system-cluster-critical" {
		t.Errorf("%s: priorityClassName = %q, want system-cluster-critical", where, pod.PriorityClassName)
	}

	// Spread: never two replicas on one node if avoidable, and over zones.
	var antiAffinity bool
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		terms := a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
		for _, term := range terms {
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			if term.TopologyKey == "kubernetes.io/hostname" && err == nil && !sel.Empty() && sel.Matches(podLabels) {
				antiAffinity = true
			}
		}
	}
	if !antiAffinity {
		t.Errorf("%s: no podAntiAffinity term over kubernetes.io/hostname selects the Deployment's own pods: all replicas may land on one node", where)
	}
	var zoneSpread bool
	for _, c := range pod.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if c.TopologyKey == "topology.kubernetes.io/zone" && c.WhenUnsatisfiable == corev1.ScheduleAnyway && err == nil && !sel.Empty() && sel.Matches(podLabels) {
			zoneSpread = true
		}
	}
	if !zoneSpread {
		t.Errorf("%s: no topologySpreadConstraint over topology.kubernetes.io/zone (whenUnsatisfiable: ScheduleAnyway) selects the Deployment's own pods", where)
	}

	// Shutdown: the grace period must cover the not-ready delay and draining
	// reviews, each bounded by the webhook timeout.
	delay := deployShutdownDelay
	if v, ok := deployFlagValue(pod.Containers[0].Args, "--shutdown-delay"); ok {
		if parsed, err := time.ParseDuration(v); err == nil {
			delay = parsed
		}
	}
	minGrace := delay + route.TimeoutSeconds*time.Second
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= minGrace {
		t.Errorf("%s: terminationGracePeriodSeconds = %v, want more than %s (shutdown delay %s + draining reviews of up to %ds)", where, deployDeref(g), minGrace, delay, route.TimeoutSeconds)
	}

	checkDeployPodSecurity(t, where, pod)

	c := &pod.Containers[0]
	cw := fmt.Sprintf("%s container %s", where, c.Name)
	if len(pod.Containers) != 1 {
		t.Errorf("%s: %d containers, want 1 (gatehouse)", where, len(pod.Containers))
	}
	if !strings.HasPrefix(c.Image, deployImage+":") && !strings.HasPrefix(c.Image, deployImage+"@") {
		t.Errorf("%s: image %q is not %s:<tag> or @<digest>", cw, c.Image, deployImage)
	}

	// Container ports are exactly the configured listeners.
	wantPorts := map[string]int{"webhook": cfg.Serving.Port, "probes": deployAddressPort(t, where, "serving.probeAddress", cfg.Serving.ProbeAddress)}
	if cfg.Serving.MetricsAddress != "0" {
		wantPorts["metrics"] = deployAddressPort(t, where, "serving.metricsAddress", cfg.Serving.MetricsAddress)
	}
	gotPorts := map[string]int{}
	for _, p := range c.Ports {
		gotPorts[p.Name] = int(p.ContainerPort)
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			t.Errorf("%s: port %s has protocol %s, want TCP", cw, p.Name, p.Protocol)
		}
	}
	if !reflect.DeepEqual(gotPorts, wantPorts) {
		t.Errorf("%s: container ports (name: number) %v, want %v, the listeners of the configuration", cw, gotPorts, wantPorts)
	}

	// Probes on the probe listener.
	probePort := wantPorts["probes"]
	checkProbe := func(kind string, p *corev1.Probe, path string) {
		t.Helper()
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s: no HTTP %s", cw, kind)
			return
		}
		port, ok := deployResolvePort(c, p.HTTPGet.Port)
		if p.HTTPGet.Path != path || !ok || port != probePort || (p.HTTPGet.Scheme != "" && p.HTTPGet.Scheme != corev1.URISchemeHTTP) {
			t.Errorf("%s: %s is %s %s on port %s, want HTTP GET %s on the probe port %d", cw, kind, p.HTTPGet.Scheme, p.HTTPGet.Path, p.HTTPGet.Port.String(), path, probePort)
		}
	}
	checkProbe("livenessProbe", c.LivenessProbe, "/healthz")
	checkProbe("readinessProbe", c.ReadinessProbe, "/readyz")
	if c.StartupProbe != nil {
		checkProbe("startupProbe", c.StartupProbe, "/healthz")
	}

	// Resources: requests for scheduling, a memory limit.
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[name]; !ok || q.Sign() <= 0 {
			t.Errorf("%s: resources.requests.%s is not set", cw, name)
		}
	}
	if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || limit.Cmp(deployQuantity(c.Resources.Requests, corev1.ResourceMemory)) < 0 {
		t.Errorf("%s: resources.limits.memory = %v, want set and at least the request", cw, c.Resources.Limits.Memory())
	}

	// The serving certificate at the configured certDir, read-only.
	if cfg.Serving.CertDir == "" {
		t.Errorf("%s: the configuration sets no serving.certDir", where)
	} else if m, v := deployMountAt(pod, c, cfg.Serving.CertDir); m == nil || v.Secret == nil {
		t.Errorf("%s: no Secret is mounted at serving.certDir %s", cw, cfg.Serving.CertDir)
	} else if !m.ReadOnly {
		t.Errorf("%s: the serving certificate at %s is mounted writable", cw, cfg.Serving.CertDir)
	}
	if m, _ := deployMountAt(pod, c, configDir); m != nil && !m.ReadOnly {
		t.Errorf("%s: the configuration at %s is mounted writable", cw, configDir)
	}
}

// checkDeployPodSecurity checks the PSC defaults, applied to gatehouse
// itself, and a read-only root filesystem.
func checkDeployPodSecurity(t *testing.T, where string, pod *corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
		t.Errorf("%s: pod has no securityContext", where)
	}
	wantInt := func(field string, got *int64, want int64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s: pod securityContext.%s = %v, want %d", where, field, deployDeref(got), want)
		}
	}
	wantInt("runAsUser", psc.RunAsUser, 1001)
	wantInt("runAsGroup", psc.RunAsGroup, 0)
	wantInt("fsGroup", psc.FSGroup, 1001)
	if p := psc.FSGroupChangePolicy; p == nil || *p != corev1.FSGroupChangeOnRootMismatch {
		t.Errorf("%s: pod securityContext.fsGroupChangePolicy = %v, want OnRootMismatch", where, deployDeref(p))
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: pod securityContext.runAsNonRoot = %v, want true", where, deployDeref(psc.RunAsNonRoot))
	}
	if s := psc.SeccompProfile; s == nil || s.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext.seccompProfile = %v, want type RuntimeDefault", where, s)
	}
	for _, c := range deployContainers(pod) {
		cw := fmt.Sprintf("%s container %s", where, c.Name)
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: no securityContext", cw)
			continue
		}
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: securityContext.runAsNonRoot = %v, want true", cw, deployDeref(sc.RunAsNonRoot))
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: securityContext.allowPrivilegeEscalation = %v, want false", cw, deployDeref(sc.AllowPrivilegeEscalation))
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("%s: securityContext.capabilities = %+v, want drop [ALL] and nothing added", cw, sc.Capabilities)
		}
		if s := sc.SeccompProfile; s == nil || s.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: securityContext.seccompProfile = %v, want type RuntimeDefault", cw, s)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: securityContext.readOnlyRootFilesystem = %v, want true", cw, deployDeref(sc.ReadOnlyRootFilesystem))
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s: securityContext.privileged is true", cw)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("%s: securityContext.runAsUser is 0", cw)
		}
	}

}

func checkDeployPDB(t *testing.T, r *deployRender, d *appsv1.Deployment) {
	t.Helper()
	if len(r.pdbs) != 1 {
		t.Errorf("%s: %d PodDisruptionBudgets, want 1", r.dir, len(r.pdbs))
		return
	}
	pdb := r.pdbs[0]
	where := fmt.Sprintf("%s: PodDisruptionBudget %s/%s", r.dir, pdb.Namespace, pdb.Name)
	if m := pdb.Spec.MinAvailable; m == nil || *m != intstr.FromInt32(2) {
		t.Errorf("%s: minAvailable = %v, want 2", where, m)
	}
	if pdb.Spec.MaxUnavailable != nil {
		t.Errorf("%s: sets maxUnavailable too", where)
	}
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("%s: selector %v does not select Deployment %s's pod labels %v", where, metav1.FormatLabelSelector(pdb.Spec.Selector), d.Name, d.Spec.Template.Labels)
	}
	if m := pdb.Spec.MinAvailable; m != nil && m.Type == intstr.Int && d.Spec.Replicas != nil && m.IntVal >= *d.Spec.Replicas {
		t.Errorf("%s: minAvailable %d is not below the %d replicas: no node could ever be drained", where, m.IntVal, *d.Spec.Replicas)
	}
}

func checkDeployService(t *testing.T, r *deployRender, d *appsv1.Deployment, cfg *configv1alpha1.ServerConfig) *corev1.Service {
	t.Helper()
	svc := r.service("gatehouse")
	if svc == nil || len(r.services) != 2 {
		t.Errorf("%s: %d Services, want gatehouse (the webhooks) and gatehouse-audit (the audit's metrics)", r.dir, len(r.services))
		return nil
	}
	where := fmt.Sprintf("%s: Service %s/%s", r.dir, svc.Namespace, svc.Name)
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("%s: selector %v does not select Deployment %s's pod labels %v", where, svc.Spec.Selector, d.Name, d.Spec.Template.Labels)
	}
	c := &d.Spec.Template.Spec.Containers[0]
	want := map[string][2]int{"webhook": {443, cfg.Serving.Port}}
	if cfg.Serving.MetricsAddress != "0" {
		want["metrics"] = [2]int{8080, deployAddressPort(t, where, "serving.metricsAddress", cfg.Serving.MetricsAddress)}
	}
	got := map[string][2]int{}
	for _, p := range svc.Spec.Ports {
		target, ok := deployResolvePort(c, p.TargetPort)
		if !ok {
			t.Errorf("%s: port %s: targetPort %s is no port of container %s", where, p.Name, p.TargetPort.String(), c.Name)
		}
		got[p.Name] = [2]int{int(p.Port), target}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ports (name: [port, targetPort]) %v, want %v (webhook: 443 to serving.port)", where, got, want)
	}
	return svc
}

// checkDeployCertificates checks the cert-manager chain and returns the serving
// Certificate: the one whose Secret is mounted at serving.certDir.
func checkDeployCertificates(t *testing.T, r *deployRender, d *appsv1.Deployment, cfg *configv1alpha1.ServerConfig, svc *corev1.Service) *cmv1.Certificate {
	t.Helper()
	pod := &d.Spec.Template.Spec
	_, vol := deployMountAt(pod, &pod.Containers[0], cfg.Serving.CertDir)
	if vol == nil || vol.Secret == nil {
		return nil // reported by checkDeployDeployment
	}
	serving := r.certificateForSecret(vol.Secret.SecretName)
	if serving == nil {
		t.Errorf("%s: no Certificate issues Secret %s, which the Deployment mounts at serving.certDir %s", r.dir, vol.Secret.SecretName, cfg.Serving.CertDir)
		return nil
	}
	where := fmt.Sprintf("%s: serving Certificate %s/%s", r.dir, serving.Namespace, serving.Name)
	spec := &serving.Spec
	if svc != nil {
		if host := svc.Name + "." + svc.Namespace + ".svc"; !slices.Contains(spec.DNSNames, host) {
			t.Errorf("%s: dnsNames %v lack %s, the name the API server verifies", where, spec.DNSNames, host)
		}
	}
	if spec.IsCA {
		t.Errorf("%s: isCA is true", where)
	}
	for _, u := range []cmv1.KeyUsage{cmv1.UsageServerAuth, cmv1.UsageDigitalSignature} {
		if !slices.Contains(spec.Usages, u) {
			t.Errorf("%s: usages %v lack %q", where, spec.Usages, u)
		}
	}
	checkDeployKey(t, where, spec, cmv1.RotationPolicyAlways, "a renewed serving certificate gets a new key")
	if spec.Duration == nil || spec.RenewBefore == nil {
		t.Errorf("%s: duration and renewBefore must both be set, got %v and %v", where, spec.Duration, spec.RenewBefore)
	} else if spec.RenewBefore.Duration >= spec.Duration.Duration/2 {
		t.Errorf("%s: renewBefore %s is not below half the duration %s", where, spec.RenewBefore.Duration, spec.Duration.Duration)
	}

	// serving <- CA Issuer <- CA Certificate <- self-signed Issuer.
	caIssuer := r.issuerFor(t, where, spec.IssuerRef)
	if caIssuer == nil {
		return serving
	}
	if caIssuer.Spec.CA == nil {
		t.Errorf("%s: issuerRef names Issuer %s, which is not a CA Issuer", where, caIssuer.Name)
		return serving
	}
	ca := r.certificateForSecret(caIssuer.Spec.CA.SecretName)
	if ca == nil {
		t.Errorf("%s: CA Issuer %s signs with Secret %s, which no Certificate in the render issues", r.dir, caIssuer.Name, caIssuer.Spec.CA.SecretName)
		return serving
	}
	caWhere := fmt.Sprintf("%s: CA Certificate %s/%s", r.dir, ca.Namespace, ca.Name)
	if !ca.Spec.IsCA {
		t.Errorf("%s: isCA is false, but CA Issuer %s signs with its Secret %s", caWhere, caIssuer.Name, ca.Spec.SecretName)
	}
	if ca.Spec.Duration == nil || ca.Spec.RenewBefore == nil || ca.Spec.RenewBefore.Duration >= ca.Spec.Duration.Duration {
		t.Errorf("%s: duration %v and renewBefore %v: both must be set, renewBefore below duration", caWhere, ca.Spec.Duration, ca.Spec.RenewBefore)
	} else if spec.Duration != nil && ca.Spec.RenewBefore.Duration < spec.Duration.Duration {
		t.Errorf("%s: renewBefore %s is shorter than the serving certificate's duration %s: serving certificates could outlive the CA", caWhere, ca.Spec.RenewBefore.Duration, spec.Duration.Duration)
	}
	checkDeployKey(t, caWhere, &ca.Spec, cmv1.RotationPolicyNever,
		"a renewed CA keeps its key, so serving certificates signed before and after verify against either CA certificate while cainjector updates the caBundle")
	if root := r.issuerFor(t, caWhere, ca.Spec.IssuerRef); root != nil && root.Spec.SelfSigned == nil {
		t.Errorf("%s: issuerRef names Issuer %s, which is not selfSigned", caWhere, root.Name)
	}
	return serving
}

func checkDeployKey(t *testing.T, where string, spec *cmv1.CertificateSpec, rotation cmv1.PrivateKeyRotationPolicy, why string) {
	t.Helper()
	k := spec.PrivateKey
	if k == nil {
		t.Errorf("%s: no privateKey: want ECDSA P-256, rotationPolicy %s", where, rotation)
		return
	}
	if k.Algorithm != cmv1.ECDSAKeyAlgorithm || k.Size != 256 {
		t.Errorf("%s: privateKey is %s %d, want ECDSA 256 (P-256)", where, k.Algorithm, k.Size)
	}
	if k.RotationPolicy != rotation {
		t.Errorf("%s: privateKey.rotationPolicy = %q, want %s: %s", where, k.RotationPolicy, rotation, why)
	}
}

func checkDeployWebhooks(t *testing.T, r *deployRender, ns string, svc *corev1.Service, serving *cmv1.Certificate, cfg *configv1alpha1.ServerConfig) {
	t.Helper()
	// What the registry renders for the deployed configuration's products.
	reference, err := render.WebhookConfigurations(route.ManifestOptions{Options: route.OptionsFromConfig(*cfg)})
	if err != nil {
		t.Fatal(err)
	}
	referenceConditions := map[string][]admissionregistrationv1.MatchCondition{}
	for _, doc := range strings.Split(string(reference), "---\n") {
		var c struct {
			Webhooks []admissionregistrationv1.ValidatingWebhook `json:"webhooks"`
		}
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.Webhooks {
			referenceConditions[w.Name] = w.MatchConditions
		}
	}

	type hook struct {
		typ                route.Type
		config             string
		w                  admissionregistrationv1.ValidatingWebhook
		reinvocationPolicy *admissionregistrationv1.ReinvocationPolicyType
	}
	var all []hook
	configs := map[string]metav1.ObjectMeta{}
	for _, c := range r.validating {
		configs["ValidatingWebhookConfiguration "+c.Name] = c.ObjectMeta
		for _, w := range c.Webhooks {
			all = append(all, hook{typ: route.Validating, config: c.Name, w: w})
		}
	}
	for _, c := range r.mutating {
		configs["MutatingWebhookConfiguration "+c.Name] = c.ObjectMeta
		for _, w := range c.Webhooks {
			all = append(all, hook{typ: route.Mutating, config: c.Name, reinvocationPolicy: w.ReinvocationPolicy, w: admissionregistrationv1.ValidatingWebhook{
				Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
				NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
				TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions, MatchConditions: w.MatchConditions,
			}})
		}
	}
	if len(configs) == 0 {
		t.Errorf("%s: no webhook configurations are rendered (deploy/webhooks)", r.dir)
	}

	// cainjector fills every caBundle from the serving certificate.
	for key, meta := range configs {
		got := meta.Annotations[deployInjectCAFrom]
		cert := r.certificateByRef(got)
		switch {
		case cert == nil:
			t.Errorf("%s: %s: annotation %s = %q, want <namespace>/<name> of a Certificate in the render", r.dir, key, deployInjectCAFrom, got)
		case serving != nil && cert != serving:
			t.Errorf("%s: %s: annotation %s = %q, but the pods serve Certificate %s/%s", r.dir, key, deployInjectCAFrom, got, serving.Namespace, serving.Name)
		}
	}

	// The default layout: every combined group with a member exactly once
	// per entry it has (its own, and one for Namespaces' own requests when
	// it takes other requests too), at its path,
	// with its failure policy and the matchConditions the registry renders
	// for the deployed configuration; every registry webhook is a member of
	// a rendered group.
	for _, g := range route.Groups() {
		names := g.EntryNames(route.OptionsFromConfig(*cfg))
		n := 0
		for _, h := range all {
			s := h.w.ClientConfig.Service
			if s == nil || s.Path == nil || *s.Path != g.Path {
				continue
			}
			n++
			where := fmt.Sprintf("%s: %sWebhookConfiguration %s webhook %s", r.dir, h.typ, h.config, h.w.Name)
			if h.typ != g.Type || !slices.Contains(names, h.w.Name) {
				t.Errorf("%s: group %s is rendered as %s %s, want one of %v", where, g.Name, h.typ, h.w.Name, names)
			}
			if fp := h.w.FailurePolicy; fp == nil || *fp != g.FailurePolicy {
				t.Errorf("%s: failurePolicy = %v, want %s", where, deployDeref(fp), g.FailurePolicy)
			}
			if !reflect.DeepEqual(h.w.MatchConditions, referenceConditions[h.w.Name]) {
				t.Errorf("%s: matchConditions differ from what the registry renders for the deployed configuration (run make manifests with it):\n%s",
					where, cmp.Diff(referenceConditions[h.w.Name], h.w.MatchConditions))
			}
		}
		if n != len(names) {
			t.Errorf("%s: combined group %s (%s) is rendered %d times, want %d (once per entry %v)", r.dir, g.Name, g.Path, n, len(names), names)
		}
	}

	for _, h := range all {
		w := &h.w
		where := fmt.Sprintf("%s: %sWebhookConfiguration %s webhook %s", r.dir, h.typ, h.config, w.Name)
		s := w.ClientConfig.Service
		if w.ClientConfig.URL != nil || s == nil {
			t.Errorf("%s: clientConfig %+v, want the Service", where, w.ClientConfig)
			continue
		}
		var path string
		if s.Path != nil {
			path = *s.Path
		}
		if _, ok := deployLookupPath(path); !ok {
			t.Errorf("%s: path %q is no webhook in the registry", where, path)
		}
		if svc != nil && (s.Namespace != svc.Namespace || s.Name != svc.Name) {
			t.Errorf("%s: clientConfig.service is %s/%s, want the Service %s/%s", where, s.Namespace, s.Name, svc.Namespace, svc.Name)
		}
		if s.Port == nil || *s.Port != 443 {
			t.Errorf("%s: clientConfig.service.port = %v, want 443", where, deployDeref(s.Port))
		}
		excluded := map[string]bool{}
		if sel := w.NamespaceSelector; sel != nil {
			for _, e := range sel.MatchExpressions {
				if e.Key == deployNameLabel && e.Operator == metav1.LabelSelectorOpNotIn {
					for _, v := range e.Values {
						excluded[v] = true
					}
				}
			}
		}
		for _, n := range append([]string{ns}, deployAlwaysExcluded...) {
			if !excluded[n] {
				t.Errorf("%s: namespaceSelector %v does not exclude namespace %s by %s", where, metav1.FormatLabelSelector(w.NamespaceSelector), n, deployNameLabel)
			}
		}
		if se := w.SideEffects; se == nil || *se != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("%s: sideEffects = %v, want None", where, deployDeref(se))
		}
		if !slices.Equal(w.AdmissionReviewVersions, []string{"v1"}) {
			t.Errorf("%s: admissionReviewVersions = %v, want [v1]", where, w.AdmissionReviewVersions)
		}
		if mp := w.MatchPolicy; mp == nil || *mp != admissionregistrationv1.Equivalent {
			t.Errorf("%s: matchPolicy = %v, want Equivalent", where, deployDeref(mp))
		}
		if ts := w.TimeoutSeconds; ts == nil || *ts < 1 || *ts > 5 {
			t.Errorf("%s: timeoutSeconds = %v, want 1 to 5", where, deployDeref(ts))
		}
		if h.typ == route.Mutating {
			if rp := h.reinvocationPolicy; rp == nil || *rp != admissionregistrationv1.IfNeededReinvocationPolicy {
				t.Errorf("%s: reinvocationPolicy = %v, want IfNeeded", where, deployDeref(rp))
			}
		}
	}
}

// checkDeployManagedLabels: with the selections managed, the render holds
// the admission policy that keeps the managed namespace labels gatehouse's
// as the registry renders it for the Deployment's namespace and
// ServiceAccount (so it lets the pods' own requests through), bound to
// deny everywhere but the namespaces exempt by name; without, none.
func checkDeployManagedLabels(t *testing.T, r *deployRender, d *appsv1.Deployment, cfg *configv1alpha1.ServerConfig) {
	t.Helper()
	o := route.ManifestOptions{Namespace: d.Namespace, ServiceAccount: d.Spec.Template.Spec.ServiceAccountName, Options: route.OptionsFromConfig(*cfg)}
	policy, binding, want := render.ManagedLabelsPolicy(o)
	if !want {
		if len(r.policies)+len(r.policyBindings) > 0 {
			t.Errorf("%s: admission policies are rendered without harness.manageSelections", r.dir)
		}
		return
	}
	if len(r.policies) != 1 || len(r.policyBindings) != 1 {
		t.Errorf("%s: %d admission policies and %d bindings, want %s and its binding", r.dir, len(r.policies), len(r.policyBindings), render.ManagedLabelsPolicyName)
		return
	}
	got, gotBinding := r.policies[0], r.policyBindings[0]
	if got.Name != policy.Name || !reflect.DeepEqual(got.Spec, policy.Spec) {
		t.Errorf("%s: ValidatingAdmissionPolicy %s differs from what the registry renders for ServiceAccount %s/%s (run make manifests):\n%s",
			r.dir, got.Name, d.Namespace, o.ServiceAccount, cmp.Diff(policy.Spec, got.Spec))
	}
	if gotBinding.Name != binding.Name || !reflect.DeepEqual(gotBinding.Spec, binding.Spec) {
		t.Errorf("%s: ValidatingAdmissionPolicyBinding %s differs from what the registry renders (run make manifests):\n%s",
			r.dir, gotBinding.Name, cmp.Diff(binding.Spec, gotBinding.Spec))
	}
	if fp := got.Spec.FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
		t.Errorf("%s: %s: failurePolicy %v, want Fail", r.dir, got.Name, deployDeref(fp))
	}
	if !slices.Equal(gotBinding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("%s: %s: validationActions %v, want [Deny]", r.dir, gotBinding.Name, gotBinding.Spec.ValidationActions)
	}
}

func deployLookupPath(path string) (string, bool) {
	for _, d := range route.Registry() {
		if d.Path == path {
			return d.Name, true
		}
	}
	for _, g := range route.Groups() {
		if g.Path == path {
			return g.Name, true
		}
	}
	return "", false
}

func checkDeployRBAC(t *testing.T, r *deployRender, d *appsv1.Deployment, cfg *configv1alpha1.ServerConfig) {
	t.Helper()
	pod := &d.Spec.Template.Spec
	saName := pod.ServiceAccountName
	if saName == "" || saName == "default" {
		t.Errorf("%s: Deployment %s runs as ServiceAccount %q, want its own", r.dir, d.Name, saName)
	}
	if !slices.ContainsFunc(r.serviceAccounts, func(sa corev1.ServiceAccount) bool { return sa.Name == saName && sa.Namespace == d.Namespace }) {
		t.Errorf("%s: ServiceAccount %s/%s, which the Deployment runs as, is not rendered", r.dir, d.Namespace, saName)
	}
	role := r.clusterRole("gatehouse")
	if role == nil || len(r.clusterRoles) != 2 {
		t.Errorf("%s: %d ClusterRoles, want gatehouse and gatehouse-audit", r.dir, len(r.clusterRoles))
		return
	}
	where := fmt.Sprintf("%s: ClusterRole %s", r.dir, role.Name)
	if role.AggregationRule != nil {
		t.Errorf("%s: has an aggregationRule: its grants would not be the ones listed", where)
	}
	for _, want := range expectedClusterRoleRules {
		if !slices.ContainsFunc(role.Rules, func(got rbacv1.PolicyRule) bool { return reflect.DeepEqual(got, want) }) {
			t.Errorf("%s: lacks the expected rule %s: the server needs it", where, deployRuleString(want))
		}
	}
	for _, got := range role.Rules {
		if !slices.ContainsFunc(expectedClusterRoleRules, func(want rbacv1.PolicyRule) bool { return reflect.DeepEqual(got, want) }) {
			t.Errorf("%s: grants %s, which is not in the expected least privilege: add it to expectedClusterRoleRules and the README's RBAC table only if the server needs it", where, deployRuleString(got))
		}
	}
	// The token is mounted exactly when there is something to use it for:
	// the ClusterRole's grants, or the operator-namespace Role of
	// deploy/overrides-rbac that component-overrides reads workloads with.
	mounted := pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken
	readsState := len(role.Rules) > 0 || cfg.Enabled("component-overrides")
	if !readsState && mounted {
		t.Errorf("%s: Deployment %s mounts a ServiceAccount token, but reads no cluster state: set automountServiceAccountToken: false", r.dir, d.Name)
	}
	if readsState && !mounted {
		t.Errorf("%s: Deployment %s mounts no ServiceAccount token, so it cannot read the cluster state its webhooks need", r.dir, d.Name)
	}

	b := r.clusterRoleBinding("gatehouse")
	if b == nil || len(r.clusterRoleBindings) != 2 {
		t.Errorf("%s: %d ClusterRoleBindings, want gatehouse and gatehouse-audit", r.dir, len(r.clusterRoleBindings))
		return
	}
	if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}) {
		t.Errorf("%s: ClusterRoleBinding %s: roleRef %+v, want ClusterRole %s", r.dir, b.Name, b.RoleRef, role.Name)
	}
	want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: saName, Namespace: d.Namespace}}
	if !reflect.DeepEqual(b.Subjects, want) {
		t.Errorf("%s: ClusterRoleBinding %s: subjects %+v, want exactly ServiceAccount %s/%s", r.dir, b.Name, b.Subjects, d.Namespace, saName)
	}
}

func deployRuleString(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("{apiGroups %q resources %q resourceNames %q verbs %q nonResourceURLs %q}", r.APIGroups, r.Resources, r.ResourceNames, r.Verbs, r.NonResourceURLs)
}

// deployFlattenRules lists rules as sorted "group resource verb" triples, the
// granularity of the README's table.
func deployFlattenRules(rules []rbacv1.PolicyRule) []string {
	out := []string{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, fmt.Sprintf("%q %s %s", g, res, v))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// deployRBACTable reads the table of the README's section under heading
// (up to the next heading): columns API group (`""` for core), resources
// and verbs (comma-separated, in backticks), needed by; a row "*(none)*"
// stands for no rules.
func deployRBACTable(readme, heading string) ([]string, error) {
	_, section, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		return nil, fmt.Errorf("no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n#")
	out := []string{}
	var rows int
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		if rows <= 2 { // header and separator
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("RBAC table row %q: want 4 columns (API group, resources, verbs, needed by)", line)
		}
		group := strings.TrimSpace(strings.Trim(strings.TrimSpace(cells[0]), "`"))
		if group == "*(none)*" {
			continue
		}
		if group == `""` {
			group = ""
		}
		for _, res := range deploySplitList(cells[1]) {
			for _, v := range deploySplitList(cells[2]) {
				out = append(out, fmt.Sprintf("%q %s %s", group, res, v))
			}
		}
	}
	if rows < 3 {
		return nil, fmt.Errorf("the RBAC section has no table rows (write a row *(none)* for no rules)")
	}
	slices.Sort(out)
	return out, nil
}

func deploySplitList(cell string) []string {
	var out []string
	for _, s := range strings.Split(cell, ",") {
		if s = strings.Trim(strings.TrimSpace(s), "`"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// deployRender is one kustomize render, decoded.
type deployRender struct {
	dir     string
	objects []deployObject

	namespaces          []corev1.Namespace
	serviceAccounts     []corev1.ServiceAccount
	clusterRoles        []rbacv1.ClusterRole
	clusterRoleBindings []rbacv1.ClusterRoleBinding
	configMaps          []corev1.ConfigMap
	deployments         []appsv1.Deployment
	pdbs                []policyv1.PodDisruptionBudget
	services            []corev1.Service
	issuers             []cmv1.Issuer
	certificates        []cmv1.Certificate
	validating          []admissionregistrationv1.ValidatingWebhookConfiguration
	mutating            []admissionregistrationv1.MutatingWebhookConfiguration
	policies            []admissionregistrationv1.ValidatingAdmissionPolicy
	policyBindings      []admissionregistrationv1.ValidatingAdmissionPolicyBinding
	crds                []apiextensionsv1.CustomResourceDefinition
	roles               []rbacv1.Role
	roleBindings        []rbacv1.RoleBinding
}

type deployObject struct {
	key        string // "<apiVersion> <Kind> <namespace>/<name>"
	obj        any    // pointer into one of deployRender's slices, after decoding
	meta       metav1.Object
	namespaced bool
}

func renderDeploy(t *testing.T, dir string) *deployRender {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := &deployRender{dir: strings.TrimPrefix(dir, "../")}
	for _, res := range resMap.Resources() {
		gvk := res.GetGvk()
		apiVersion := gvk.Version
		if gvk.Group != "" {
			apiVersion = gvk.Group + "/" + gvk.Version
		}
		key := fmt.Sprintf("%s %s %s/%s", apiVersion, gvk.Kind, res.GetNamespace(), res.GetName())
		doc, err := res.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s: %v", r.dir, key, err)
		}
		var into any
		namespaced := true
		switch apiVersion + " " + gvk.Kind {
		case "v1 Namespace":
			r.namespaces = append(r.namespaces, corev1.Namespace{})
			into, namespaced = &r.namespaces[len(r.namespaces)-1], false
		case "v1 ServiceAccount":
			r.serviceAccounts = append(r.serviceAccounts, corev1.ServiceAccount{})
			into = &r.serviceAccounts[len(r.serviceAccounts)-1]
		case "rbac.authorization.k8s.io/v1 ClusterRole":
			r.clusterRoles = append(r.clusterRoles, rbacv1.ClusterRole{})
			into, namespaced = &r.clusterRoles[len(r.clusterRoles)-1], false
		case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
			r.clusterRoleBindings = append(r.clusterRoleBindings, rbacv1.ClusterRoleBinding{})
			into, namespaced = &r.clusterRoleBindings[len(r.clusterRoleBindings)-1], false
		case "v1 ConfigMap":
			r.configMaps = append(r.configMaps, corev1.ConfigMap{})
			into = &r.configMaps[len(r.configMaps)-1]
		case "apps/v1 Deployment":
			r.deployments = append(r.deployments, appsv1.Deployment{})
			into = &r.deployments[len(r.deployments)-1]
		case "policy/v1 PodDisruptionBudget":
			r.pdbs = append(r.pdbs, policyv1.PodDisruptionBudget{})
			into = &r.pdbs[len(r.pdbs)-1]
		case "v1 Service":
			r.services = append(r.services, corev1.Service{})
			into = &r.services[len(r.services)-1]
		case "cert-manager.io/v1 Issuer":
			r.issuers = append(r.issuers, cmv1.Issuer{})
			into = &r.issuers[len(r.issuers)-1]
		case "cert-manager.io/v1 Certificate":
			r.certificates = append(r.certificates, cmv1.Certificate{})
			into = &r.certificates[len(r.certificates)-1]
		case "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration":
			r.validating = append(r.validating, admissionregistrationv1.ValidatingWebhookConfiguration{})
			into, namespaced = &r.validating[len(r.validating)-1], false
		case "admissionregistration.k8s.io/v1 MutatingWebhookConfiguration":
			r.mutating = append(r.mutating, admissionregistrationv1.MutatingWebhookConfiguration{})
			into, namespaced = &r.mutating[len(r.mutating)-1], false
		case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy":
			r.policies = append(r.policies, admissionregistrationv1.ValidatingAdmissionPolicy{})
			into, namespaced = &r.policies[len(r.policies)-1], false
		case "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding":
			r.policyBindings = append(r.policyBindings, admissionregistrationv1.ValidatingAdmissionPolicyBinding{})
			into, namespaced = &r.policyBindings[len(r.policyBindings)-1], false
		case "apiextensions.k8s.io/v1 CustomResourceDefinition":
			r.crds = append(r.crds, apiextensionsv1.CustomResourceDefinition{})
			into, namespaced = &r.crds[len(r.crds)-1], false
		case "rbac.authorization.k8s.io/v1 Role":
			r.roles = append(r.roles, rbacv1.Role{})
			into = &r.roles[len(r.roles)-1]
		case "rbac.authorization.k8s.io/v1 RoleBinding":
			r.roleBindings = append(r.roleBindings, rbacv1.RoleBinding{})
			into = &r.roleBindings[len(r.roleBindings)-1]
		default:
			t.Errorf("%s: %s is a kind this test does not check; teach renderDeploy in e2e/deploy_test.go to decode it and add its checks", r.dir, key)
			continue
		}
		// Strict and case-sensitive, like the API server's field validation:
		// a misspelt field is an error here, not silently dropped.
		jsonDoc, err := yaml.YAMLToJSONStrict(doc)
		if err == nil {
			var strict []error
			if strict, err = kjson.UnmarshalStrict(jsonDoc, into); err == nil && len(strict) > 0 {
				err = fmt.Errorf("%v", strict)
			}
		}
		if err != nil {
			t.Errorf("%s: %s does not decode strictly as its API type: %v", r.dir, key, err)
		}
		r.objects = append(r.objects, deployObject{key: key, namespaced: namespaced})
	}
	// The slices are complete now: point at their final elements.
	counts := map[string]int{}
	for i := range r.objects {
		o := &r.objects[i]
		kind := strings.SplitN(o.key, " ", 3)[1]
		n := counts[kind]
		counts[kind]++
		switch kind {
		case "Namespace":
			o.obj, o.meta = &r.namespaces[n], &r.namespaces[n]
		case "ServiceAccount":
			o.obj, o.meta = &r.serviceAccounts[n], &r.serviceAccounts[n]
		case "ClusterRole":
			o.obj, o.meta = &r.clusterRoles[n], &r.clusterRoles[n]
		case "ClusterRoleBinding":
			o.obj, o.meta = &r.clusterRoleBindings[n], &r.clusterRoleBindings[n]
		case "ConfigMap":
			o.obj, o.meta = &r.configMaps[n], &r.configMaps[n]
		case "Deployment":
			o.obj, o.meta = &r.deployments[n], &r.deployments[n]
		case "PodDisruptionBudget":
			o.obj, o.meta = &r.pdbs[n], &r.pdbs[n]
		case "Service":
			o.obj, o.meta = &r.services[n], &r.services[n]
		case "Issuer":
			o.obj, o.meta = &r.issuers[n], &r.issuers[n]
		case "Certificate":
			o.obj, o.meta = &r.certificates[n], &r.certificates[n]
		case "ValidatingWebhookConfiguration":
			o.obj, o.meta = &r.validating[n], &r.validating[n]
		case "MutatingWebhookConfiguration":
			o.obj, o.meta = &r.mutating[n], &r.mutating[n]
		case "ValidatingAdmissionPolicy":
			o.obj, o.meta = &r.policies[n], &r.policies[n]
		case "ValidatingAdmissionPolicyBinding":
			o.obj, o.meta = &r.policyBindings[n], &r.policyBindings[n]
		case "CustomResourceDefinition":
			o.obj, o.meta = &r.crds[n], &r.crds[n]
		case "Role":
			o.obj, o.meta = &r.roles[n], &r.roles[n]
		case "RoleBinding":
			o.obj, o.meta = &r.roleBindings[n], &r.roleBindings[n]
		}
	}
	return r
}

func (r *deployRender) keys() []string {
	out := make([]string, len(r.objects))
	for i, o := range r.objects {
		out[i] = o.key
	}
	return out
}

// deployment is the Deployment that serves the webhooks, gatehouse.
func (r *deployRender) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	return r.deploymentNamed(t, "gatehouse")
}

// auditDeployment is the Deployment of the background audit,
// gatehouse-audit.
func (r *deployRender) auditDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	return r.deploymentNamed(t, "gatehouse-audit")
}

func (r *deployRender) deploymentNamed(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	var names []string
	for _, d := range r.deployments {
		names = append(names, d.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"gatehouse", "gatehouse-audit"}) {
		t.Errorf("%s: Deployments %v, want gatehouse (the webhooks) and gatehouse-audit (the audit)", r.dir, names)
	}
	for i := range r.deployments {
		d := &r.deployments[i]
		if d.Name != name {
			continue
		}
		if len(d.Spec.Template.Spec.Containers) == 0 {
			t.Errorf("%s: Deployment %s has no containers", r.dir, d.Name)
			return nil
		}
		return d
	}
	return nil
}

func (r *deployRender) service(name string) *corev1.Service {
	for i := range r.services {
		if r.services[i].Name == name {
			return &r.services[i]
		}
	}
	return nil
}

func (r *deployRender) clusterRole(name string) *rbacv1.ClusterRole {
	for i := range r.clusterRoles {
		if r.clusterRoles[i].Name == name {
			return &r.clusterRoles[i]
		}
	}
	return nil
}

func (r *deployRender) clusterRoleBinding(name string) *rbacv1.ClusterRoleBinding {
	for i := range r.clusterRoleBindings {
		if r.clusterRoleBindings[i].Name == name {
			return &r.clusterRoleBindings[i]
		}
	}
	return nil
}

func (r *deployRender) configMap(name string) *corev1.ConfigMap {
	for i := range r.configMaps {
		if r.configMaps[i].Name == name {
			return &r.configMaps[i]
		}
	}
	return nil
}

func (r *deployRender) certificateForSecret(secret string) *cmv1.Certificate {
	for i := range r.certificates {
		if r.certificates[i].Spec.SecretName == secret {
			return &r.certificates[i]
		}
	}
	return nil
}

// certificateByRef finds the Certificate "<namespace>/<name>".
func (r *deployRender) certificateByRef(ref string) *cmv1.Certificate {
	for i := range r.certificates {
		c := &r.certificates[i]
		if ref == c.Namespace+"/"+c.Name {
			return c
		}
	}
	return nil
}

// issuerFor resolves a Certificate's issuerRef to a namespaced Issuer in the
// render (the chain must not depend on anything outside it).
func (r *deployRender) issuerFor(t *testing.T, where string, ref cmmeta.IssuerReference) *cmv1.Issuer {
	t.Helper()
	if (ref.Kind != "" && ref.Kind != cmv1.IssuerKind) || (ref.Group != "" && ref.Group != "cert-manager.io") {
		t.Errorf("%s: issuerRef is %s.%s %s, want a cert-manager.io Issuer of this installation", where, ref.Kind, ref.Group, ref.Name)
		return nil
	}
	for i := range r.issuers {
		if r.issuers[i].Name == ref.Name {
			return &r.issuers[i]
		}
	}
	t.Errorf("%s: issuerRef names Issuer %s, which is not rendered", where, ref.Name)
	return nil
}

// deployMountAt returns the container's volume mount at path and its volume.
func deployMountAt(pod *corev1.PodSpec, c *corev1.Container, path string) (*corev1.VolumeMount, *corev1.Volume) {
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		if filepath.Clean(m.MountPath) != filepath.Clean(path) || m.SubPath != "" {
			continue
		}
		for j := range pod.Volumes {
			if pod.Volumes[j].Name == m.Name {
				return m, &pod.Volumes[j]
			}
		}
	}
	return nil, nil
}

// deployResolvePort resolves a numeric or named port of container c.
func deployResolvePort(c *corev1.Container, p intstr.IntOrString) (int, bool) {
	if p.Type == intstr.Int {
		return int(p.IntVal), p.IntVal > 0
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), true
		}
	}
	return 0, false
}

// deployAddressPort is the port of a listen address such as ":8081".
func deployAddressPort(t *testing.T, where, field, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		t.Errorf("%s: configuration %s %q has no port", where, field, addr)
	}
	return n
}

// deployFlagValue finds "--name value" or "--name=value" in args.
func deployFlagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func deployContainers(pod *corev1.PodSpec) []corev1.Container {
	return append(slices.Clone(pod.InitContainers), pod.Containers...)
}

func deployQuantity(l corev1.ResourceList, name corev1.ResourceName) resource.Quantity {
	return l[name]
}

// deployDeref prints unset pointers as <unset>, not as an address.
func deployDeref[T any](p *T) any {
	if p == nil {
		return "<unset>"
	}
	return *p
}

// deployOverridesRBACDir grants component-overrides read access to the
// operator namespace's workloads; it is applied once that namespace exists.
const deployOverridesRBACDir = "../deploy/overrides-rbac"

// TestDeployOverridesRBAC: exactly get/list/watch on Deployments and
// DaemonSets for gatehouse's and the audit's ServiceAccounts (both review
// through component-overrides), and get/list of the override ConfigMap by
// name for the audit's alone, in the operator namespace only.
func TestDeployOverridesRBAC(t *testing.T) {
	objs, err := localcluster.Render(deployOverridesRBACDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := configv1alpha1.Default()
	webhookSA := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "gatehouse", Namespace: "gatehouse-system"}
	auditSA := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "gatehouse-audit", Namespace: "gatehouse-system"}
	wantRules := map[string][]rbacv1.PolicyRule{
		"gatehouse-workload-reader": {{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments"}, Verbs: []string{"get", "list", "watch"}}},
		"gatehouse-audit-overrides": {{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{cfg.Overrides.ConfigMapName}, Verbs: []string{"get", "list"}}},
	}
	wantSubjects := map[string][]rbacv1.Subject{"gatehouse-workload-reader": {webhookSA, auditSA}, "gatehouse-audit-overrides": {auditSA}}
	var roles, bindings int
	for _, obj := range objs {
		if obj.GetNamespace() != cfg.Overrides.Namespace {
			t.Errorf("%s %s is in %q, want the operator namespace %q", obj.GetKind(), obj.GetName(), obj.GetNamespace(), cfg.Overrides.Namespace)
		}
		switch obj.GetKind() {
		case "Role":
			roles++
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
				t.Fatal(err)
			}
			if want, ok := wantRules[role.Name]; !ok || !reflect.DeepEqual(role.Rules, want) {
				t.Errorf("Role %s grants %v, want exactly %v", role.Name, role.Rules, want)
			}
		case "RoleBinding":
			bindings++
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &b); err != nil {
				t.Fatal(err)
			}
			if want, ok := wantSubjects[b.Name]; !ok || !reflect.DeepEqual(b.Subjects, want) || b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: b.Name}) {
				t.Errorf("RoleBinding %s/%s binds %+v to %+v, want %+v to Role %s", b.Namespace, b.Name, b.Subjects, b.RoleRef, want, b.Name)
			}
		default:
			t.Errorf("unexpected %s %s", obj.GetKind(), obj.GetName())
		}
	}
	if roles != 2 || bindings != 2 {
		t.Errorf("%d Roles and %d RoleBindings, want two each", roles, bindings)
	}
}

// TestDeployLeaderElectionRole: the Lease access of the reconciler and of
// the audit is exactly get/create/update on leases in gatehouse's
// namespace, bound to each one's ServiceAccount, and the Deployment turns
// the reconciler on.
func TestDeployLeaderElectionRole(t *testing.T) {
	r := renderDeploy(t, deployDefaultDir)
	want := []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}}
	if len(r.roles) != 1 || !reflect.DeepEqual(r.roles[0].Rules, want) || r.roles[0].Namespace != "gatehouse-system" {
		t.Fatalf("Roles %+v, want one in gatehouse-system granting %v", r.roles, want)
	}
	var bound []string
	for _, b := range r.roleBindings {
		if b.RoleRef.Name != r.roles[0].Name || len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind || b.Subjects[0].Namespace != "gatehouse-system" {
			t.Errorf("RoleBinding %s binds %+v to %+v, want one ServiceAccount of gatehouse-system to Role %s", b.Name, b.Subjects, b.RoleRef, r.roles[0].Name)
			continue
		}
		bound = append(bound, b.Subjects[0].Name)
	}
	if slices.Sort(bound); !slices.Equal(bound, []string{"gatehouse", "gatehouse-audit"}) {
		t.Fatalf("the leader election Role is bound to %v, want gatehouse's and the audit's ServiceAccounts", bound)
	}
	d := r.deployment(t)
	if d == nil || !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--reconcile-dependencygroups") {
		t.Error("the Deployment does not run the DependencyGroup status reconciler")
	}
}
