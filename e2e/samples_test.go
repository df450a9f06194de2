package e2e

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// The failure and bypass tests iterate the registry: for each webhook they
// need an object it intercepts. sampleBuilders holds one minimal valid object per
// resource the registry names; a webhook that intercepts a resource missing
// here fails the tests by name, so a new webhook cannot go untested.

// restrictedPodSpec is a pod spec that meets the restricted Pod Security
// Standard (gatehouse-system enforces it) and carries every PSC default.
func restrictedPodSpec(restartPolicy string) map[string]any {
	spec := map[string]any{
		"securityContext": map[string]any{
			"runAsNonRoot": true, "runAsUser": int64(1001), "runAsGroup": int64(0), "fsGroup": int64(1001),
			"fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": map[string]any{"type": "RuntimeDefault"},
		},
		"containers": []any{map[string]any{
			"name": "app", "image": "registry.example/app:1",
			"securityContext": map[string]any{
				"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}},
				"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
		}},
	}
	if restartPolicy != "" {
		spec["restartPolicy"] = restartPolicy
	}
	return spec
}

// podTemplate is a pod template labelled app=<name>.
func podTemplate(name, restartPolicy string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": name}},
		"spec":     restrictedPodSpec(restartPolicy),
	}
}

func matchApp(name string) map[string]any {
	return map[string]any{"matchLabels": map[string]any{"app": name}}
}

// sampleBuilders builds, per group and resource, the apiVersion, kind and body of a
// minimal valid object named name.
var sampleBuilders = map[schema.GroupResource]func(name string) (apiVersion, kind string, body map[string]any){
	// A valid ClusterException (the suite's gatehouse honours no
	// namespaced Exceptions): one code for one pod, for an hour.
	{Group: "gatehouse.dev", Resource: "clusterexceptions"}: func(string) (string, string, map[string]any) {
		return "gatehouse.dev/v1alpha1", "ClusterException", map[string]any{"spec": map[string]any{
			"match":    []any{map[string]any{"namespaces": []any{"team-a"}, "names": []any{"web"}}},
			"webhooks": []any{"secret-scope"}, "codes": []any{"ScopeEntryEmpty"}, "reason": "e2e sample",
			"expires": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		}}
	},
	{Resource: "pods"}: func(string) (string, string, map[string]any) {
		return "v1", "Pod", map[string]any{"spec": restrictedPodSpec("")}
	},
	{Resource: "podtemplates"}: func(name string) (string, string, map[string]any) {
		return "v1", "PodTemplate", map[string]any{"template": podTemplate(name, "")}
	},
	{Resource: "replicationcontrollers"}: func(name string) (string, string, map[string]any) {
		return "v1", "ReplicationController", map[string]any{"spec": map[string]any{
			"selector": map[string]any{"app": name}, "template": podTemplate(name, ""),
		}}
	},
	{Group: "apps", Resource: "deployments"}: func(name string) (string, string, map[string]any) {
		return "apps/v1", "Deployment", map[string]any{"spec": map[string]any{"selector": matchApp(name), "template": podTemplate(name, "")}}
	},
	{Group: "apps", Resource: "statefulsets"}: func(name string) (string, string, map[string]any) {
		return "apps/v1", "StatefulSet", map[string]any{"spec": map[string]any{"selector": matchApp(name), "template": podTemplate(name, "")}}
	},
	{Group: "apps", Resource: "daemonsets"}: func(name string) (string, string, map[string]any) {
		return "apps/v1", "DaemonSet", map[string]any{"spec": map[string]any{"selector": matchApp(name), "template": podTemplate(name, "")}}
	},
	{Group: "apps", Resource: "replicasets"}: func(name string) (string, string, map[string]any) {
		return "apps/v1", "ReplicaSet", map[string]any{"spec": map[string]any{"selector": matchApp(name), "template": podTemplate(name, "")}}
	},
	{Group: "batch", Resource: "jobs"}: func(name string) (string, string, map[string]any) {
		return "batch/v1", "Job", map[string]any{"spec": map[string]any{"template": podTemplate(name, "Never")}}
	},
	{Group: "batch", Resource: "cronjobs"}: func(name string) (string, string, map[string]any) {
		return "batch/v1", "CronJob", map[string]any{"spec": map[string]any{
			"schedule": "@daily", "jobTemplate": map[string]any{"spec": map[string]any{"template": podTemplate(name, "Never")}},
		}}
	},
	{Resource: "configmaps"}: func(string) (string, string, map[string]any) {
		return "v1", "ConfigMap", map[string]any{"data": map[string]any{"o.yaml": "apiVersion: overrides.unbounded-cloud.io/v1alpha1\noverrides: []\n"}}
	},
	{Resource: "persistentvolumeclaims"}: func(string) (string, string, map[string]any) {
		return "v1", "PersistentVolumeClaim", map[string]any{"spec": map[string]any{
			"accessModes": []any{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": "1Mi"}},
		}}
	},
	{Group: "helmetica.io", Resource: "dependencygroups"}: func(name string) (string, string, map[string]any) {
		return "helmetica.io/v1", "DependencyGroup", map[string]any{"spec": map[string]any{
			"crds": []any{map[string]any{"name": name + ".samples.example.com"}},
		}}
	},
	{Group: "helmetica.io", Resource: "customresourcedefinitionsources"}: func(name string) (string, string, map[string]any) {
		ref := []any{map[string]any{"dependencyGroup": map[string]any{"name": name}}}
		return "helmetica.io/v1", "CustomResourceDefinitionSource", map[string]any{"spec": map[string]any{
			"reference": map[string]any{"kind": "OCIRepository", "name": name},
			"manages":   ref, "provides": ref,
		}}
	},
	{Group: "helmetica.io", Resource: "operatorharnesses"}: func(name string) (string, string, map[string]any) {
		return "helmetica.io/v1", "OperatorHarness", map[string]any{"spec": map[string]any{
			"scopeToLabel": "requires.samples.example.com/helmetica-" + name,
			"operator":     map[string]any{"namespace": name, "serviceAccounts": []any{"helmetica-" + name}},
		}}
	},
	{Group: "vshn.net", Resource: "operatorharnesses"}: func(name string) (string, string, map[string]any) {
		return "vshn.net/v1", "OperatorHarness", map[string]any{"spec": map[string]any{
			"scopeToLabel": "requires.samples.example.com/" + name,
			"operator":     map[string]any{"namespace": name, "serviceAccounts": []any{name}},
		}}
	},
	// The product custom resource of e2e/testdata/crds, for webhooks that
	// intercept product groups.
	{Group: "hdfs.kubedoop.dev", Resource: "hdfsclusters"}: func(string) (string, string, map[string]any) {
		return "hdfs.kubedoop.dev/v1alpha1", "HdfsCluster", map[string]any{"spec": map[string]any{}}
	},
}

// actedOn makes obj one that def's evaluator acts on, where def narrows what
// it receives by content (docs/contracts.md §10): secret-scope receives only
// objects with secrets.kubedoop.dev/ annotations, service-account only Pods
// and workloads a product controls. The object stays valid: a secret
// volume of the "tls" class, or the HdfsCluster "prod" as controller (whose
// derived ServiceAccount the pod does not run as, so that service-account
// denies it when up: the tests using this ask only that it decides).
func actedOn(t *testing.T, def route.Definition, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	secret := map[string]any{"secrets.kubedoop.dev/class": "tls"}
	switch def.Name {
	case "secret-scope":
		if obj.GetKind() == "PersistentVolumeClaim" {
			obj.SetAnnotations(map[string]string{"secrets.kubedoop.dev/class": "tls"})
			return obj
		}
		if pod, ok := workload.PodOf(obj.GroupVersionKind().GroupKind(), obj.Object); ok {
			volumes, _ := pod.Spec["volumes"].([]any)
			pod.Spec["volumes"] = append(volumes, map[string]any{"name": "tls", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
				"metadata": map[string]any{"annotations": secret},
				"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "secrets.kubedoop.dev",
					"resources": map[string]any{"requests": map[string]any{"storage": "1"}}},
			}}})
		}
	case "service-account":
		if _, ok := workload.PodOf(obj.GroupVersionKind().GroupKind(), obj.Object); ok {
			obj.SetOwnerReferences([]metav1.OwnerReference{prodController()})
		}
	}
	return obj
}

// productResource is the product custom resource the samples know.
var productResource = schema.GroupVersionResource{Group: "hdfs.kubedoop.dev", Version: "v1alpha1", Resource: "hdfsclusters"}

// sampleObject returns the sample of gr named name in namespace ns (empty
// for a cluster-scoped resource).
func sampleObject(t *testing.T, gr schema.GroupResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	build, ok := sampleBuilders[gr]
	if !ok {
		t.Fatalf("no sample object for resource %s: add one to sampleBuilders in e2e/samples_test.go", gr)
	}
	apiVersion, kind, body := build(name)
	obj := &unstructured.Unstructured{Object: body}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetName(name)
	obj.SetNamespace(ns)
	return obj
}

// clusterScoped names the registry's cluster-scoped resources.
var clusterScoped = map[schema.GroupResource]bool{
	{Group: "helmetica.io", Resource: "dependencygroups"}:   true,
	{Group: "helmetica.io", Resource: "operatorharnesses"}:  true,
	{Group: "vshn.net", Resource: "operatorharnesses"}:      true,
	{Group: "gatehouse.dev", Resource: "clusterexceptions"}: true,
}

// serverOptions are the webhook options of the default configuration, which
// the suite's gatehouse runs with.
func serverOptions() route.Options {
	return route.OptionsFromConfig(configv1alpha1.Default())
}

// coveredObject is an object a webhook intercepts on CREATE, and where.
type coveredObject struct {
	gvr schema.GroupVersionResource
	// namespaceLabels must be on the object's namespace (nil: any namespace);
	// fixedNamespace/fixedName, when set, are the only object it watches.
	namespaceLabels           map[string]string
	fixedNamespace, fixedName string
	clusterScoped             bool
}

// coverOf finds, from the webhook's registry row alone, an object it
// intercepts on CREATE: its first resource that is created (not a
// subresource), or the product custom resource, in a namespace whose labels
// its fail-closed entry selects.
func coverOf(t *testing.T, def route.Definition) coveredObject {
	t.Helper()
	opts := serverOptions()
	var c coveredObject
	found := false
	for _, r := range def.Intercept.Resources {
		if r.Subresource == "" && def.Intercept.Matches(admissionregistrationv1.Create, r.GVR, "", opts) {
			c.gvr, found = r.GVR, true
			break
		}
	}
	if !found && def.Intercept.Matches(admissionregistrationv1.Create, productResource, "", opts) {
		c.gvr, found = productResource, true
	}
	if !found {
		t.Fatalf("webhook %s intercepts no resource the samples can create", def.Name)
	}
	c.clusterScoped = clusterScoped[c.gvr.GroupResource()]
	switch {
	case def.Intercept.NamespaceMatches(nil, opts):
	case def.Intercept.NamespaceMatches(optInLabel, opts):
		c.namespaceLabels = optInLabel
	default:
		t.Fatalf("webhook %s selects neither every namespace nor the opt-in label; teach coverOf its namespaces", def.Name)
	}
	if def.FailClosedOnlyInHarnessed {
		// Its fail-closed entry selects only namespaces with this label key.
		labels := map[string]string{opts.HarnessedNamespaceLabel: "true"}
		for k, v := range c.namespaceLabels {
			labels[k] = v
		}
		c.namespaceLabels = labels
	}
	if !def.Intercept.ObjectMatches("e2e-any-namespace", "e2e-any-name", opts) {
		c.fixedNamespace, c.fixedName = opts.Overrides.Namespace, opts.Overrides.ConfigMapName
		if !def.Intercept.ObjectMatches(c.fixedNamespace, c.fixedName, opts) {
			t.Fatalf("webhook %s watches an object coverOf cannot name", def.Name)
		}
	}
	return c
}

// interceptors returns the registry's webhooks that intercept a CREATE of
// gvr in a namespace with these labels, by name.
func interceptors(gvr schema.GroupVersionResource, ns, name string, labels map[string]string) map[string]route.Definition {
	opts := serverOptions()
	out := map[string]route.Definition{}
	for _, d := range route.Registry() {
		if d.Intercept.Matches(admissionregistrationv1.Create, gvr, "", opts) &&
			(ns == "" || d.Intercept.NamespaceMatches(labels, opts)) &&
			d.Intercept.ObjectMatches(ns, name, opts) {
			out[d.Name] = d
		}
	}
	return out
}

// templateKinds are the workload kinds whose pod template the contracts
// read, from the one list the policies use.
func templateKinds() []workload.Kind {
	var out []workload.Kind
	for _, k := range workload.Kinds() {
		if len(k.Template) > 0 {
			out = append(out, k)
		}
	}
	return out
}
