package webhooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/gatehouse-dev/gatehouse/api/config/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/podsecurity"
	"github.com/gatehouse-dev/gatehouse/policies/scope"
	"github.com/gatehouse-dev/gatehouse/policies/serviceaccount"
	"github.com/gatehouse-dev/gatehouse/webhooks/apidefaults"
	"github.com/gatehouse-dev/gatehouse/webhooks/render"
	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// inProcessCase is one object the in-process equivalence test admits.
type inProcessCase struct {
	where  string
	object map[string]any
}

// scopeValues are scope annotation values at every edge of the grammar
// (grammar.go, names.go), known and unknown keys, names at the length limit.
var scopeValues = []string{
	"", ",", ",,", "node", "pod", "node,pod", "pod,,node", ",pod", "pod,", "node=", "node=x", "pod=a=b",
	"service", "service=", "service=web", "service=a=b", "service=*", "service=*.web", "service=a.b", "service=Web",
	"service=1web", "service=web-", "service=-web", "service=" + strings.Repeat("a", 63), "service=" + strings.Repeat("a", 64),
	"listener-volume", "listener-volume=", "listener-volume=1a", "listener-volume=a_b", "listener-volume=" + strings.Repeat("b", 64),
	"=", "=x", "=x,pod", "foo", "foo=bar", "node,foo", "Node", "node ,pod", "service=ſ", "pod,service=web,listener-volume=lv,node",
	"service=web,service=*,=,,foo=x",
	// payloadMarker must never appear in a policy's message.
	"service=" + payloadMarker + "=x", "listener-volume=" + payloadMarker + "_", "service=" + payloadMarker + ".x",
}

// payloadMarker stands for a value of the object: names in scope entries, a
// ServiceAccount the pod states.
const payloadMarker = "zzmarkerzz"

// scopeAnnotationSets are the other annotations beside a scope value: none
// (no class), a class, the formats, and keys CEL leaves to the webhook.
var scopeAnnotationSets = []map[string]string{
	{},
	{"class": "tls"},
	{"class": ""},
	{"class": "tls", "format": "tls-pem"},
	{"class": "tls", "format": "pem"},
	{"class": "tls", "format": "tls-p12"},
	{"class": "kerberos", "format": "kerberos", "kerberosServiceNames": "HTTP", "pod-info": "x"},
	{"class": "tls", "autoTlsCertLifetime": "1h"},
	{"class": "tls", "unknown": "x"},
	{"class": "tls", "tlsPKCS12Password": "x"},
}

// generatedScopeObjects puts every scope value with every annotation set
// into each place SCOPE reads on a built-in kind.
func generatedScopeObjects() []inProcessCase {
	var out []inProcessCase
	for i, value := range append([]string{"<none>"}, scopeValues...) {
		for j, set := range scopeAnnotationSets {
			annotations := map[string]any{"team": "a"}
			for k, v := range set {
				annotations[scope.AnnotationPrefix+k] = v
			}
			if value != "<none>" {
				annotations[scope.AnnotationPrefix+"scope"] = value
			}
			volume := func() map[string]any {
				return map[string]any{"name": "tls", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
					"metadata": map[string]any{"annotations": annotations},
					"spec":     map[string]any{"storageClassName": "secrets.kubedoop.dev", "accessModes": []any{"ReadWriteOnce"}},
				}}}
			}
			podSpec := func() map[string]any {
				return map[string]any{
					"containers": []any{map[string]any{"name": "app", "image": "app"}},
					"volumes":    []any{map[string]any{"name": "plain", "emptyDir": map[string]any{}}, volume()},
				}
			}
			meta := map[string]any{"name": "gen", "namespace": "team"}
			where := fmt.Sprintf("scope value %d, annotations %d", i, j)
			out = append(out,
				inProcessCase{where + " on a PVC", map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
					"metadata": map[string]any{"name": "gen", "namespace": "team", "annotations": annotations},
					"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}}}},
				inProcessCase{where + " on a Pod", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": podSpec()}},
				inProcessCase{where + " on a CronJob", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
					"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{
						"template": map[string]any{"spec": podSpec()}}}}}},
				inProcessCase{where + " on a StatefulSet", map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta,
					"spec": map[string]any{"template": map[string]any{"spec": podSpec()}, "volumeClaimTemplates": []any{
						map[string]any{"metadata": map[string]any{"name": "data"}},
						map[string]any{"metadata": map[string]any{"name": "tls", "annotations": annotations}},
					}}}},
			)
		}
	}
	return out
}

// generatedOwnedObjects are Pods and workloads with controller
// ownerReferences of product and other kinds, names that need the hash or
// not, ServiceAccount fields equal to the derived name or not, beside a
// secret volume SCOPE allows, denies or leaves to the webhook.
func generatedOwnedObjects() []inProcessCase {
	long := strings.Repeat("n", 242)
	owners := []map[string]any{
		{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": "prod", "uid": "u1", "controller": true},
		{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": "prod", "uid": "u1"},
		{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": long, "uid": "u1", "controller": true},
		{"apiVersion": "hdfs.kubedoop.dev/v1alpha1", "kind": "HdfsCluster", "name": long[:241], "uid": "u1", "controller": true},
		{"apiVersion": "kafka.kubedoop.dev/v1alpha1", "kind": "Kafka_Cluster", "name": "prod", "uid": "u1", "controller": true},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "prod", "uid": "u1", "controller": true},
		// Products of the Released preset: each its operator's own name.
		{"apiVersion": "kafka.kubedoop.dev/v1alpha1", "kind": "KafkaCluster", "name": "prod", "uid": "u1", "controller": true},
		{"apiVersion": "zookeeper.kubedoop.dev/v1alpha1", "kind": "ZookeeperCluster", "name": "prod", "uid": "u1", "controller": true},
		{"apiVersion": "trino.kubedoop.dev/v1alpha1", "kind": "TrinoCluster", "name": "prod", "uid": "u1", "controller": true},
		{"apiVersion": "example.kubedoop.dev/v1alpha1", "kind": "ExampleCluster", "name": "prod", "uid": "u1", "controller": true},
	}
	accounts := []map[string]any{
		{}, {"serviceAccountName": "hdfscluster-prod"}, {"serviceAccountName": "other"},
		{"serviceAccountName": "hdfscluster-prod", "serviceAccount": "hdfscluster-prod"},
		{"serviceAccountName": "hdfscluster-prod", "serviceAccount": "other"}, {"serviceAccount": "other"},
		{"serviceAccountName": "hdfscluster-" + long[:241]}, {"serviceAccountName": "kafka_cluster-prod"},
		{"serviceAccountName": payloadMarker}, {"serviceAccount": payloadMarker},
		{"serviceAccountName": "prod-sa"}, {"serviceAccountName": "prod"}, {"serviceAccountName": "zookeeper"},
		{"serviceAccountName": "default"}, {"serviceAccountName": "examplecluster-prod"},
	}
	volumes := []map[string]any{
		nil,
		{scope.AnnotationPrefix + "class": "tls", scope.AnnotationPrefix + "scope": "pod,service=web"},
		{scope.AnnotationPrefix + "class": "tls", scope.AnnotationPrefix + "scope": "pod,,node"},
		{scope.AnnotationPrefix + "class": "tls", scope.AnnotationPrefix + "autoTlsCertLifetime": "1h"},
	}
	var out []inProcessCase
	for i, owner := range owners {
		for j, account := range accounts {
			for k, annotations := range volumes {
				spec := map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app"}}}
				for f, v := range account {
					spec[f] = v
				}
				if annotations != nil {
					spec["volumes"] = []any{map[string]any{"name": "tls", "ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{
						"metadata": map[string]any{"annotations": annotations}, "spec": map[string]any{}}}}}
				}
				meta := func() map[string]any {
					return map[string]any{"name": "owned", "namespace": "team", "ownerReferences": []any{owner}}
				}
				where := fmt.Sprintf("owner %d, accounts %d, volume %d", i, j, k)
				out = append(out,
					inProcessCase{where + " on a Pod", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta(), "spec": spec}},
					inProcessCase{where + " on a StatefulSet", map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(),
						"spec": map[string]any{"template": map[string]any{"spec": spec}}}},
				)
			}
		}
	}
	return out
}

// generatedPodSecurityObjects are Pods and workloads at the edges of the
// PSC guard: pod and container security contexts absent, complete, with a
// field of the defaults table missing or an empty seccomp type, with
// runAsUser 0 with and without runAsNonRoot, in init, regular and
// ephemeral containers, in user namespaces and Windows pods; each Pod also
// as the defaults leave it (the guard judges the mutated Pod).
func generatedPodSecurityObjects(d podsecurity.Defaults) []inProcessCase {
	full := func() map[string]any {
		return map[string]any{"runAsUser": int64(1001), "runAsGroup": int64(0), "fsGroup": int64(1001), "fsGroupChangePolicy": "OnRootMismatch",
			"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}}
	}
	fullContainer := func() map[string]any {
		return map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"},
			"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	pods := []func() map[string]any{
		func() map[string]any { return nil },
		full,
		func() map[string]any { return with(full(), "runAsUser", int64(0)) },
		func() map[string]any { return with(with(full(), "runAsUser", int64(0)), "runAsNonRoot", false) },
		func() map[string]any { return with(full(), "fsGroup", nil) },
		func() map[string]any { return with(full(), "seccompProfile", map[string]any{"type": ""}) },
		func() map[string]any { return map[string]any{"runAsUser": int64(0)} },
	}
	containers := []func() map[string]any{
		func() map[string]any { return nil },
		fullContainer,
		func() map[string]any { return with(fullContainer(), "runAsUser", int64(0)) },
		func() map[string]any {
			return with(with(fullContainer(), "runAsUser", int64(0)), "runAsNonRoot", false)
		},
		func() map[string]any {
			return with(fullContainer(), "capabilities", map[string]any{"add": []any{"NET_ADMIN"}})
		},
		func() map[string]any { return with(fullContainer(), "runAsNonRoot", nil) },
		func() map[string]any { return with(fullContainer(), "seccompProfile", map[string]any{"type": ""}) },
	}
	var out []inProcessCase
	for i, pod := range pods {
		for j, container := range containers {
			for _, variant := range []string{"plain", "init and ephemeral", "user namespace", "windows"} {
				spec := func() map[string]any {
					c := func(name string) map[string]any {
						out := map[string]any{"name": name, "image": "app"}
						if sc := container(); sc != nil {
							out["securityContext"] = sc
						}
						return out
					}
					s := map[string]any{"containers": []any{c("app"), map[string]any{"name": "side", "image": "side", "securityContext": fullContainer()}}}
					if sc := pod(); sc != nil {
						s["securityContext"] = sc
					}
					switch variant {
					case "init and ephemeral":
						s["initContainers"] = []any{c("init")}
						s["ephemeralContainers"] = []any{c("debug")}
					case "user namespace":
						s["hostUsers"] = false
					case "windows":
						s["os"] = map[string]any{"name": "windows"}
					}
					return s
				}
				meta := func() map[string]any { return map[string]any{"name": "gen", "namespace": "team"} }
				where := fmt.Sprintf("pod security %d, container %d, %s", i, j, variant)
				pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta(), "spec": spec()}
				defaulted, _ := podsecurity.Defaulted(pod, d)
				out = append(out,
					inProcessCase{where + " on a Pod", pod},
					inProcessCase{where + " on a Pod, defaulted", defaulted},
					inProcessCase{where + " on a StatefulSet", map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(),
						"spec": map[string]any{"template": map[string]any{"spec": spec()}}}},
					inProcessCase{where + " on a CronJob", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta(),
						"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{
							"template": map[string]any{"spec": spec()}}}}}},
				)
			}
		}
	}
	return out
}

// fixtureObjects are the golden fixtures of the contracts under patterns,
// as written and as the API server defaults them.
func fixtureObjects(t *testing.T, patterns ...string) []inProcessCase {
	t.Helper()
	var out []inProcessCase
	for _, pattern := range patterns {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures match %s (%v)", pattern, err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(raw, &obj); err != nil {
				t.Fatal(err)
			}
			out = append(out, inProcessCase{file, obj})
			if defaulted, err := apidefaults.PreAdmission(obj); err == nil {
				out = append(out, inProcessCase{file + " (defaulted)", defaulted})
			}
		}
	}
	return out
}

// TestInProcessNarrowingIsSound evaluates each allows predicate of the
// in-process layout (the narrowing the API server applies before it calls
// the member) over the fixtures of SCOPE, SA and PSC, as written and
// defaulted by the API server, every Pod also as PSC's defaults leave it
// (the guard judges the mutated Pod), and about 3,000 generated objects, on
// CREATE and UPDATE, beside the member's evaluator: wherever a predicate
// holds, the evaluator must allow with no finding at all (no denial, no warning), so that no request the
// layout keeps from gatehouse could have been denied, warned about or
// excused. The predicates must also hold somewhere, or they narrow nothing.
func TestInProcessNarrowingIsSound(t *testing.T) {
	opts := route.OptionsFromConfig(configv1alpha1.Default())
	members := []struct {
		webhook  string
		evaluate func(schema.GroupKind, map[string]any) []policies.Finding
	}{
		// The defaults have nothing to say where they change nothing.
		{"pod-security-defaults", func(gk schema.GroupKind, obj map[string]any) []policies.Finding {
			if _, changed := podsecurity.Defaulted(obj, opts.PodDefaults); changed && gk == (schema.GroupKind{Kind: "Pod"}) {
				return []policies.Finding{policies.Denial("WouldDefault", nil, "", "the defaults would change the Pod")}
			}
			return nil
		}},
		{"secret-scope", func(gk schema.GroupKind, obj map[string]any) []policies.Finding { return scope.Validate(gk, obj) }},
		{"service-account", func(gk schema.GroupKind, obj map[string]any) []policies.Finding {
			return serviceaccount.Validate(gk, obj, opts.Products, opts.ServiceAccounts)
		}},
		{"pod-security", func(gk schema.GroupKind, obj map[string]any) []policies.Finding {
			if gk == (schema.GroupKind{Kind: "Pod"}) {
				return podsecurity.ValidatePod(obj, nil)
			}
			return podsecurity.ValidateTemplate(gk, obj, opts.PodDefaults)
		}},
	}
	if rows := len(render.InProcessWebhooks()); len(members) != rows {
		t.Fatalf("the test knows %d members, the in-process table has %d rows", len(members), rows)
	}
	cases := fixtureObjects(t, "../policies/scope/testdata/*/*.yaml", "../policies/serviceaccount/testdata/*/*.yaml", "../policies/podsecurity/testdata/*/*.yaml")
	// The PSC guard judges a Pod as its defaults left it.
	for _, c := range cases {
		if c.object["kind"] == "Pod" {
			if defaulted, changed := podsecurity.Defaulted(c.object, opts.PodDefaults); changed {
				cases = append(cases, inProcessCase{c.where + " (PSC defaults)", defaulted})
			}
		}
	}
	cases = append(cases, generatedScopeObjects()...)
	cases = append(cases, generatedOwnedObjects()...)
	cases = append(cases, generatedPodSecurityObjects(opts.PodDefaults)...)
	narrowing := render.NewInProcessNarrowing(opts)
	narrowed, silent, found := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range cases {
		gvk := schema.FromAPIVersionAndKind(stringAt(c.object, "apiVersion"), stringAt(c.object, "kind"))
		gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: guessResource(gvk.Kind)}
		if gvk.Kind == "PersistentVolumeClaim" {
			gvr.Resource = "persistentvolumeclaims"
		}
		meta, _ := c.object["metadata"].(map[string]any)
		for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
			req := ctrladmission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr), Namespace: "team",
				Name: stringAt(meta, "name"), Operation: op, UserInfo: authenticationv1.UserInfo{Username: "alice"},
			}}
			var old map[string]any
			if op == admissionv1.Update {
				old = c.object
			}
			for _, m := range members {
				allows, err := narrowing.Allows(m.webhook, &req, c.object, old)
				if err != nil {
					// An object the API server refuses before admission
					// (a securityContext that is not an object) never
					// meets the predicate there.
					if _, refused := apidefaults.PreAdmission(c.object); refused != nil {
						continue
					}
					t.Fatalf("%s: the predicate of %s failed: %v", c.where, m.webhook, err)
				}
				findings := m.evaluate(gvk.GroupKind(), c.object)
				if len(findings) == 0 {
					silent[m.webhook]++
				} else {
					found[m.webhook]++
				}
				if !allows {
					continue
				}
				narrowed[m.webhook]++
				// SCOPE and SA ratchet on UPDATE, and a Pod's UPDATE is
				// its ephemeral containers: CREATE only. The PSC guard
				// judges a workload's template alone, on UPDATE too.
				if op == admissionv1.Update && (m.webhook != "pod-security" || gvk.Kind == "Pod") {
					t.Errorf("%s: %s is narrowed away from an UPDATE", c.where, m.webhook)
				}
				for _, f := range findings {
					t.Errorf("%s: %s is narrowed away, but its evaluator reports %s (severity %v) at %s", c.where, m.webhook, f.Code, f.Severity, f.Field)
				}
			}
		}
	}
	t.Logf("%d objects on CREATE and UPDATE; narrowed away: %v, of requests the evaluator is silent on: %v; requests with findings: %v",
		len(cases), narrowed, silent, found)
	for _, m := range members {
		if narrowed[m.webhook] == 0 || found[m.webhook] == 0 {
			t.Errorf("%s: %d requests narrowed away, %d with findings: the corpus does not exercise it", m.webhook, narrowed[m.webhook], found[m.webhook])
		}
	}
}
