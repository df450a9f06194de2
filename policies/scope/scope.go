// This file dispatches an object to the places its kind keeps PVC
// annotations. It reads:
//
//   - PersistentVolumeClaim: metadata.annotations
//   - Pod and every kind in workload.Kinds():
//     <pod spec>.volumes[*].ephemeral.volumeClaimTemplate.metadata.annotations
//   - StatefulSet, in addition: spec.volumeClaimTemplates[*].metadata.annotations
//   - any other kind: the whole object, walked generically (crwalk.go)
//
// What each annotation map may hold is in annotations.go; the scope grammar
// is in grammar.go.
package scope

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/fields"
	"github.com/gatehouse-dev/gatehouse/policies/workload"
)

// Codes reported by SCOPE. Every code denies unless marked "warns".
const (
	// ScopeEntryEmpty: the scope annotation has an empty entry (",,", or a
	// leading or trailing ",").
	ScopeEntryEmpty policies.Code = "ScopeEntryEmpty"
	// ScopeEmpty warns: the whole scope annotation is empty, which
	// secret-operator reads as no scope.
	ScopeEmpty policies.Code = "ScopeEmpty"
	// ScopeValueMissing: a service or listener-volume entry has no name.
	ScopeValueMissing policies.Code = "ScopeValueMissing"
	// ScopeValueHasDelimiter: an entry's name contains "=".
	ScopeValueHasDelimiter policies.Code = "ScopeValueHasDelimiter"
	// ScopeUnexpectedValue: a node or pod entry carries "=".
	ScopeUnexpectedValue policies.Code = "ScopeUnexpectedValue"
	// ScopeUnknownKey warns: an entry whose key secret-operator does not know.
	ScopeUnknownKey policies.Code = "ScopeUnknownKey"
	// ScopeKeyMissing: an entry with "=" but nothing before it ("=x", "=").
	ScopeKeyMissing policies.Code = "ScopeKeyMissing"
	// ScopeServiceNameInvalid: a service name (service=<name>, or a
	// CredentialsScope services[i]) that is not a Service name (DNS-1035
	// label), such as "*", which secret-operator turns into a wildcard SAN.
	ScopeServiceNameInvalid policies.Code = "ScopeServiceNameInvalid"
	// ScopeListenerVolumeNameInvalid: a listener volume name
	// (listener-volume=<name>, or a CredentialsScope listenerVolumes[i]) that
	// is not a volume name (DNS-1123 label).
	ScopeListenerVolumeNameInvalid policies.Code = "ScopeListenerVolumeNameInvalid"

	// ScopeNameEmpty: a CredentialsScope name is empty or not a string.
	ScopeNameEmpty policies.Code = "ScopeNameEmpty"
	// ScopeNameHasDelimiter: a CredentialsScope name contains "," or "=".
	ScopeNameHasDelimiter policies.Code = "ScopeNameHasDelimiter"
	// ScopeWalkLimit: the custom resource nests deeper than the API server
	// accepts (crwalk.go), so the walk stopped there. It never ratchets.
	ScopeWalkLimit policies.Code = "ScopeWalkLimit"

	// SecretClassMissing: secrets.kubedoop.dev/* annotations without a class.
	SecretClassMissing policies.Code = "SecretClassMissing"
	// SecretFormatUnknown warns: a format other than tls-pem, tls-p12,
	// kerberos, which secret-operator stores as given and serves as PEM.
	SecretFormatUnknown policies.Code = "SecretFormatUnknown"
	// SecretDurationInvalid: a certificate lifetime or restart buffer that is
	// not a positive Go duration.
	SecretDurationInvalid policies.Code = "SecretDurationInvalid"
	// SecretJitterFactorInvalid: a jitter factor outside [0, 1).
	SecretJitterFactorInvalid policies.Code = "SecretJitterFactorInvalid"
	// SecretJitterFactorZero warns: secret-operator reads a jitter factor of
	// 0 as its default, 0.2.
	SecretJitterFactorZero policies.Code = "SecretJitterFactorZero"
	// SecretCertLifetimeUnissuable: a certificate lifetime at or under the
	// restart buffer, which secret-operator never issues (certlife.go).
	SecretCertLifetimeUnissuable policies.Code = "SecretCertLifetimeUnissuable"
	// SecretCertLifetimeMayFail warns: a lifetime that, shortened by the
	// jitter, can end inside the restart buffer, so issuance fails at random.
	SecretCertLifetimeMayFail policies.Code = "SecretCertLifetimeMayFail"
	// SecretPasswordReadable warns: the PKCS#12 password sits in a PVC
	// annotation (or is secret-operator's well-known default).
	SecretPasswordReadable policies.Code = "SecretPasswordReadable"
	// SecretAnnotationUnknown warns: a secrets.kubedoop.dev/ key that
	// secret-operator does not read.
	SecretAnnotationUnknown policies.Code = "SecretAnnotationUnknown"
)

var persistentVolumeClaim = schema.GroupKind{Kind: "PersistentVolumeClaim"}

var statefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}

// Validate evaluates one object of kind gk. A PersistentVolumeClaim and the
// kinds in workload.Kinds() are read by their known shape; any other kind is
// taken for a product custom resource (the caller passes only the selected
// ones) and walked generically. Findings come back sorted.
func Validate(gk schema.GroupKind, obj map[string]any) []policies.Finding {
	var findings []policies.Finding
	switch {
	case gk == persistentVolumeClaim:
		findings = checkAnnotations(field.NewPath("metadata", "annotations"), fields.StringMap(obj, "metadata", "annotations"))
	case isWorkload(gk):
		findings = validateWorkload(gk, obj)
	default:
		findings = walkCustomResource(obj)
	}
	policies.Sort(findings)
	return findings
}

func isWorkload(gk schema.GroupKind) bool {
	_, ok := workload.Lookup(gk)
	return ok
}

// validateWorkload checks the ephemeral volumes of the pod (template) and, for
// a StatefulSet, its volumeClaimTemplates.
func validateWorkload(gk schema.GroupKind, obj map[string]any) []policies.Finding {
	var findings []policies.Finding
	if pod, ok := workload.PodOf(gk, obj); ok {
		findings = append(findings, validateEphemeralVolumes(pod.SpecPath, pod.Spec)...)
	}
	if gk == statefulSet {
		templatesPath := field.NewPath("spec", "volumeClaimTemplates")
		templates, _ := fields.Slice(obj, "spec", "volumeClaimTemplates")
		for i, item := range templates {
			if template, ok := item.(map[string]any); ok {
				findings = append(findings, checkAnnotations(
					templatesPath.Index(i).Child("metadata", "annotations"),
					fields.StringMap(template, "metadata", "annotations"))...)
			}
		}
	}
	return findings
}

// validateEphemeralVolumes checks
// <specPath>.volumes[*].ephemeral.volumeClaimTemplate.metadata.annotations.
func validateEphemeralVolumes(specPath *field.Path, spec map[string]any) []policies.Finding {
	var findings []policies.Finding
	volumes, _ := fields.Slice(spec, "volumes")
	for i, item := range volumes {
		volume, ok := item.(map[string]any)
		if !ok {
			continue
		}
		annotations := fields.StringMap(volume, "ephemeral", "volumeClaimTemplate", "metadata", "annotations")
		if annotations == nil {
			continue
		}
		path := specPath.Child("volumes").Index(i).Child("ephemeral", "volumeClaimTemplate", "metadata", "annotations")
		findings = append(findings, checkAnnotations(path, annotations)...)
	}
	return findings
}
