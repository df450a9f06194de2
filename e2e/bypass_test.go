package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Every way into a pod spec must meet every contract that reads pod specs:
// a Pod's CREATE, its ephemeral containers subresource, the template of each
// workload kind on CREATE and UPDATE, an object that is being deleted, and
// `gatehouse check` on List documents.

// podSpecViolation breaks one contract in a pod spec.
type podSpecViolation struct {
	webhook, code string
	apply         func(spec map[string]any)
}

// hdfsServiceAccount is what SA requires of pods the HdfsCluster "prod"
// controls in the default configuration: the account hdfs-operator 0.3.0
// gives them (the Released preset).
const hdfsServiceAccount = "prod-sa"

var podSpecViolations = []podSpecViolation{
	{webhook: "secret-scope", code: "ScopeEntryEmpty", apply: func(spec map[string]any) {
		volumes, _ := spec["volumes"].([]any)
		spec["volumes"] = append(volumes, map[string]any{"name": "scoped", "ephemeral": map[string]any{
			"volumeClaimTemplate": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{
					"secrets.kubedoop.dev/class": "tls", "secrets.kubedoop.dev/scope": "pod,,node",
				}},
				"spec": map[string]any{
					"accessModes": []any{"ReadWriteOnce"},
					"resources":   map[string]any{"requests": map[string]any{"storage": "1Mi"}},
				},
			},
		}})
	}},
	{webhook: "service-account", code: "ServiceAccountMismatch", apply: func(spec map[string]any) {
		spec["serviceAccountName"] = "cluster-admin-sa"
	}},
	{webhook: "pod-security", code: "RunAsRootConflict", apply: func(spec map[string]any) {
		containers, _ := spec["containers"].([]any)
		c, _ := containers[0].(map[string]any)
		sc, _ := c["securityContext"].(map[string]any)
		sc["runAsUser"] = int64(0)
	}},
}

// ownedSample is the sample of kind k, controlled by the HdfsCluster "prod"
// and running as its operator's ServiceAccount, so that SA applies to it.
func ownedSample(t *testing.T, k workload.Kind, ns, name string) (*unstructured.Unstructured, workload.Pod) {
	t.Helper()
	obj := sampleObject(t, k.Resource.GroupResource(), ns, name)
	obj.SetOwnerReferences([]metav1.OwnerReference{prodController()})
	pod, ok := workload.PodOf(obj.GroupVersionKind().GroupKind(), obj.Object)
	if !ok {
		t.Fatalf("the %s sample has no pod spec", k.Kind)
	}
	pod.Spec["serviceAccountName"] = hdfsServiceAccount
	return obj, pod
}

// expectDenial checks that err is webhook's denial with code at a field
// under the pod spec.
func expectDenial(t *testing.T, what string, err error, v podSpecViolation, specPath *field.Path) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted, want %s to deny %s", what, v.webhook, v.code)
		return
	}
	webhook, causes := liveCauses(t, err)
	ok := webhook == v.webhook
	for _, c := range causes {
		code, path, _ := strings.Cut(c, "@")
		ok = ok && code == v.code && strings.HasPrefix(path, specPath.String()+".")
	}
	if !ok {
		t.Errorf("%s: denied by %s with %v, want %s %s under %s", what, webhook, causes, v.webhook, v.code, specPath)
	}
}

// bypassNamespace is an opted-in namespace with the ServiceAccounts the
// pods name (the ServiceAccount admission plugin requires them).
func bypassNamespace(t *testing.T, e *env, seed string) string {
	t.Helper()
	ns := testNamespace(t, e, seed, nil, optInLabel)
	for _, name := range []string{hdfsServiceAccount, "cluster-admin-sa"} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := e.client.Create(context.Background(), sa); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return ns
}

// immutableTemplate holds the kinds whose pod template the API server
// itself refuses to change after creation; an UPDATE of it never reaches an
// admission webhook.
var immutableTemplate = map[string]bool{"Job": true}

// TestEveryWorkloadKindOnCreateAndUpdate breaks each pod-spec contract in
// every kind that runs pods: on CREATE, and on UPDATE of a stored, compliant
// object's template.
func TestEveryWorkloadKindOnCreateAndUpdate(t *testing.T) {
	// Every validating webhook that reads pods must have its violation in
	// the table, so a new pod-spec contract cannot skip these paths.
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for _, def := range route.Registry() {
		if def.Type == route.Validating && def.Intercept.Matches(admissionregistrationv1.Create, pods, "", serverOptions()) &&
			!slices.ContainsFunc(podSpecViolations, func(v podSpecViolation) bool { return v.webhook == def.Name }) {
			t.Errorf("validating webhook %s reads pods but has no entry in podSpecViolations", def.Name)
		}
	}
	e := requireCluster(t)
	ctx := context.Background()
	ns := bypassNamespace(t, e, t.Name())
	for _, k := range workload.Kinds() {
		t.Run(k.Kind, func(t *testing.T) {
			base, _ := ownedSample(t, k, ns, "bypass-"+strings.ToLower(k.Kind))
			for _, v := range podSpecViolations {
				obj, pod := ownedSample(t, k, ns, base.GetName())
				v.apply(pod.Spec)
				expectDenial(t, "CREATE "+v.webhook, e.client.Create(ctx, obj, client.DryRunAll), v, pod.SpecPath)
			}
			if len(k.Template) == 0 {
				return // a Pod's spec is immutable but for ephemeral containers (below)
			}
			if err := e.client.Create(ctx, base.DeepCopy()); err != nil {
				t.Fatalf("the compliant %s was refused: %v", k.Kind, err)
			}
			for _, v := range podSpecViolations {
				stored := &unstructured.Unstructured{}
				stored.SetGroupVersionKind(base.GroupVersionKind())
				if err := e.client.Get(ctx, client.ObjectKeyFromObject(base), stored); err != nil {
					t.Fatal(err)
				}
				pod, _ := workload.PodOf(stored.GroupVersionKind().GroupKind(), stored.Object)
				v.apply(pod.Spec)
				err := e.client.Update(ctx, stored, client.DryRunAll)
				if immutableTemplate[k.Kind] {
					if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
						t.Errorf("UPDATE %s: the API server should refuse to change the template, got %v", v.webhook, err)
					}
					continue
				}
				expectDenial(t, "UPDATE "+v.webhook, err, v, pod.SpecPath)
			}
		})
	}
}

// TestObjectsBeingDeletedGetNoExemption deletes objects held by a finalizer
// (so they carry a deletionTimestamp) and changes them: each contract still
// applies, and removing the finalizer still works.
func TestObjectsBeingDeletedGetNoExemption(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	ns := bypassNamespace(t, e, t.Name())
	const finalizer = "e2e.gatehouse.dev/hold"

	k, _ := workload.Lookup(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	deployment, _ := ownedSample(t, k, ns, "terminating")
	claim := pvc(ns, "terminating", "pod")
	for _, obj := range []client.Object{deployment, claim} {
		obj.SetFinalizers([]string{finalizer})
		if err := e.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := e.client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeFinalizers(t, e, obj) })
	}

	for _, v := range podSpecViolations {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(deployment.GroupVersionKind())
		if err := e.client.Get(ctx, client.ObjectKeyFromObject(deployment), stored); err != nil {
			t.Fatal(err)
		}
		if stored.GetDeletionTimestamp() == nil {
			t.Fatal("the Deployment has no deletionTimestamp")
		}
		pod, _ := workload.PodOf(stored.GroupVersionKind().GroupKind(), stored.Object)
		v.apply(pod.Spec)
		expectDenial(t, "terminating Deployment "+v.webhook, e.client.Update(ctx, stored, client.DryRunAll), v, pod.SpecPath)
	}

	var storedClaim corev1.PersistentVolumeClaim
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(claim), &storedClaim); err != nil {
		t.Fatal(err)
	}
	storedClaim.Annotations["secrets.kubedoop.dev/scope"] = "pod,,node"
	webhook, causes := liveCauses(t, e.client.Update(ctx, &storedClaim, client.DryRunAll))
	if webhook != "secret-scope" || strings.Join(causes, " ") != "ScopeEntryEmpty@metadata.annotations[secrets.kubedoop.dev/scope]" {
		t.Errorf("terminating PVC: %s %v", webhook, causes)
	}

	for _, obj := range []client.Object{deployment, claim} {
		removeFinalizers(t, e, obj)
		if err := e.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%s is still there after its finalizer was removed: %v", obj.GetName(), err)
		}
	}
}

func removeFinalizers(t *testing.T, e *env, obj client.Object) {
	t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if err := e.client.Patch(context.Background(), obj, client.RawPatch("application/merge-patch+json", patch)); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing the finalizer of %s: %v", obj.GetName(), err)
	}
}

// TestEphemeralContainers adds ephemeral containers to a running pod and to
// one being deleted, the one way to change a stored pod's containers: PSC
// judges each new container; the subresource cannot carry other changes
// (the API server keeps only ephemeralContainers from the request), which
// is why SCOPE and SA do not intercept it.
func TestEphemeralContainers(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	ns := bypassNamespace(t, e, t.Name())
	const finalizer = "e2e.gatehouse.dev/hold"

	running := plainPod(ns, "running")
	running.Spec.ServiceAccountName = hdfsServiceAccount
	terminating := plainPod(ns, "terminating")
	terminating.Finalizers = []string{finalizer}
	for _, p := range []*corev1.Pod{running, terminating} {
		if err := e.client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeFinalizers(t, e, p) })
	}
	if err := e.client.Delete(ctx, terminating); err != nil {
		t.Fatal(err)
	}

	for _, p := range []*corev1.Pod{running, terminating} {
		if err := e.client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		root := p.DeepCopy()
		root.Spec.EphemeralContainers = append(root.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug-root", Image: "registry.example/debug:1",
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)},
			},
		})
		webhook, causes := liveCauses(t, e.client.SubResource("ephemeralcontainers").Update(ctx, root))
		if webhook != "pod-security" || strings.Join(causes, " ") != "RunAsRootConflict@spec.ephemeralContainers[0].securityContext.runAsUser" {
			t.Errorf("%s: a root ephemeral container: %s %v", p.Name, webhook, causes)
		}
	}

	// Other changes sent through the subresource are dropped, not stored.
	smuggle := running.DeepCopy()
	smuggle.Spec.ServiceAccountName = "cluster-admin-sa"
	smuggle.Spec.Volumes = append(smuggle.Spec.Volumes, corev1.Volume{Name: "smuggled", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	smuggle.Spec.EphemeralContainers = append(smuggle.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "registry.example/debug:1"},
	})
	err := e.client.SubResource("ephemeralcontainers").Update(ctx, smuggle)
	var stored corev1.Pod
	if getErr := e.client.Get(ctx, client.ObjectKeyFromObject(running), &stored); getErr != nil {
		t.Fatal(getErr)
	}
	if stored.Spec.ServiceAccountName != hdfsServiceAccount || len(stored.Spec.Volumes) != len(running.Spec.Volumes) {
		t.Errorf("a change beside ephemeralContainers was stored through the subresource (update error: %v)", err)
	}
	if err == nil {
		if len(stored.Spec.EphemeralContainers) != 1 || stored.Spec.EphemeralContainers[0].SecurityContext == nil ||
			stored.Spec.EphemeralContainers[0].SecurityContext.RunAsNonRoot == nil {
			t.Errorf("the admitted ephemeral container was not defaulted by pod-security-defaults")
		}
	}
}

// checkExit runs `gatehouse check -o json` on files and returns its exit
// code and the denied webhooks per object ("Kind ns/name").
func checkExit(t *testing.T, args ...string) (int, map[string][]string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := app.Main(append([]string{"check", "-o", "json"}, args...), strings.NewReader(""), &stdout, &stderr)
	denied := map[string][]string{}
	if code != 2 {
		var out struct {
			Results []app.CheckResult `json:"results"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Results {
			if !r.Allowed {
				key := fmt.Sprintf("%s %s/%s", r.Object.Kind, r.Object.Namespace, r.Object.Name)
				for _, f := range r.Findings {
					denied[key] = append(denied[key], r.Webhook+" "+f.Code+"@"+f.Field)
				}
			}
		}
	}
	return code, denied, stderr.String()
}

func writeYAML(t *testing.T, name string, docs ...any) string {
	t.Helper()
	var buf bytes.Buffer
	for _, d := range docs {
		buf.WriteString("---\n")
		buf.Write(mustJSON(t, d))
		buf.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckReadsListsAsKubectlDoes: every golden fail fixture of every
// contract, wrapped in List documents the way kubectl and the API server
// write them, is denied by `gatehouse check` exactly as the same objects
// given one per document.
func TestCheckReadsListsAsKubectlDoes(t *testing.T) {
	var objects []any
	namespaces := map[string]bool{}
	for _, f := range loadFixtures(t) {
		if f.outcome != "fail" {
			continue
		}
		obj := f.object.DeepCopy()
		switch {
		case f.namespace != "":
			obj.SetNamespace(f.namespace)
		case obj.GetNamespace() == "":
			obj.SetNamespace("bypass-lists")
		}
		if f.optIn && !namespaces[obj.GetNamespace()] {
			namespaces[obj.GetNamespace()] = true
			objects = append(objects, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
				"name": obj.GetNamespace(), "labels": map[string]any{"gatehouse.dev/security-defaults": "enabled"},
			}})
		}
		objects = append(objects, obj.Object)
	}
	state := []string{"--state", filepath.Join(repo, "deploy", "examples", "00-operator-workloads.yaml")}
	code, want, stderr := checkExit(t, append(state, "-f", writeYAML(t, "documents.yaml", objects...))...)
	if code != 1 || len(want) == 0 {
		t.Fatalf("the fail fixtures as documents: exit %d, %d denied: %s", code, len(want), stderr)
	}
	webhooksDenying := map[string]bool{}
	for _, causes := range want {
		for _, c := range causes {
			webhooksDenying[strings.Fields(c)[0]] = true
		}
	}
	for _, c := range contracts {
		if !webhooksDenying[c.webhook] {
			t.Errorf("no fail fixture denied by %s: the comparison below would prove nothing for it", c.webhook)
		}
	}

	// typedItems strips apiVersion and kind from items, as the API server
	// writes a PodList; kubectl infers them from the list's kind.
	typedList := func(kind string, items []any) map[string]any {
		var stripped []any
		for _, it := range items {
			m := map[string]any{}
			for k, v := range it.(map[string]any) {
				if k != "apiVersion" && k != "kind" {
					m[k] = v
				}
			}
			stripped = append(stripped, m)
		}
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{}, "items": stripped}
	}
	var pvcs []any
	var pvcWant = map[string][]string{}
	for _, o := range objects {
		if m := o.(map[string]any); m["kind"] == "PersistentVolumeClaim" {
			pvcs = append(pvcs, m)
			u := unstructured.Unstructured{Object: m}
			key := fmt.Sprintf("PersistentVolumeClaim %s/%s", u.GetNamespace(), u.GetName())
			pvcWant[key] = want[key]
		}
	}
	if len(pvcs) == 0 {
		t.Fatal("no PersistentVolumeClaim among the fail fixtures for the typed list case")
	}

	cases := []struct {
		name string
		docs []any
		want map[string][]string
		// rule names how kubectl reads the document, where it is not plain.
		rule string
	}{
		{name: "v1 List", docs: []any{map[string]any{"apiVersion": "v1", "kind": "List", "items": objects}}, want: want},
		{name: "one List per object", docs: func() []any {
			var out []any
			for _, o := range objects {
				out = append(out, map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": []any{o}})
			}
			return out
		}(), want: want},
		{name: "typed list whose items carry no apiVersion and kind", docs: []any{typedList("PersistentVolumeClaimList", pvcs)}, want: pvcWant,
			rule: "an item without apiVersion and kind takes the list's apiVersion and its kind minus the List suffix (unstructured.UnstructuredList decoding)"},
		{name: "List nested in a List", docs: []any{map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{
			map[string]any{"apiVersion": "v1", "kind": "List", "items": objects},
		}}}, want: want,
			rule: "items that are lists themselves are unwrapped recursively (kubectl's FlattenListVisitor)"},
		{name: "a document of any kind with an items array", docs: []any{map[string]any{"apiVersion": "v1", "kind": "Bundle", "items": objects}}, want: want,
			rule: "any document with an items field is a list, whatever its kind (unstructured's JSON scheme decodes it as UnstructuredList)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, got, stderr := checkExit(t, append(state, "-f", writeYAML(t, "lists.yaml", c.docs...))...)
			if code != 1 || mustString(t, got) != mustString(t, c.want) {
				t.Errorf("exit %d, denials %v, want exit 1 with %v (%s); the rule: %s", code, got, c.want, stderr, c.rule)
			}
		})
	}
}

func mustString(t *testing.T, v any) string {
	t.Helper()
	return string(mustJSON(t, v))
}
