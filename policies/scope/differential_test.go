package scope

// A differential test of SCOPE against what secret-operator and operator-go
// do with the same annotations. Neither module is served by the Go module
// proxy (github.com/zncdatadev/secret-operator and operator-go answer 403
// there), so their code cannot be imported; the few functions that decide
// what a scope or a lifetime becomes are transcribed below, statement by
// statement, from these files (Apache-2.0):
//
//   - github.com/zncdatadev/secret-operator at commit
//     48b36fafc92d9911f8a3f57b515acee0f9f1e580:
//     pkg/volume/volume.go (decodeScope; the parsing of
//     autoTlsCertLifetime, autoTlsCertRestartBuffer and
//     autoTlsCertJitterFactor in NewvolumeContextFromMap),
//     pkg/pod_info/pod_info.go (getFQDN: the SAN of a service scope),
//     internal/csi/backend/autotls.go (getCertLife, with the random draw
//     passed in instead of rand.Float64);
//   - github.com/zncdatadev/operator-go at commit
//     e8a9495214292661c73d5b5ddd39dc56f6ee9ac5:
//     pkg/security/secret_provisioner.go (validateScope).
//
// Only control flow and arithmetic are transcribed; logging is left out. When
// upstream changes these files, re-transcribe them and let this test say
// where gatehouse's verdicts must follow.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/internal/golden"
)

// upstreamScope is secret-operator's SecretScope.
type upstreamScope struct {
	pod, node       bool
	services        []string
	listenerVolumes []string
}

// upstreamDecodeScope is secret-operator's decodeScope. It panics where
// decodeScope panics (a service or listener-volume entry without "=").
func upstreamDecodeScope(scopes string) upstreamScope {
	s := upstreamScope{}
	for _, scope := range strings.Split(scopes, ",") {
		kv := strings.Split(scope, "=")
		switch kv[0] {
		case "pod":
			s.pod = true
		case "node":
			s.node = true
		case "service":
			s.services = append(s.services, kv[1])
		case "listener-volume":
			s.listenerVolumes = append(s.listenerVolumes, kv[1])
		default:
			// "Unknown scope, skip it"
		}
	}
	return s
}

// upstreamFQDN is secret-operator's getFQDN: the SAN a service scope adds.
func upstreamFQDN(subdomain, namespace string) string {
	return fmt.Sprintf("%s.%s.svc.cluster.local", subdomain, namespace)
}

// upstreamValidateScope is operator-go's validateScope.
func upstreamValidateScope(scope string) error {
	if scope == "" {
		return nil
	}
	for _, entry := range strings.Split(scope, ",") {
		key, value, _ := strings.Cut(entry, "=")
		if key == "" {
			return fmt.Errorf("secret scope %q contains an empty entry", scope)
		}
		if (key == "service" || key == "listener-volume") && value == "" {
			return fmt.Errorf("secret scope entry %q must be %s=<name>", entry, key)
		}
	}
	return nil
}

// upstreamVolumeContext holds what NewvolumeContextFromMap reads of the
// lifetime annotations.
type upstreamVolumeContext struct {
	lifetime, buffer time.Duration
	jitter           float64
}

// upstreamParseLifetimes is the lifetime part of NewvolumeContextFromMap.
func upstreamParseLifetimes(annotations map[string]string) (upstreamVolumeContext, error) {
	var v upstreamVolumeContext
	for key, value := range annotations {
		switch key {
		case annotationAutoTLSCertLifetime:
			d, err := time.ParseDuration(value)
			if err != nil {
				return v, err
			}
			v.lifetime = d
		case annotationAutoTLSCertJitterFactor:
			f, err := fmt.Sscanf(value, "%f", &v.jitter)
			if err != nil || f != 1 {
				return v, fmt.Errorf("failed to parse jitter factor: %s", value)
			}
		case annotationAutoTLSCertRestartBuffer:
			d, err := time.ParseDuration(value)
			if err != nil {
				return v, err
			}
			v.buffer = d
		}
	}
	return v, nil
}

// upstreamGetCertLife is getCertLife with the SecretClass's
// maxCertificateLifeTime set high enough not to clamp, and draw standing for
// rand.Float64(). It reports whether a certificate is issued and how long
// after issuance secret-operator restarts the pod (GetSecretData's
// ExpiresTime: notAfter minus the buffer).
func upstreamGetCertLife(v upstreamVolumeContext, draw float64) (issued bool, restartAfter time.Duration) {
	certLife := v.lifetime
	if certLife == 0 {
		certLife = 24 * 7 * time.Hour
	}
	restarterBuffer := v.buffer
	if restarterBuffer == 0 {
		restarterBuffer = 8 * time.Hour
	}
	jitterFactor := v.jitter
	if !(0.0 < jitterFactor && jitterFactor < 1.0) {
		jitterFactor = 0.2
	}
	randomJitterFactor := draw * jitterFactor
	jitterLife := time.Duration(float64(certLife) * randomJitterFactor)
	jitteredCertLife := certLife - jitterLife
	now := time.Unix(1_800_000_000, 0)
	notAfter := now.Add(jitteredCertLife)
	podExpires := notAfter.Add(-restarterBuffer)
	if podExpires.Before(now) {
		return false, 0
	}
	return true, podExpires.Sub(now)
}

// upstreamDraws are values of rand.Float64() the lifetime is tried with:
// the smallest positive one it returns (2^-53), a spread, and the largest.
var upstreamDraws = func() []float64 {
	draws := []float64{math.Ldexp(1, -53)}
	for k := 1; k < 16; k++ {
		draws = append(draws, float64(k)/16)
	}
	return append(draws, 1-math.Ldexp(1, -53))
}()

// scopeHarm says what secret-operator (and operator-go) would do wrong with
// a scope annotation value, or "" when it reads back exactly as written and
// every name it puts into the certificate names exactly one Service.
func scopeHarm(value string) (harm string) {
	defer func() {
		if recover() != nil {
			harm = "secret-operator panics"
		}
	}()
	if err := upstreamValidateScope(value); err != nil {
		return "operator-go rejects it"
	}
	decoded := upstreamDecodeScope(value)
	// Re-encode what was decoded, entry by entry in the order written, and
	// require that every known entry reads back as itself.
	services, listeners := slices.Clone(decoded.services), slices.Clone(decoded.listenerVolumes)
	for _, entry := range strings.Split(value, ",") {
		key, _, _ := strings.Cut(entry, "=")
		switch key {
		case "node", "pod":
			if entry != key {
				return "text after the key is dropped"
			}
		case "service":
			if entry != "service="+services[0] {
				return "text after the name is dropped"
			}
			san := upstreamFQDN(services[0], "ns")
			first, rest, _ := strings.Cut(san, ".")
			if rest != "ns.svc.cluster.local" || strings.Contains(san, "*") || !nameOracle(scopeService, first) {
				return "the SAN names no single Service"
			}
			services = services[1:]
		case "listener-volume":
			if entry != "listener-volume="+listeners[0] {
				return "text after the name is dropped"
			}
			// Pod volume names are DNS-1123 labels (the API server's pod
			// validation); any other name matches no volume.
			if !nameOracle(scopeListenerVolume, listeners[0]) {
				return "the listener volume matches no pod volume"
			}
			listeners = listeners[1:]
		}
	}
	return ""
}

// scopeCorpus is every scope annotation of the golden fixtures plus every
// scope of up to three entries built from tokens that reach each branch of
// the grammar.
func scopeCorpus(t *testing.T) []string {
	var corpus []string
	for _, annotations := range fixtureAnnotations(t) {
		if v, ok := annotations[annotationScope]; ok {
			corpus = append(corpus, v)
		}
	}
	keys := []string{"node", "pod", "service", "listener-volume", "", "zone", "Node"}
	names := []string{"", "web", "web-0", "0web", "Web", "*", "*.web", "web.other", "a=b", "=", strings.Repeat("a", 63), strings.Repeat("a", 64)}
	var entries []string
	for _, k := range keys {
		entries = append(entries, k)
		for _, n := range names {
			entries = append(entries, k+"="+n)
		}
	}
	corpus = append(corpus, entries...)
	for _, a := range entries {
		for _, b := range []string{"pod", "service=web", "", "=x", "listener-volume=lb"} {
			corpus = append(corpus, a+","+b, b+","+a)
		}
	}
	return corpus
}

// TestScopeAgainstUpstream: gatehouse denies a scope annotation exactly when
// secret-operator or operator-go would misread it, drop part of it, panic
// on it, or put a SAN into the certificate that names no single Service.
// Where the contract is deliberately stricter than upstream, the case is
// named here.
func TestScopeAgainstUpstream(t *testing.T) {
	for _, value := range scopeCorpus(t) {
		_, findings := ParseScope(value, scopePath())
		denied := policies.Denied(findings)
		harm := scopeHarm(value)
		switch {
		case value == "" && denied:
			// Stricter by contract: upstream reads an empty scope as no
			// scope at all; gatehouse asks to remove the annotation.
		case denied && harm == "":
			t.Errorf("scope %q: denied (%v), but upstream reads it exactly and names only Services", value, results(findings))
		case !denied && harm != "":
			t.Errorf("scope %q: allowed, but %s", value, harm)
		}
	}
}

// TestLifetimesAgainstUpstream: gatehouse's verdict on the lifetime
// annotations follows getCertLife over the draws of rand.Float64: denied
// when no draw issues a usable certificate, a warning when some draws do and
// some do not, silent when every draw does; and a jitter factor gatehouse
// accepts is the number secret-operator reads.
func TestLifetimesAgainstUpstream(t *testing.T) {
	durations := []string{"", "1s", "1h", "7h59m59s", "8h", "8h0m0.000000001s", "9h", "9h59m59s", "10h", "10h0m1s",
		"24h", "134h24m", "135h", "167h59m", "168h", "169h", "1000h"}
	jitters := []string{"", "0", "0.0", "0.01", "0.1", "0.2", "0.5", "0.9", "0.99", ".5", "5e-1", "0x1p-3", "+0.25", "-0",
		"0.999999", "1e-300"}
	type verdict int
	const (
		silent verdict = iota
		warned
		denied
	)
	for _, lifetime := range durations {
		for _, buffer := range durations {
			for _, jitter := range jitters {
				annotations := map[string]string{annotationClass: "tls"}
				for key, v := range map[string]string{annotationAutoTLSCertLifetime: lifetime,
					annotationAutoTLSCertRestartBuffer: buffer, annotationAutoTLSCertJitterFactor: jitter} {
					if v != "" {
						annotations[key] = v
					}
				}
				findings := checkAnnotations(scopePath(), annotations)
				if slices.ContainsFunc(findings, func(f policies.Finding) bool {
					return f.Code == SecretDurationInvalid || f.Code == SecretJitterFactorInvalid
				}) {
					t.Fatalf("%v: the corpus holds only valid values, got %+v", annotations, results(findings))
				}
				got := silent
				for _, f := range findings {
					switch f.Code {
					case SecretCertLifetimeUnissuable:
						got = denied
					case SecretCertLifetimeMayFail:
						got = warned
					}
				}

				v, err := upstreamParseLifetimes(annotations)
				if err != nil {
					t.Fatalf("%v: gatehouse accepts it, secret-operator cannot parse it: %v", annotations, err)
				}
				if want, _ := readCertLife(annotations); jitter != "" && v.jitter != 0 && v.jitter != want.jitter {
					t.Errorf("jitter %q: secret-operator reads %v, gatehouse %v", jitter, v.jitter, want.jitter)
				}
				// A certificate whose pod is restarted the instant it is
				// issued serves nothing: it counts as not issued. (Only
				// that way does lifetime = buffer issue at all, for draws
				// below 1/(lifetime in ns × jitter), about one in 10^13.)
				issued := 0
				for _, draw := range upstreamDraws {
					if ok, restartAfter := upstreamGetCertLife(v, draw); ok && restartAfter > 0 {
						issued++
					}
				}
				want := warned
				switch issued {
				case 0:
					want = denied
				case len(upstreamDraws):
					want = silent
				}
				if got != want {
					t.Errorf("%v: gatehouse verdict %d, secret-operator issues at %d of %d draws (want verdict %d)",
						annotations, got, issued, len(upstreamDraws), want)
				}
			}
		}
	}
}

// TestJitterZeroAgainstUpstream: a jitter factor gatehouse calls 0 (and warns
// about) is one secret-operator replaces with its default.
func TestJitterZeroAgainstUpstream(t *testing.T) {
	for _, jitter := range []string{"0", "0.0", "-0", "0e10", "0x0p0", "0.2", "0.01"} {
		annotations := map[string]string{annotationClass: "tls", annotationAutoTLSCertJitterFactor: jitter}
		warned := slices.ContainsFunc(checkAnnotations(scopePath(), annotations), func(f policies.Finding) bool {
			return f.Code == SecretJitterFactorZero
		})
		v, err := upstreamParseLifetimes(annotations)
		if err != nil {
			t.Fatalf("jitter %q: %v", jitter, err)
		}
		if defaulted := !(0.0 < v.jitter && v.jitter < 1.0); warned != defaulted {
			t.Errorf("jitter %q: gatehouse warns %v, secret-operator replaces it with the default %v", jitter, warned, defaulted)
		}
	}
}

// fixtureAnnotations returns every map of string values under an
// "annotations" key in the golden fixtures.
func fixtureAnnotations(t *testing.T) []map[string]string {
	t.Helper()
	var out []map[string]string
	var visit func(v any, key string)
	visit = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			if key == "annotations" {
				m := map[string]string{}
				for k, val := range v {
					if s, ok := val.(string); ok {
						m[k] = s
					}
				}
				out = append(out, m)
			}
			for k, child := range v {
				visit(child, k)
			}
		case []any:
			for _, child := range v {
				visit(child, "")
			}
		}
	}
	for _, file := range golden.FixtureFiles(t, filepath.Join("testdata", "*", "*.yaml")) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var obj any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		visit(obj, "")
	}
	if len(out) == 0 {
		t.Fatal("no annotations in the fixtures")
	}
	return out
}
