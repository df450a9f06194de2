package scope

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// setPodAnnotation returns a tweak that sets one annotation of the Pod's
// secret volume; an empty value deletes it.
func setPodAnnotation(key, value string) func(map[string]any) {
	return func(obj map[string]any) {
		if value == "" {
			delete(podAnnotations(obj), key)
			return
		}
		podAnnotations(obj)[key] = value
	}
}

func setHdfsScope(list string, names ...any) func(map[string]any) {
	return func(obj map[string]any) { hdfsScope(obj)[list] = names }
}

func fixtures() []golden.Fixture {
	fx := func(name string, expect golden.Outcome, base func() map[string]any, tweak func(map[string]any)) golden.Fixture {
		return golden.Fixture{Name: name, Expect: expect, Object: golden.Tweak(base, tweak)}
	}
	pass, fail := golden.Pass, golden.Fail
	return []golden.Fixture{
		fx("pod-secret-volume", pass, basePod, nil),
		fx("pod-scope-unknown-key", pass, basePod, setPodAnnotation(annotationScope, "pod,zone=eu")),
		fx("pod-tls-p12-default-password", pass, basePod, setPodAnnotation(annotationFormat, "tls-p12")),
		fx("pod-tls-p12-password", pass, basePod, func(obj map[string]any) {
			podAnnotations(obj)[annotationFormat] = "tls-p12"
			podAnnotations(obj)[annotationPKCS12Password] = "changeit"
		}),
		fx("pod-cert-lifetime-jitter-buffer", pass, basePod, func(obj map[string]any) {
			podAnnotations(obj)[annotationAutoTLSCertLifetime] = "168h"
			podAnnotations(obj)[annotationAutoTLSCertJitterFactor] = "0.2"
			podAnnotations(obj)[annotationAutoTLSCertRestartBuffer] = "8h"
		}),
		fx("pod-kerberos", pass, basePod, func(obj map[string]any) {
			podAnnotations(obj)[annotationClass] = "kerberos"
			podAnnotations(obj)[annotationFormat] = "kerberos"
			podAnnotations(obj)[annotationKerberosServiceNames] = "HTTP,hdfs"
		}),
		fx("pod-annotation-unknown", pass, basePod, setPodAnnotation("secrets.kubedoop.dev/formats", "tls-pem")),
		fx("pvc-secret-annotations", pass, basePVC, nil),
		fx("statefulset-secret-volumes", pass, baseStatefulSet, nil),
		fx("hdfscluster-scope-valid", pass, baseHdfsCluster, setHdfsScope("listenerVolumes", "listener")),
		fx("pod-scope-listener-volume-digit", pass, basePod, setPodAnnotation(annotationScope, "pod,listener-volume=0-listener")),
		fx("pod-jitter-factor-zero", pass, basePod, setPodAnnotation(annotationAutoTLSCertJitterFactor, "0")),
		fx("pod-cert-lifetime-may-fail", pass, basePod, func(obj map[string]any) {
			podAnnotations(obj)[annotationAutoTLSCertLifetime] = "9h"
			podAnnotations(obj)[annotationAutoTLSCertRestartBuffer] = "8h"
		}),
		fx("hdfscluster-scope-nested-deep", pass, baseHdfsCluster, nestHolder(100, "web")),

		fx("pod-scope-empty-entry", fail, basePod, setPodAnnotation(annotationScope, "pod,,node")),
		fx("pod-scope-only-comma", fail, basePod, setPodAnnotation(annotationScope, ",")),
		fx("pod-scope-trailing-comma", fail, basePod, setPodAnnotation(annotationScope, "pod,node,")),
		fx("pod-scope-service-bare", fail, basePod, setPodAnnotation(annotationScope, "pod,service")),
		fx("pod-scope-value-has-delimiter", fail, basePod, setPodAnnotation(annotationScope, "service=a=b")),
		fx("pod-scope-node-with-value", fail, basePod, setPodAnnotation(annotationScope, "node=x")),
		fx("pod-scope-key-empty", fail, basePod, setPodAnnotation(annotationScope, "pod,=web")),
		fx("pod-scope-service-wildcard", fail, basePod, setPodAnnotation(annotationScope, "service=*")),
		fx("pod-scope-service-headless-wildcard", fail, basePod, setPodAnnotation(annotationScope, "pod,service=*.web")),
		fx("pod-scope-listener-volume-invalid", fail, basePod, setPodAnnotation(annotationScope, "listener-volume=Listener")),
		fx("pod-cert-lifetime-unissuable", fail, basePod, setPodAnnotation(annotationAutoTLSCertLifetime, "8h")),
		// secret-operator's own TLS e2e (zncdatadev/secret-operator
		// test/e2e/tls/tls-scope.yaml @ 48b36fafc92d) mounts format "pem":
		// stored as given and served as PEM, so it only warns.
		fx("pod-format-pem", pass, basePod, setPodAnnotation(annotationFormat, "pem")),
		fx("pod-cert-lifetime-invalid", fail, basePod, setPodAnnotation(annotationAutoTLSCertLifetime, "7d")),
		fx("pod-restart-buffer-negative", fail, basePod, setPodAnnotation(annotationAutoTLSCertRestartBuffer, "-1h")),
		fx("pod-jitter-factor-one", fail, basePod, setPodAnnotation(annotationAutoTLSCertJitterFactor, "1.0")),
		fx("pod-class-missing", fail, basePod, setPodAnnotation(annotationClass, "")),
		// trino-operator renders an empty scope for LDAP bind credentials
		// without one; secret-operator's decodeScope reads it as no scope.
		fx("pvc-scope-empty", pass, basePVC, func(obj map[string]any) {
			dig(obj, "metadata", "annotations")[annotationScope] = ""
		}),
		fx("pvc-scope-node-with-value", fail, basePVC, func(obj map[string]any) {
			dig(obj, "metadata", "annotations")[annotationScope] = "node=x"
		}),
		fx("statefulset-volumeclaimtemplate", fail, baseStatefulSet, func(obj map[string]any) {
			claim := dig(obj, "spec")["volumeClaimTemplates"].([]any)[0].(map[string]any)
			dig(claim, "metadata", "annotations")[annotationScope] = "service=a=b"
		}),
		fx("deployment-template", fail, baseDeployment, func(obj map[string]any) {
			templateAnnotations(obj, "spec", "template", "spec")[annotationScope] = "pod,,node"
		}),
		fx("cronjob-template", fail, baseCronJob, func(obj map[string]any) {
			templateAnnotations(obj, "spec", "jobTemplate", "spec", "template", "spec")[annotationScope] = "pod,service"
		}),
		fx("hdfscluster-service-splices-node", fail, baseHdfsCluster, setHdfsScope("services", "mysvc,node")),
		fx("hdfscluster-authentication-list", fail, baseHdfsCluster, func(obj map[string]any) {
			dig(obj, "spec", "clusterConfig")["authentication"] = []any{
				map[string]any{"tls": credentialsHolder("web", "web,pod,service=admin")},
			}
		}),
		fx("hdfscluster-listener-volume-has-delimiter", fail, baseHdfsCluster, setHdfsScope("listenerVolumes", "a=b")),
		fx("hdfscluster-service-empty", fail, baseHdfsCluster, setHdfsScope("services", "")),
		fx("hdfscluster-service-wildcard", fail, baseHdfsCluster, setHdfsScope("services", "*")),
		fx("hdfscluster-listener-volume-invalid", fail, baseHdfsCluster, setHdfsScope("listenerVolumes", "listener.bootstrap")),
		// Past the 64 levels at which the walk used to stop silently.
		fx("hdfscluster-scope-nested-deep-splice", fail, baseHdfsCluster, nestHolder(100, "web,node")),
		fx("hdfscluster-podoverrides-volume", fail, baseHdfsCluster, func(obj map[string]any) {
			annotations := validSecretAnnotations()
			annotations[annotationScope] = "node,service"
			dig(obj, "spec", "nameNodes", "roleGroups", "default")["podOverrides"] = map[string]any{
				"spec": map[string]any{"volumes": []any{secretVolume("extra-tls", annotations)}},
			}
		}),
	}
}

// nestHolder returns a tweak that puts a CredentialsScope holder with the
// given services under spec.clusterConfig.extensions, alternating objects and
// lists, so that the holder is at the given level (the object is level 1).
func nestHolder(level int, services ...string) func(map[string]any) {
	return func(obj map[string]any) {
		var v any = credentialsHolder(services...)
		// spec is level 2, clusterConfig 3, extensions 4.
		for l := level; l > 4; l-- {
			if l%2 == 0 {
				v = []any{v}
			} else {
				v = map[string]any{"nested": v}
			}
		}
		dig(obj, "spec", "clusterConfig")["extensions"] = v
	}
}

// groupKindOf reads the kind of a fixture from its apiVersion and kind.
func groupKindOf(obj map[string]any) schema.GroupKind {
	apiVersion, _ := fields.String(obj, "apiVersion")
	kind, _ := fields.String(obj, "kind")
	return schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
}

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", fixtures(), func(obj map[string]any) []policies.Finding {
		return Validate(groupKindOf(obj), obj)
	})
}
