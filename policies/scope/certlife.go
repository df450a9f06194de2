// This file judges the certificate lifetime annotations together, as
// secret-operator's getCertLife does (upstream, internal/csi/backend/
// autotls.go). It reads autoTlsCertLifetime (default 7 days),
// autoTlsCertRestartBuffer (default 8h) and autoTlsCertJitterFactor
// (default 0.2; a stated 0 reads as the default) of one annotation map, and
// only when at least one of them is set and every one set is valid (the
// single-key checks in annotations.go report the others).
//
// secret-operator shortens the lifetime by a random part of it, up to the
// jitter factor, and refuses to issue a certificate that would expire inside
// the restart buffer. So it allows:
//
//   - lifetime × (1 − jitter) ≥ buffer: always issuable;
//   - buffer < lifetime, but lifetime × (1 − jitter) < buffer: issuable only
//     when the random jitter is small enough, so it warns
//     (SecretCertLifetimeMayFail);
//
// and denies lifetime ≤ buffer (SecretCertLifetimeUnissuable), which even
// the least jitter turns into a refusal. A SecretClass's
// maxCertificateLifeTime can shorten the lifetime further; SecretClasses are
// not part of the object, so that is not judged here.
package scope

import (
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// secret-operator's defaults (upstream, autotls.go).
const (
	defaultCertLifetime      = 7 * 24 * time.Hour
	defaultCertRestartBuffer = 8 * time.Hour
	defaultCertJitterFactor  = 0.2
)

// certLifeKeys are the annotations checkCertLife reads, in the order in
// which a finding is placed at the first one set.
var certLifeKeys = []string{annotationAutoTLSCertLifetime, annotationAutoTLSCertRestartBuffer, annotationAutoTLSCertJitterFactor}

// certLife is what secret-operator makes of the three annotations.
type certLife struct {
	lifetime, buffer time.Duration
	jitter           float64
	// stated records which of lifetime, buffer and jitter the map sets.
	stated [3]bool
}

// readCertLife reads the three annotations; ok is false when none is set or
// one that is set is invalid.
func readCertLife(annotations map[string]string) (c certLife, ok bool) {
	c = certLife{lifetime: defaultCertLifetime, buffer: defaultCertRestartBuffer, jitter: defaultCertJitterFactor}
	for i, key := range certLifeKeys {
		value, set := annotations[key]
		if !set {
			continue
		}
		c.stated[i] = true
		switch key {
		case annotationAutoTLSCertJitterFactor:
			if !validJitterFactor(value) {
				return c, false
			}
			if f, _ := strconv.ParseFloat(value, 64); f > 0 {
				c.jitter = f
			}
		default:
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				return c, false
			}
			if key == annotationAutoTLSCertLifetime {
				c.lifetime = d
			} else {
				c.buffer = d
			}
		}
	}
	return c, c.stated != [3]bool{}
}

// shortest is the shortest lifetime the jitter can leave, computed as
// secret-operator computes a jittered lifetime.
func (c certLife) shortest() time.Duration {
	return c.lifetime - time.Duration(float64(c.lifetime)*c.jitter)
}

// checkCertLife checks the annotation map at path.
func checkCertLife(path *field.Path, annotations map[string]string) []policies.Finding {
	c, ok := readCertLife(annotations)
	if !ok {
		return nil
	}
	evidence := certLifeEvidence(annotations)
	switch {
	case c.lifetime <= c.buffer:
		return []policies.Finding{policies.Denial(SecretCertLifetimeUnissuable, path.Key(c.firstStated(2)), evidence,
			"the certificate lifetime%s is not longer than the restart buffer%s, so secret-operator can never issue the "+
				"certificate (a pod would have to restart before it got one); make the lifetime longer than the buffer, "+
				"by more than the jitter factor's share of it",
			c.defaulted(0, " (7 days by default)"), c.defaulted(1, " (8h by default)"))}
	case c.shortest() < c.buffer:
		return []policies.Finding{policies.Warning(SecretCertLifetimeMayFail, path.Key(c.firstStated(3)), evidence,
			"the certificate lifetime%s, shortened by up to the jitter factor%s, can end inside the restart buffer%s; "+
				"secret-operator then refuses to issue the certificate, so volumes fail to mount at random; "+
				"make lifetime × (1 − jitter factor) at least the restart buffer",
			c.defaulted(0, " (7 days by default)"), c.defaulted(2, " (0.2 by default)"), c.defaulted(1, " (8h by default)"))}
	}
	return nil
}

// firstStated returns the first of the first n certLifeKeys that is set.
func (c certLife) firstStated(n int) string {
	for i := range n {
		if c.stated[i] {
			return certLifeKeys[i]
		}
	}
	return certLifeKeys[n-1]
}

// defaulted returns note when certLifeKeys[i] is not set, so that a message
// says where a default took part.
func (c certLife) defaulted(i int, note string) string {
	if c.stated[i] {
		return ""
	}
	return note
}

// certLifeEvidence fingerprints the three annotations together, so that a
// change to any of them ends the ratchet.
func certLifeEvidence(annotations map[string]string) string {
	var b strings.Builder
	for _, key := range certLifeKeys {
		if value, set := annotations[key]; set {
			b.WriteString("=" + value)
		}
		b.WriteByte(0)
	}
	return b.String()
}
