// This file checks one PVC annotation map that carries at least one
// secrets.kubedoop.dev/ key; maps without one are not secret-operator's and
// are left alone. It reads these keys (upstream) and allows:
//
//   - class: required and non-empty;
//   - scope: the grammar in grammar.go;
//   - format: tls-pem, tls-p12 or kerberos; any other value warns, because
//     secret-operator stores it as given and writes PEM for everything but
//     tls-p12 (upstream: NewvolumeContextFromMap, certificateConvert);
//   - autoTlsCertLifetime, autoTlsCertRestartBuffer: a Go duration > 0;
//   - autoTlsCertJitterFactor: a float64 in [0, 1); 0 warns, because
//     secret-operator reads it as its default 0.2;
//   - the three together: a lifetime secret-operator can issue (certlife.go);
//   - tlsPKCS12Password: allowed, but warns, and so does tls-p12 without it
//     (secret-operator then uses its well-known default password);
//   - kerberosServiceNames, pod-info: anything;
//   - any other key under the prefix: allowed, but warns.
//
// Messages name keys but never repeat a value.
package scope

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// AnnotationPrefix begins every annotation key secret-operator reads
// (upstream); SCOPE judges only annotation maps with such a key.
const AnnotationPrefix = "secrets.kubedoop.dev/"

// Annotation keys (upstream, secret-operator).
const (
	annotationPrefix = AnnotationPrefix

	annotationClass                    = annotationPrefix + "class"
	annotationScope                    = annotationPrefix + "scope"
	annotationFormat                   = annotationPrefix + "format"
	annotationPKCS12Password           = annotationPrefix + "tlsPKCS12Password"
	annotationAutoTLSCertLifetime      = annotationPrefix + "autoTlsCertLifetime"
	annotationAutoTLSCertJitterFactor  = annotationPrefix + "autoTlsCertJitterFactor"
	annotationAutoTLSCertRestartBuffer = annotationPrefix + "autoTlsCertRestartBuffer"
	annotationKerberosServiceNames     = annotationPrefix + "kerberosServiceNames"
	annotationPodInfo                  = annotationPrefix + "pod-info"
)

// Secret formats (upstream).
const (
	formatTLSPEM   = "tls-pem"
	formatTLSP12   = "tls-p12"
	formatKerberos = "kerberos"
)

// Messages of the warnings, kept as constants so that they read the same
// wherever they are raised.
const (
	msgPasswordReadable = "the PKCS#12 password is readable by anyone who can get PersistentVolumeClaims in this namespace; " +
		"treat it as public and do not reuse it"
	msgDefaultPasswordReadable = "the tls-p12 format without " + annotationPKCS12Password + " makes secret-operator use its " +
		"well-known default password (changeit), and " + msgPasswordReadable
	msgAnnotationUnknown = "secret-operator does not read this " + annotationPrefix + " key and ignores it; check its spelling"
	msgFormatUnknown     = "secret-operator knows the formats " + formatTLSPEM + ", " + formatTLSP12 + " and " + formatKerberos +
		"; it stores any other value as given and writes PEM files for it, as for " + formatTLSPEM
	msgJitterFactorZero = "secret-operator reads a jitter factor of 0 as its default, 0.2, so certificates still expire " +
		"up to 20% early; for a nearly fixed lifetime set a small positive factor such as 0.01"
)

// checkAnnotations checks the annotation map at path.
func checkAnnotations(path *field.Path, annotations map[string]string) []policies.Finding {
	keys := secretKeys(annotations)
	if len(keys) == 0 {
		return nil
	}
	var findings []policies.Finding
	if class := annotations[annotationClass]; class == "" {
		findings = append(findings, policies.Denial(SecretClassMissing, path.Key(annotationClass), class, "%s", msgSecretClassMissing))
	}
	for _, key := range keys {
		findings = append(findings, checkAnnotation(path, key, annotations[key])...)
	}
	findings = append(findings, checkCertLife(path, annotations)...)
	if _, hasPassword := annotations[annotationPKCS12Password]; !hasPassword && annotations[annotationFormat] == formatTLSP12 {
		findings = append(findings, policies.Warning(SecretPasswordReadable, path.Key(annotationPKCS12Password), "",
			msgDefaultPasswordReadable))
	}
	return findings
}

// checkAnnotation checks one secrets.kubedoop.dev/ annotation of the map at
// path. Key paths are built only for findings: this is the hot path of every
// Pod admission.
func checkAnnotation(path *field.Path, key, value string) []policies.Finding {
	switch key {
	case annotationScope:
		_, findings := ParseScope(value, path.Key(key))
		return findings
	case annotationFormat:
		if value != formatTLSPEM && value != formatTLSP12 && value != formatKerberos {
			return []policies.Finding{policies.Warning(SecretFormatUnknown, path.Key(key), value, "%s", msgFormatUnknown)}
		}
	case annotationAutoTLSCertLifetime, annotationAutoTLSCertRestartBuffer:
		if d, err := time.ParseDuration(value); err != nil || d <= 0 {
			return []policies.Finding{policies.Denial(SecretDurationInvalid, path.Key(key), value,
				"the value must be a positive Go duration such as 24h or 90m")}
		}
	case annotationAutoTLSCertJitterFactor:
		if !validJitterFactor(value) {
			return []policies.Finding{policies.Denial(SecretJitterFactorInvalid, path.Key(key), value,
				"the jitter factor must be a number from 0 up to but excluding 1, such as 0.2")}
		}
		if f, _ := strconv.ParseFloat(value, 64); f == 0 {
			return []policies.Finding{policies.Warning(SecretJitterFactorZero, path.Key(key), value, "%s", msgJitterFactorZero)}
		}
	case annotationPKCS12Password:
		return []policies.Finding{policies.Warning(SecretPasswordReadable, path.Key(key), value, msgPasswordReadable)}
	case annotationClass, annotationKerberosServiceNames, annotationPodInfo:
	default:
		return []policies.Finding{policies.Warning(SecretAnnotationUnknown, path.Key(key), value, msgAnnotationUnknown)}
	}
	return nil
}

// secretKeys returns the sorted secrets.kubedoop.dev/ keys of annotations.
func secretKeys(annotations map[string]string) []string {
	var keys []string
	for key := range annotations {
		if strings.HasPrefix(key, annotationPrefix) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

func validJitterFactor(value string) bool {
	f, err := strconv.ParseFloat(value, 64)
	return err == nil && !math.IsNaN(f) && f >= 0 && f < 1
}
