package scope

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// benchStatefulSet is a typical workload: three containers, two secret
// volumes and one secret volumeClaimTemplate.
func benchStatefulSet() map[string]any {
	obj := baseStatefulSet()
	spec := dig(obj, "spec", "template", "spec")
	kerberos := validSecretAnnotations()
	kerberos[annotationClass] = "kerberos"
	kerberos[annotationFormat] = "kerberos"
	kerberos[annotationKerberosServiceNames] = "HTTP,hdfs"
	spec["initContainers"] = []any{container("format", "tls")}
	spec["containers"] = []any{container("namenode", "tls", "kerberos", "data"), container("zkfc", "tls"), container("metrics")}
	spec["volumes"] = []any{
		secretVolume("tls", validSecretAnnotations()),
		secretVolume("kerberos", kerberos),
		map[string]any{"name": "config", "configMap": map[string]any{"name": "hdfs"}},
	}
	return obj
}

// benchProductCR is a product custom resource with two CredentialsScopes and
// a podOverrides secret volume.
func benchProductCR() map[string]any {
	obj := baseHdfsCluster()
	spec := dig(obj, "spec")
	hdfsScope(obj)["listenerVolumes"] = []any{"listener"}
	for _, role := range []string{"nameNodes", "dataNodes", "journalNodes"} {
		spec[role] = map[string]any{
			"config": map[string]any{"resources": map[string]any{"cpu": map[string]any{"min": "1", "max": "2"}}},
			"roleGroups": map[string]any{
				"default": map[string]any{
					"replicas":     float64(3),
					"podOverrides": map[string]any{"spec": map[string]any{"volumes": []any{secretVolume("extra-tls", validSecretAnnotations())}}},
				},
			},
		}
	}
	dig(spec, "clusterConfig")["kerberos"] = credentialsHolder("hdfs")
	return obj
}

func BenchmarkValidate(b *testing.B) {
	for _, bm := range []struct {
		name string
		gk   schema.GroupKind
		obj  map[string]any
	}{
		{"StatefulSet", gkStatefulSet, benchStatefulSet()},
		{"ProductCR", gkHdfsCluster, benchProductCR()},
	} {
		b.Run(bm.name, func(b *testing.B) {
			if findings := Validate(bm.gk, bm.obj); len(findings) != 0 {
				b.Fatalf("benchmark object has findings: %+v", findings)
			}
			b.ReportAllocs()
			for b.Loop() {
				Validate(bm.gk, bm.obj)
			}
		})
	}
}
