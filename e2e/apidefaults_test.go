package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatehouse-dev/gatehouse/e2e/localcluster"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
)

// unselectedNamespace is a namespace that no gatehouse webhook selects
// (deploy/ excludes it by name), so a dry run there returns the object as
// the API server itself leaves it.
const unselectedNamespace = "kube-system"

// builtinCorpus is every object of a built-in kind in the golden corpus
// (policies/*/testdata, state files included) and deploy/examples, named by
// file and document.
func builtinCorpus(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	var files []string
	for _, glob := range []string{"policies/*/testdata/*/*.yaml", "policies/*/testdata/*.yaml", "deploy/examples/*.yaml"} {
		found, err := filepath.Glob(filepath.Join(repo, glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := localcluster.DecodeManifests(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, obj := range objs {
			if apidefaults.IsBuiltin(obj.GroupVersionKind()) {
				rel, _ := filepath.Rel(repo, f)
				out[fmt.Sprintf("%s#%d", rel, i+1)] = obj
			}
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d built-in objects in the corpus; the comparison would prove little", len(out))
	}
	return out
}

// TestCheckDefaultsEqualTheAPIServers is the differential proof of
// webhooks/apidefaults: every built-in object of the corpus is created with
// dryRun=All in a namespace no gatehouse webhook selects, and the object the
// API server returns must equal what `gatehouse check` hands its webhooks
// (apidefaults.PreAdmission), apart from what the server sets after
// admission or by its admission plugins (normalizeServerObject).
func TestCheckDefaultsEqualTheAPIServers(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	corpus := builtinCorpus(t)
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	sort.Strings(names)
	kinds := map[string]int{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in := corpus[name].DeepCopy()
			if in.GetNamespace() != "" || namespaced(in.GetKind()) {
				in.SetNamespace(unselectedNamespace)
			}
			// Ephemeral containers cannot be created with a pod; they
			// are compared through their subresource below.
			ephemeral, hasEphemeral, _ := unstructured.NestedSlice(in.Object, "spec", "ephemeralContainers")
			unstructured.RemoveNestedField(in.Object, "spec", "ephemeralContainers")
			ensureServiceAccounts(t, e, in)

			want, err := apidefaults.PreAdmission(in.DeepCopy().Object)
			if err != nil {
				t.Fatalf("check refuses it: %v", err)
			}
			server := in.DeepCopy()
			if err := e.client.Create(ctx, server, client.DryRunAll); err != nil {
				// A fixture that is valid only once gatehouse's mutation
				// filled it in (a seccompProfile without type) is refused
				// by the API server's validation here: nothing to compare.
				if apierrors.IsInvalid(err) && refusedWithoutMutation[name] {
					t.Skipf("valid only after gatehouse's mutation: %v", err)
				}
				t.Fatalf("the API server refuses it: %v", err)
			}
			got := normalizeServerObject(in.Object, server.Object)
			if diff := cmp.Diff(normalizeNumbers(comparable(want)), normalizeNumbers(got)); diff != "" {
				t.Errorf("check's object (-) differs from the API server's (+):\n%s", diff)
			}
			kinds[in.GetKind()]++
			if hasEphemeral {
				compareEphemeralContainers(t, e, in, ephemeral)
			}
		})
	}
	t.Logf("compared %d objects: %v", len(names), kinds)
}

// compareEphemeralContainers creates the pod for real (in the unselected
// namespace, so nothing else judges it), adds its ephemeral containers
// through their subresource as a dry run, and compares the containers the
// server returns with check's.
func compareEphemeralContainers(t *testing.T, e *env, in *unstructured.Unstructured, ephemeral []any) {
	t.Helper()
	ctx := context.Background()
	pod := in.DeepCopy()
	pod.SetName(pod.GetName() + "-ephemeral")
	pod.SetResourceVersion("")
	if err := e.client.Create(ctx, pod); err != nil {
		t.Fatalf("creating the pod for its ephemeral containers: %v", err)
	}
	t.Cleanup(func() { _ = e.client.Delete(context.Background(), pod) })
	withEphemeral := in.DeepCopy()
	if err := unstructured.SetNestedSlice(withEphemeral.Object, ephemeral, "spec", "ephemeralContainers"); err != nil {
		t.Fatal(err)
	}
	want, err := apidefaults.PreAdmission(withEphemeral.Object)
	if err != nil {
		t.Fatalf("check refuses the pod with its ephemeral containers: %v", err)
	}
	if err := unstructured.SetNestedSlice(pod.Object, ephemeral, "spec", "ephemeralContainers"); err != nil {
		t.Fatal(err)
	}
	if err := e.client.SubResource("ephemeralcontainers").Update(ctx, pod, client.DryRunAll); err != nil {
		t.Fatalf("the API server refuses the ephemeral containers: %v", err)
	}
	got, _, _ := unstructured.NestedSlice(pod.Object, "spec", "ephemeralContainers")
	wantList := localcluster.Lookup(want, []string{"spec", "ephemeralContainers"})
	if diff := cmp.Diff(normalizeNumbers(wantList), normalizeNumbers(got)); diff != "" {
		t.Errorf("ephemeral containers: check's (-) differ from the API server's (+):\n%s", diff)
	}
}

// refusedWithoutMutation are corpus objects that the API server accepts only
// after pod-security-defaults filled them in.
var refusedWithoutMutation = map[string]bool{
	"policies/podsecurity/testdata/pass/pod-seccomp-without-type.yaml#1": true,
}

func namespaced(kind string) bool {
	switch kind {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "Node", "StorageClass", "PriorityClass":
		return false
	}
	return true
}

// ensureServiceAccounts creates the ServiceAccounts the object's pods run
// as in the unselected namespace: the ServiceAccount admission plugin
// refuses a pod whose account does not exist.
func ensureServiceAccounts(t *testing.T, e *env, obj *unstructured.Unstructured) {
	t.Helper()
	if obj.GetKind() != "Pod" || obj.GetNamespace() == "" {
		return
	}
	accounts := []string{"default"}
	for _, f := range []string{"serviceAccountName", "serviceAccount"} {
		if name, ok, _ := unstructured.NestedString(obj.Object, "spec", f); ok && name != "" {
			accounts = append(accounts, name)
		}
	}
	for _, name := range accounts {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
		if err := e.client.Create(context.Background(), sa); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// comparable drops from check's object what the comparison leaves out on
// both sides: the status (the server resets it when it stores an object)
// and the DaemonSet template generation annotation (the server sets it to 1
// after mutating admission; webhooks are sent 0).
func comparable(obj map[string]any) map[string]any {
	out := (&unstructured.Unstructured{Object: obj}).DeepCopy().Object
	delete(out, "status")
	dropAnnotation(out, "deprecated.daemonset.template.generation")
	return out
}

// normalizeServerObject removes from the object the API server returned what
// it sets itself after mutating admission (uid, timestamps, resourceVersion,
// managedFields, generation, status; a Namespace's "kubernetes" finalizer; a
// Job's generated selector and its labels) and what its admission plugins
// add before webhooks (ServiceAccount: the default account and the
// kube-api-access volume; DefaultTolerationSeconds; Priority;
// StorageObjectInUseProtection's PVC finalizer), which is not defaulting and
// which `gatehouse check` does not claim to reproduce. Each is removed only
// where the input did not state it.
func normalizeServerObject(in, server map[string]any) map[string]any {
	out := comparable(server)
	for _, f := range []string{"uid", "creationTimestamp", "resourceVersion", "managedFields", "generation"} {
		unstructured.RemoveNestedField(out, "metadata", f)
	}
	spec, _ := out["spec"].(map[string]any)
	inSpec, _ := in["spec"].(map[string]any)
	switch kind, _ := out["kind"].(string); kind {
	case "Namespace":
		if inSpec["finalizers"] == nil {
			delete(spec, "finalizers")
		}
	case "PersistentVolumeClaim":
		if _, ok, _ := unstructured.NestedSlice(in, "metadata", "finalizers"); !ok {
			unstructured.RemoveNestedField(out, "metadata", "finalizers")
		}
	case "Job":
		if inSpec["selector"] == nil {
			delete(spec, "selector")
			labels, _, _ := unstructured.NestedMap(out, "spec", "template", "metadata", "labels")
			inLabels, _, _ := unstructured.NestedMap(in, "spec", "template", "metadata", "labels")
			for _, k := range []string{"batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", "controller-uid", "job-name"} {
				if _, stated := inLabels[k]; !stated {
					delete(labels, k)
				}
			}
			if len(labels) == 0 {
				unstructured.RemoveNestedField(out, "spec", "template", "metadata", "labels")
			} else {
				_ = unstructured.SetNestedMap(out, labels, "spec", "template", "metadata", "labels")
			}
		}
	case "Pod":
		normalizePodPlugins(inSpec, spec)
	}
	return out
}

func normalizePodPlugins(inSpec, spec map[string]any) {
	if inSpec["serviceAccountName"] == nil && inSpec["serviceAccount"] == nil && spec["serviceAccountName"] == "default" {
		delete(spec, "serviceAccountName")
		delete(spec, "serviceAccount")
	}
	for _, f := range []string{"priority", "preemptionPolicy"} {
		if inSpec[f] == nil {
			delete(spec, f)
		}
	}
	if tolerations, ok := spec["tolerations"].([]any); ok {
		kept := []any{}
		for _, tol := range tolerations {
			m, _ := tol.(map[string]any)
			key, _ := m["key"].(string)
			if (key == "node.kubernetes.io/not-ready" || key == "node.kubernetes.io/unreachable") && !stated(inSpec["tolerations"], key) {
				continue
			}
			kept = append(kept, tol)
		}
		setOrDelete(spec, "tolerations", kept)
	}
	// The plugin's volume and mounts: a kube-api-access-* name the input
	// did not use (proxy fixtures state one, as the plugin leaves it).
	inVolumes := map[string]bool{}
	for _, v := range asList(inSpec["volumes"]) {
		name, _ := v.(map[string]any)["name"].(string)
		inVolumes[name] = true
	}
	added := func(item any) bool {
		name, _ := item.(map[string]any)["name"].(string)
		return strings.HasPrefix(name, "kube-api-access-") && !inVolumes[name]
	}
	if volumes, ok := spec["volumes"].([]any); ok {
		setOrDelete(spec, "volumes", without(volumes, added))
	}
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range asList(spec[list]) {
			cm := c.(map[string]any)
			if mounts, ok := cm["volumeMounts"].([]any); ok {
				setOrDelete(cm, "volumeMounts", without(mounts, added))
			}
		}
	}
}

func asList(v any) []any {
	list, _ := v.([]any)
	return list
}

func without(list []any, drop func(any) bool) []any {
	kept := []any{}
	for _, item := range list {
		if !drop(item) {
			kept = append(kept, item)
		}
	}
	return kept
}

func setOrDelete(m map[string]any, key string, list []any) {
	if len(list) == 0 {
		delete(m, key)
	} else {
		m[key] = list
	}
}

func stated(tolerations any, key string) bool {
	list, _ := tolerations.([]any)
	for _, t := range list {
		if m, _ := t.(map[string]any); m["key"] == key {
			return true
		}
	}
	return false
}

func dropAnnotation(obj map[string]any, key string) {
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	delete(annotations, key)
	if annotations != nil && len(annotations) == 0 {
		delete(meta, "annotations")
	}
}
