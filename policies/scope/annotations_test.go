package scope

import (
	"slices"
	"testing"

	"github.com/gatehouse-dev/gatehouse/policies"
)

func TestAnnotations(t *testing.T) {
	const at = "metadata.annotations"
	key := func(k string) string { return at + "[" + k + "]" }
	tests := []struct {
		name        string
		annotations map[string]any // nil: no annotations at all
		want        []result
	}{
		{name: "no annotations"},
		{name: "no secret annotations", annotations: map[string]any{"example.com/x": "y", "secrets.kubedoop.dev.evil/x": "y"}},
		{name: "minimal", annotations: map[string]any{annotationClass: "tls"}},
		{name: "every known key valid", annotations: map[string]any{
			annotationClass: "tls", annotationScope: "pod,node", annotationFormat: "kerberos",
			annotationAutoTLSCertLifetime: "24h", annotationAutoTLSCertRestartBuffer: "10m", annotationAutoTLSCertJitterFactor: "0.2",
			annotationKerberosServiceNames: "HTTP,hdfs", annotationPodInfo: "anything",
		}},
		{name: "jitter zero", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "0"},
			want: []result{warn(SecretJitterFactorZero, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter zero written otherwise", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "0.000"},
			want: []result{warn(SecretJitterFactorZero, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter tiny", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "0.01"}},

		// Lifetimes, judged together with secret-operator's defaults
		// (168h lifetime, 8h buffer, 0.2 jitter; jitter 0 reads as 0.2).
		{name: "lifetime above buffer after the worst jitter", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "10h", annotationAutoTLSCertRestartBuffer: "8h", annotationAutoTLSCertJitterFactor: "0.2"}},
		{name: "lifetime exactly buffer after the worst jitter", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "10h", annotationAutoTLSCertRestartBuffer: "8h"}},
		{name: "lifetime equal to buffer", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "8h", annotationAutoTLSCertRestartBuffer: "8h"},
			want: []result{deny(SecretCertLifetimeUnissuable, key(annotationAutoTLSCertLifetime))}},
		{name: "lifetime under the default buffer", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "1h"},
			want: []result{deny(SecretCertLifetimeUnissuable, key(annotationAutoTLSCertLifetime))}},
		{name: "lifetime at the default buffer", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "8h"},
			want: []result{deny(SecretCertLifetimeUnissuable, key(annotationAutoTLSCertLifetime))}},
		{name: "buffer at the default lifetime", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertRestartBuffer: "168h"},
			want: []result{deny(SecretCertLifetimeUnissuable, key(annotationAutoTLSCertRestartBuffer))}},
		{name: "buffer over the default lifetime's worst jitter", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertRestartBuffer: "135h"},
			want: []result{warn(SecretCertLifetimeMayFail, key(annotationAutoTLSCertRestartBuffer))}},
		{name: "buffer at the default lifetime's worst jitter", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertRestartBuffer: "134h24m"}},
		{name: "lifetime fails at random", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "9h", annotationAutoTLSCertRestartBuffer: "8h"},
			want: []result{warn(SecretCertLifetimeMayFail, key(annotationAutoTLSCertLifetime))}},
		{name: "jitter zero means 0.2, so fails at random", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "9h", annotationAutoTLSCertJitterFactor: "0"},
			want: []result{
				warn(SecretJitterFactorZero, key(annotationAutoTLSCertJitterFactor)),
				warn(SecretCertLifetimeMayFail, key(annotationAutoTLSCertLifetime)),
			}},
		{name: "small jitter keeps a short lifetime issuable", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "9h", annotationAutoTLSCertJitterFactor: "0.1"}},
		{name: "large jitter alone fails at random with the defaults", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertJitterFactor: "0.99"},
			want: []result{warn(SecretCertLifetimeMayFail, key(annotationAutoTLSCertJitterFactor))}},
		{name: "an invalid duration is judged alone", annotations: map[string]any{annotationClass: "tls",
			annotationAutoTLSCertLifetime: "1h", annotationAutoTLSCertRestartBuffer: "8 hours"},
			want: []result{deny(SecretDurationInvalid, key(annotationAutoTLSCertRestartBuffer))}},

		{name: "class missing", annotations: map[string]any{annotationScope: "pod"},
			want: []result{deny(SecretClassMissing, key(annotationClass))}},
		{name: "class empty", annotations: map[string]any{annotationClass: "", annotationScope: "pod"},
			want: []result{deny(SecretClassMissing, key(annotationClass))}},
		{name: "class not a string", annotations: map[string]any{annotationClass: float64(1), annotationScope: "pod"},
			want: []result{deny(SecretClassMissing, key(annotationClass))}},

		{name: "scope grammar", annotations: map[string]any{annotationClass: "tls", annotationScope: "pod,,node"},
			want: []result{deny(ScopeEntryEmpty, key(annotationScope))}},

		{name: "format unknown", annotations: map[string]any{annotationClass: "tls", annotationFormat: "pem"},
			want: []result{warn(SecretFormatUnknown, key(annotationFormat))}},
		{name: "format empty", annotations: map[string]any{annotationClass: "tls", annotationFormat: ""},
			want: []result{warn(SecretFormatUnknown, key(annotationFormat))}},
		{name: "format wrong case", annotations: map[string]any{annotationClass: "tls", annotationFormat: "TLS-PEM"},
			want: []result{warn(SecretFormatUnknown, key(annotationFormat))}},

		{name: "lifetime not a duration", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "7"},
			want: []result{deny(SecretDurationInvalid, key(annotationAutoTLSCertLifetime))}},
		{name: "lifetime days", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "7d"},
			want: []result{deny(SecretDurationInvalid, key(annotationAutoTLSCertLifetime))}},
		{name: "lifetime zero", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "0s"},
			want: []result{deny(SecretDurationInvalid, key(annotationAutoTLSCertLifetime))}},
		{name: "restart buffer negative", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertRestartBuffer: "-1h"},
			want: []result{deny(SecretDurationInvalid, key(annotationAutoTLSCertRestartBuffer))}},

		{name: "jitter one", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "1.0"},
			want: []result{deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter negative", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "-0.1"},
			want: []result{deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter NaN", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "NaN"},
			want: []result{deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter Inf", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "-Inf"},
			want: []result{deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor))}},
		{name: "jitter text", annotations: map[string]any{annotationClass: "tls", annotationAutoTLSCertJitterFactor: "low"},
			want: []result{deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor))}},

		{name: "tls-p12 default password", annotations: map[string]any{annotationClass: "tls", annotationFormat: "tls-p12"},
			want: []result{warn(SecretPasswordReadable, key(annotationPKCS12Password))}},
		{name: "tls-p12 with password", annotations: map[string]any{annotationClass: "tls", annotationFormat: "tls-p12", annotationPKCS12Password: "hunter2"},
			want: []result{warn(SecretPasswordReadable, key(annotationPKCS12Password))}},
		{name: "password without tls-p12", annotations: map[string]any{annotationClass: "tls", annotationPKCS12Password: "changeit"},
			want: []result{warn(SecretPasswordReadable, key(annotationPKCS12Password))}},

		{name: "unknown key", annotations: map[string]any{annotationClass: "tls", "secrets.kubedoop.dev/scopes": "pod"},
			want: []result{warn(SecretAnnotationUnknown, key("secrets.kubedoop.dev/scopes"))}},
		{name: "only an unknown key", annotations: map[string]any{"secrets.kubedoop.dev/": "x"},
			want: []result{warn(SecretAnnotationUnknown, key("secrets.kubedoop.dev/")), deny(SecretClassMissing, key(annotationClass))}},

		{name: "everything wrong, sorted by path", annotations: map[string]any{
			annotationScope: "service", annotationFormat: "x", annotationAutoTLSCertLifetime: "x",
			annotationAutoTLSCertJitterFactor: "x", annotationAutoTLSCertRestartBuffer: "x", "secrets.kubedoop.dev/zz": "x",
		}, want: []result{
			deny(SecretJitterFactorInvalid, key(annotationAutoTLSCertJitterFactor)),
			deny(SecretDurationInvalid, key(annotationAutoTLSCertLifetime)),
			deny(SecretDurationInvalid, key(annotationAutoTLSCertRestartBuffer)),
			deny(SecretClassMissing, key(annotationClass)),
			warn(SecretFormatUnknown, key(annotationFormat)),
			deny(ScopeValueMissing, key(annotationScope)),
			warn(SecretAnnotationUnknown, key("secrets.kubedoop.dev/zz")),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := basePVC()
			if tt.annotations == nil {
				delete(dig(obj, "metadata"), "annotations")
			} else {
				dig(obj, "metadata")["annotations"] = tt.annotations
			}
			if got := results(Validate(gkPVC, obj)); !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant       %v", got, tt.want)
			}
		})
	}
}

// TestCertLifeEvidence: the lifetime findings fingerprint all three values,
// so a change to any of them ends a ratchet, and a change elsewhere does not.
func TestCertLifeEvidence(t *testing.T) {
	evidence := func(tweak map[string]any) uint64 {
		t.Helper()
		annotations := map[string]any{annotationClass: "tls", annotationAutoTLSCertLifetime: "9h",
			annotationAutoTLSCertRestartBuffer: "8h", annotationAutoTLSCertJitterFactor: "0.2"}
		for k, v := range tweak {
			if v == nil {
				delete(annotations, k)
			} else {
				annotations[k] = v
			}
		}
		obj := basePVC()
		dig(obj, "metadata")["annotations"] = annotations
		findings := Validate(gkPVC, obj)
		if len(findings) != 1 || findings[0].Code != SecretCertLifetimeMayFail {
			t.Fatalf("want one %s, got %+v", SecretCertLifetimeMayFail, findings)
		}
		return findings[0].Evidence
	}
	base := evidence(nil)
	if evidence(map[string]any{annotationScope: "pod"}) != base {
		t.Error("another annotation changed the evidence")
	}
	for _, tweak := range []map[string]any{
		{annotationAutoTLSCertLifetime: "8h30m"},
		{annotationAutoTLSCertRestartBuffer: "7h59m"},
		{annotationAutoTLSCertJitterFactor: "0.3"},
		{annotationAutoTLSCertJitterFactor: nil},
	} {
		if evidence(tweak) == base {
			t.Errorf("%v left the evidence unchanged", tweak)
		}
	}
}

// TestAnnotationEvidence: the evidence of a finding is the offending value,
// so the webhook can ratchet an unchanged one.
func TestAnnotationEvidence(t *testing.T) {
	obj := basePVC()
	annotations := dig(obj, "metadata", "annotations")
	annotations[annotationFormat] = "pem"
	annotations[annotationAutoTLSCertLifetime] = "7d"
	for _, f := range Validate(gkPVC, obj) {
		var want string
		switch f.Code {
		case SecretFormatUnknown:
			want = "pem"
		case SecretDurationInvalid:
			want = "7d"
		default:
			t.Fatalf("unexpected finding %+v", f)
		}
		if f.Evidence != policies.Fingerprint(want) {
			t.Errorf("%s: evidence is not the annotation value", f.Code)
		}
	}
}
