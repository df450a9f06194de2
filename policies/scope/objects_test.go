package scope

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// Objects shared by the table tests, the golden fixtures, the fuzz targets
// and the benchmarks. Every builder returns a fresh object, so a test may
// change it.

var (
	gkPod          = schema.GroupKind{Kind: "Pod"}
	gkPVC          = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	gkDeployment   = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkStatefulSet  = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkCronJob      = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	gkHdfsCluster  = schema.GroupKind{Group: "hdfs.kubedoop.dev", Kind: "HdfsCluster"}
	gkTrinoCluster = schema.GroupKind{Group: "trino.kubedoop.dev", Kind: "TrinoCluster"}
)

// validSecretAnnotations is what operator-go writes for a TLS volume.
func validSecretAnnotations() map[string]any {
	return map[string]any{
		annotationClass:  "tls",
		annotationScope:  "pod,node,service=web",
		annotationFormat: "tls-pem",
	}
}

func pvcSpec() map[string]any {
	return map[string]any{
		"accessModes":      []any{"ReadWriteOnce"},
		"storageClassName": "secrets.kubedoop.dev",
		"resources":        map[string]any{"requests": map[string]any{"storage": "1Mi"}},
	}
}

// secretVolume is a pod volume whose ephemeral PVC template carries annotations.
func secretVolume(name string, annotations map[string]any) map[string]any {
	return map[string]any{
		"name": name,
		"ephemeral": map[string]any{
			"volumeClaimTemplate": map[string]any{
				"metadata": map[string]any{"annotations": annotations},
				"spec":     pvcSpec(),
			},
		},
	}
}

func container(name string, mounts ...string) map[string]any {
	var volumeMounts []any
	for _, m := range mounts {
		volumeMounts = append(volumeMounts, map[string]any{"name": m, "mountPath": "/kubedoop/" + m})
	}
	c := map[string]any{"name": name, "image": "registry.example/" + name + ":1.0"}
	if volumeMounts != nil {
		c["volumeMounts"] = volumeMounts
	}
	return c
}

// podSpec has one container mounting one valid secret volume named tls.
func podSpec() map[string]any {
	return map[string]any{
		"containers": []any{container("app", "tls")},
		"volumes":    []any{secretVolume("tls", validSecretAnnotations())},
	}
}

func podTemplate() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     podSpec(),
	}
}

func basePod() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec":       podSpec(),
	}
}

func baseDeployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": podTemplate(),
		},
	}
}

func baseCronJob() map[string]any {
	template := podTemplate()
	// The API server requires a Job's pods to say how they restart.
	template["spec"].(map[string]any)["restartPolicy"] = "OnFailure"
	return map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "CronJob",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"schedule": "0 * * * *",
			"jobTemplate": map[string]any{
				"spec": map[string]any{"template": template},
			},
		},
	}
}

// baseStatefulSet has one valid PVC template named data.
func baseStatefulSet() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "StatefulSet",
		"metadata":   map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"selector":    map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"serviceName": "web",
			"template":    podTemplate(),
			"volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "data", "annotations": validSecretAnnotations()},
				"spec":     pvcSpec(),
			}},
		},
	}
}

func basePVC() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata":   map[string]any{"name": "tls", "namespace": "default", "annotations": validSecretAnnotations()},
		"spec":       pvcSpec(),
	}
}

// baseHdfsCluster is a product custom resource with one CredentialsScope at
// spec.clusterConfig.authentication.tls.
func baseHdfsCluster() map[string]any {
	return map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1",
		"kind":       "HdfsCluster",
		"metadata":   map[string]any{"name": "hdfs", "namespace": "default"},
		"spec": map[string]any{
			"image": map[string]any{"productVersion": "3.4.0"},
			"clusterConfig": map[string]any{
				"zookeeperConfigMapName": "zk",
				"authentication": map[string]any{
					"tls": credentialsHolder("web"),
				},
			},
			"nameNodes": map[string]any{
				"roleGroups": map[string]any{
					"default": map[string]any{"replicas": float64(2)},
				},
			},
		},
	}
}

// credentialsHolder is a {secretClass, scope} object with the given services.
func credentialsHolder(services ...string) map[string]any {
	list := []any{}
	for _, s := range services {
		list = append(list, s)
	}
	return map[string]any{
		"secretClass": "tls",
		"scope":       map[string]any{"node": true, "services": list},
	}
}

// hdfsScope returns the scope object of baseHdfsCluster.
func hdfsScope(obj map[string]any) map[string]any {
	return dig(obj, "spec", "clusterConfig", "authentication", "tls", "scope")
}

// podAnnotations returns the annotations of the first volume of a Pod.
func podAnnotations(obj map[string]any) map[string]any {
	volumes := dig(obj, "spec")["volumes"].([]any)
	return dig(volumes[0].(map[string]any), "ephemeral", "volumeClaimTemplate", "metadata", "annotations")
}

// templateAnnotations returns the annotations of the first volume of a pod
// template at keys.
func templateAnnotations(obj map[string]any, keys ...string) map[string]any {
	volumes := dig(obj, keys...)["volumes"].([]any)
	return dig(volumes[0].(map[string]any), "ephemeral", "volumeClaimTemplate", "metadata", "annotations")
}

// dig walks test objects, which the tests build and so know the shape of.
func dig(obj map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		obj = obj[k].(map[string]any)
	}
	return obj
}

// The table tests compare golden.Result: severity, code and field, no prose.
type result = golden.Result

var (
	deny    = golden.Deny
	warn    = golden.Warn
	results = golden.Results
)
