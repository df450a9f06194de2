package harness

import (
	"fmt"
	"testing"
)

// BenchmarkValidateHarness is the per-review cost of the mariadb-operator harness with
// a dangerous rule acknowledged by the second of two entries, against a
// State of 10,000 other harnesses (map lookups, so the count must not
// matter).
func BenchmarkValidateHarness(b *testing.B) {
	state := seededState()
	for i := range 10000 {
		state.add(fmt.Sprintf("h-%d", i), fmt.Sprintf("requires.helmetica.io/h-%d", i), fmt.Sprintf("ns-%d", i), "operator")
	}
	obj := baseHarness()
	addClusterRule(obj, rule(strs(""), strs("secrets"), strs("get", "list", "watch")))
	withAcks(ack("unused", strs(""), strs("pods"), strs("list"), reason), ackSecrets("get", "list", "watch"))(obj)
	if findings := ValidateHarness(obj, state); len(findings) != 2 || findings[1].Code != HarnessGrantAcknowledged {
		b.Fatalf("benchmark object has unexpected findings: %+v", findings)
	}
	b.ReportAllocs()
	for b.Loop() {
		ValidateHarness(obj, state)
	}
}
