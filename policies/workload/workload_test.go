package workload_test

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// podTemplate is a pod's metadata and spec as they appear in any object.
func podTemplate() (meta, spec map[string]any) {
	meta = map[string]any{"labels": map[string]any{"app": "web"}}
	spec = map[string]any{
		"serviceAccountName": "web",
		"containers":         []any{map[string]any{"name": "main", "image": "registry.example/web:1.0"}},
	}
	return meta, spec
}

// nest puts v at path below a fresh object.
func nest(path []string, v map[string]any) map[string]any {
	for i := len(path) - 1; i >= 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return v
}

// TestKinds checks Kinds against the Go types of k8s.io/api, not against a
// copy of itself: every kind of core/v1, apps/v1 and batch/v1 whose object
// holds a pod spec outside a list is listed, and nothing else; each is served
// under the resource apimachinery derives from its kind; and its Template is
// where its type holds the pod template.
func TestKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	upstream := map[schema.GroupKind]schema.GroupVersionKind{}
	podSpecAt := map[schema.GroupKind][]string{}
	for gvk, typ := range scheme.AllKnownTypes() {
		if path, ok := podSpecPath(typ, nil); ok {
			upstream[gvk.GroupKind()] = gvk
			podSpecAt[gvk.GroupKind()] = path
		}
	}
	if len(upstream) == 0 {
		t.Fatal("no kind of k8s.io/api holds a pod spec: the walk over the types is broken")
	}
	listed := map[schema.GroupKind]bool{}
	for _, k := range workload.Kinds() {
		gk := schema.GroupKind{Group: k.Resource.Group, Kind: k.Kind}
		listed[gk] = true
		gvk, ok := upstream[gk]
		if !ok {
			t.Errorf("%v is listed, but no type of k8s.io/api by that kind holds a pod spec", gk)
			continue
		}
		if want, _ := meta.UnsafeGuessKindToResource(gvk); k.Resource != want {
			t.Errorf("%v is served as %v, listed as %v", gk, want, k.Resource)
		}
		if want, got := podSpecAt[gk], append(slices.Clone(k.Template), "spec"); !slices.Equal(got, want) {
			t.Errorf("%v holds its pod spec at %v, Template leads to %v", gk, want, got)
		}
	}
	for gk := range upstream {
		if !listed[gk] {
			t.Errorf("%v holds a pod spec (at %v) and is not listed", gk, podSpecAt[gk])
		}
	}
}

// podSpecPath returns the JSON path at which a value of type typ holds a
// corev1.PodSpec, following struct fields (and embedded ones) by their JSON
// names and pointers, but not lists or maps: a PodList holds pods, it runs
// none itself.
func podSpecPath(typ reflect.Type, path []string) ([]string, bool) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeOf(corev1.PodSpec{}) {
		return path, true
	}
	if typ.Kind() != reflect.Struct || len(path) > 8 {
		return nil, false
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		next := path
		if !f.Anonymous || name != "" {
			next = append(slices.Clone(path), name)
		}
		if found, ok := podSpecPath(f.Type, next); ok {
			return found, true
		}
	}
	return nil, false
}

func TestPodOf(t *testing.T) {
	tests := []struct {
		gk       schema.GroupKind
		template []string // where metadata and spec sit
		metaPath string
		specPath string
	}{
		{schema.GroupKind{Kind: "Pod"}, nil, "metadata", "spec"},
		{schema.GroupKind{Kind: "PodTemplate"}, []string{"template"}, "template.metadata", "template.spec"},
		{schema.GroupKind{Kind: "ReplicationController"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, []string{"spec", "template"}, "spec.template.metadata", "spec.template.spec"},
		{schema.GroupKind{Group: "batch", Kind: "CronJob"}, []string{"spec", "jobTemplate", "spec", "template"}, "spec.jobTemplate.spec.template.metadata", "spec.jobTemplate.spec.template.spec"},
	}
	if len(tests) != len(workload.Kinds()) {
		t.Fatalf("test covers %d kinds, kinds has %d", len(tests), len(workload.Kinds()))
	}
	for _, tt := range tests {
		t.Run(tt.gk.String(), func(t *testing.T) {
			if k, ok := workload.Lookup(tt.gk); !ok || !reflect.DeepEqual(k.Template, tt.template) {
				t.Fatalf("Lookup(%v) = %v, %v; want template %v", tt.gk, k.Template, ok, tt.template)
			}

			t.Run("found", func(t *testing.T) {
				meta, spec := podTemplate()
				tmpl := map[string]any{"metadata": meta, "spec": spec}
				obj := nest(tt.template, tmpl)
				if len(tt.template) > 0 {
					// The workload's own metadata must not be taken for the pod's.
					obj["metadata"] = map[string]any{"name": "workload"}
				}
				pod, ok := workload.PodOf(tt.gk, obj)
				if !ok {
					t.Fatalf("PodOf = false, want true")
				}
				if got := pod.MetaPath.String(); got != tt.metaPath {
					t.Errorf("MetaPath = %q, want %q", got, tt.metaPath)
				}
				if got := pod.SpecPath.String(); got != tt.specPath {
					t.Errorf("SpecPath = %q, want %q", got, tt.specPath)
				}
				if !reflect.DeepEqual(pod.Meta, meta) {
					t.Errorf("Meta = %v, want %v", pod.Meta, meta)
				}
				if !reflect.DeepEqual(pod.Spec, spec) {
					t.Errorf("Spec = %v, want %v", pod.Spec, spec)
				}
				// Spec is the object's own map, not a copy.
				pod.Spec["marker"] = true
				if spec["marker"] != true {
					t.Errorf("Spec is a copy of the object's pod spec")
				}
			})

			t.Run("no metadata", func(t *testing.T) {
				_, spec := podTemplate()
				obj := nest(tt.template, map[string]any{"spec": spec})
				pod, ok := workload.PodOf(tt.gk, obj)
				if !ok {
					t.Fatalf("PodOf = false, want true")
				}
				if pod.Meta != nil {
					t.Errorf("Meta = %v, want nil", pod.Meta)
				}
				if got := pod.MetaPath.String(); got != tt.metaPath {
					t.Errorf("MetaPath = %q, want %q", got, tt.metaPath)
				}
				if !reflect.DeepEqual(pod.Spec, spec) {
					t.Errorf("Spec = %v, want %v", pod.Spec, spec)
				}
			})

			t.Run("wrong-typed metadata", func(t *testing.T) {
				_, spec := podTemplate()
				obj := nest(tt.template, map[string]any{"metadata": "x", "spec": spec})
				pod, ok := workload.PodOf(tt.gk, obj)
				if !ok {
					t.Fatalf("PodOf = false, want true")
				}
				if pod.Meta != nil {
					t.Errorf("Meta = %v, want nil", pod.Meta)
				}
			})

			// Every way the pod spec can be missing or malformed.
			meta, _ := podTemplate()
			bad := map[string]map[string]any{
				"empty object":    {},
				"nil object":      nil,
				"no spec":         nest(tt.template, map[string]any{"metadata": meta}),
				"null spec":       nest(tt.template, map[string]any{"metadata": meta, "spec": nil}),
				"string spec":     nest(tt.template, map[string]any{"metadata": meta, "spec": "x"}),
				"list spec":       nest(tt.template, map[string]any{"metadata": meta, "spec": []any{}}),
				"map[string]spec": nest(tt.template, map[string]any{"metadata": meta, "spec": map[string]string{"a": "b"}}),
			}
			// Each intermediate step of the template path missing, null or wrong-typed.
			for i := range tt.template {
				prefix := tt.template[:i]
				step := tt.template[i]
				bad["missing "+step+" at "+strconv.Itoa(i)] = nest(prefix, map[string]any{"other": map[string]any{}})
				bad["null "+step+" at "+strconv.Itoa(i)] = nest(prefix, map[string]any{step: nil})
				bad["string "+step+" at "+strconv.Itoa(i)] = nest(prefix, map[string]any{step: "x"})
				bad["number "+step+" at "+strconv.Itoa(i)] = nest(prefix, map[string]any{step: float64(1)})
				bad["list "+step+" at "+strconv.Itoa(i)] = nest(prefix, map[string]any{step: []any{map[string]any{"spec": map[string]any{}}}})
			}
			for name, obj := range bad {
				t.Run(name, func(t *testing.T) {
					pod, ok := workload.PodOf(tt.gk, obj)
					if ok {
						t.Errorf("PodOf = %+v, true; want false", pod)
					}
					if !reflect.DeepEqual(pod, workload.Pod{}) {
						t.Errorf("PodOf returned non-zero Pod %+v with false", pod)
					}
				})
			}
		})
	}
}

func TestPodOfUnknownKind(t *testing.T) {
	// An object that would be a valid pod for any of the known kinds.
	_, spec := podTemplate()
	obj := map[string]any{
		"spec": map[string]any{
			"template":    map[string]any{"spec": spec},
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}},
		},
		"template": map[string]any{"spec": spec},
	}
	for k, v := range spec {
		obj["spec"].(map[string]any)[k] = v
	}
	for _, gk := range []schema.GroupKind{
		{Kind: "Service"},
		{Kind: "ConfigMap"},
		{Group: "apps", Kind: "Pod"},
		{Group: "core", Kind: "Pod"},
		{Group: "extensions", Kind: "Deployment"},
		{Group: "apps", Kind: "Job"},
		{Group: "batch", Kind: "Deployment"},
		{Kind: "pod"},
		{Group: "apps", Kind: "deployment"},
		{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster"},
		{},
	} {
		t.Run(gk.String(), func(t *testing.T) {
			if pod, ok := workload.PodOf(gk, obj); ok {
				t.Errorf("PodOf(%v) = %+v, true; want false", gk, pod)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		gk       schema.GroupKind
		wantOK   bool
		resource schema.GroupVersionResource
	}{
		{schema.GroupKind{Kind: "Pod"}, true, schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		{schema.GroupKind{Kind: "PodTemplate"}, true, schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}},
		{schema.GroupKind{Kind: "ReplicationController"}, true, schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, true, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, true, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}},
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, true, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}},
		{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, true, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}},
		{schema.GroupKind{Group: "batch", Kind: "Job"}, true, schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}},
		{schema.GroupKind{Group: "batch", Kind: "CronJob"}, true, schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}},
		{gk: schema.GroupKind{Group: "apps", Kind: "Pod"}},
		{gk: schema.GroupKind{Kind: "Deployment"}},
		{gk: schema.GroupKind{Group: "extensions", Kind: "Deployment"}},
		{gk: schema.GroupKind{Group: "batch", Kind: "cronjob"}},
		{gk: schema.GroupKind{Kind: "pods"}},
		{gk: schema.GroupKind{Kind: "Secret"}},
		{gk: schema.GroupKind{}},
	}
	for _, tt := range tests {
		t.Run(tt.gk.String(), func(t *testing.T) {
			k, ok := workload.Lookup(tt.gk)
			if ok != tt.wantOK {
				t.Fatalf("Lookup(%v) ok = %v, want %v", tt.gk, ok, tt.wantOK)
			}
			if !ok {
				if !reflect.DeepEqual(k, workload.Kind{}) {
					t.Errorf("Lookup(%v) = %+v with false, want zero Kind", tt.gk, k)
				}
				return
			}
			if k.Kind != tt.gk.Kind || k.Resource != tt.resource {
				t.Errorf("Lookup(%v) = %s %v, want %s %v", tt.gk, k.Kind, k.Resource, tt.gk.Kind, tt.resource)
			}
		})
	}
}

func TestContainers(t *testing.T) {
	c := func(name string) map[string]any { return map[string]any{"name": name} }
	type want struct {
		path string
		name string
	}
	tests := []struct {
		name     string
		specPath *field.Path
		spec     map[string]any
		want     []want
	}{
		{
			name:     "init, regular, ephemeral in that order",
			specPath: field.NewPath("spec"),
			spec: map[string]any{
				// Map order is irrelevant: the lists come out in kubelet order.
				"ephemeralContainers": []any{c("debug")},
				"containers":          []any{c("main"), c("sidecar")},
				"initContainers":      []any{c("init-a"), c("init-b")},
			},
			want: []want{
				{"spec.initContainers[0]", "init-a"},
				{"spec.initContainers[1]", "init-b"},
				{"spec.containers[0]", "main"},
				{"spec.containers[1]", "sidecar"},
				{"spec.ephemeralContainers[0]", "debug"},
			},
		},
		{
			name:     "template spec path",
			specPath: field.NewPath("spec", "jobTemplate", "spec", "template", "spec"),
			spec: map[string]any{
				"initContainers": []any{c("init")},
				"containers":     []any{c("main")},
			},
			want: []want{
				{"spec.jobTemplate.spec.template.spec.initContainers[0]", "init"},
				{"spec.jobTemplate.spec.template.spec.containers[0]", "main"},
			},
		},
		{
			name:     "non-object entries skipped, indexes kept",
			specPath: field.NewPath("spec"),
			spec: map[string]any{
				"initContainers":      []any{"x", nil, c("init")},
				"containers":          []any{c("main"), float64(1), []any{c("nested")}, c("last")},
				"ephemeralContainers": []any{map[string]string{"name": "typed"}, c("debug")},
			},
			want: []want{
				{"spec.initContainers[2]", "init"},
				{"spec.containers[0]", "main"},
				{"spec.containers[3]", "last"},
				{"spec.ephemeralContainers[1]", "debug"},
			},
		},
		{
			name:     "wrong-typed and null lists skipped",
			specPath: field.NewPath("spec"),
			spec: map[string]any{
				"initContainers":      "x",
				"containers":          []any{c("main")},
				"ephemeralContainers": nil,
			},
			want: []want{{"spec.containers[0]", "main"}},
		},
		{
			name:     "containers as object",
			specPath: field.NewPath("spec"),
			spec: map[string]any{
				"initContainers": []any{c("init")},
				"containers":     map[string]any{"main": c("main")},
			},
			want: []want{{"spec.initContainers[0]", "init"}},
		},
		{
			name:     "no containers",
			specPath: field.NewPath("spec"),
			spec:     map[string]any{"containers": []any{}},
			want:     nil,
		},
		{
			name:     "nil spec",
			specPath: field.NewPath("spec"),
			spec:     nil,
			want:     nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workload.Containers(tt.specPath, tt.spec)
			if len(got) != len(tt.want) {
				t.Fatalf("Containers returned %d containers %v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if p := got[i].Path.String(); p != w.path {
					t.Errorf("[%d].Path = %q, want %q", i, p, w.path)
				}
				if n := got[i].Obj["name"]; n != w.name {
					t.Errorf("[%d].Obj[name] = %v, want %q", i, n, w.name)
				}
			}
		})
	}
}

// TestContainersDoNotCopy checks that each container is the spec's own object.
func TestContainersDoNotCopy(t *testing.T) {
	main := map[string]any{"name": "main"}
	spec := map[string]any{"containers": []any{main}}
	got := workload.Containers(field.NewPath("spec"), spec)
	if len(got) != 1 {
		t.Fatalf("Containers returned %d containers, want 1", len(got))
	}
	got[0].Obj["image"] = "x"
	if main["image"] != "x" {
		t.Errorf("container object is a copy")
	}
}

// TestPodOfThenContainers ties the two together the way contracts use them.
func TestPodOfThenContainers(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{
			"jobTemplate": map[string]any{
				"spec": map[string]any{
					"template": map[string]any{
						"spec": map[string]any{
							"initContainers": []any{map[string]any{"name": "init"}},
							"containers":     []any{map[string]any{"name": "main"}},
						},
					},
				},
			},
		},
	}
	pod, ok := workload.PodOf(schema.GroupKind{Group: "batch", Kind: "CronJob"}, obj)
	if !ok {
		t.Fatal("PodOf(CronJob) = false")
	}
	var got []string
	for _, c := range workload.Containers(pod.SpecPath, pod.Spec) {
		got = append(got, c.Path.String())
	}
	want := []string{
		"spec.jobTemplate.spec.template.spec.initContainers[0]",
		"spec.jobTemplate.spec.template.spec.containers[0]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("container paths = %q, want %q", got, want)
	}
}
