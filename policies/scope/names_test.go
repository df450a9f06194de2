package scope

import (
	"slices"
	"strings"
	"testing"
)

// TestServiceNameSAN: a service name that is not a Service name is denied in
// the annotation and in a CR alike, and the message names the SAN it would
// have produced by its shape, never by its text.
func TestServiceNameSAN(t *testing.T) {
	tests := []struct {
		name string
		says string
	}{
		{"*", "the wildcard SAN *.<namespace>.svc.cluster.local, which covers every Service of the namespace"},
		{"*.zookeeper", "the wildcard SAN *.<label>.<namespace>.svc.cluster.local, which covers every pod of a headless Service"},
		{"*.zookeeper.other", "the wildcard SAN *.<label>.<label>.<namespace>.svc.cluster.local, which covers names no single Service has"},
		{"zookeeper-*", "the wildcard SAN <label with *>.<namespace>.svc.cluster.local"},
		{"zookeeper-0.zookeeper", "the SAN <label>.<label>.<namespace>.svc.cluster.local of 2 labels before the namespace, which names a pod of a headless Service"},
		{"zookeeper.", "the SAN <label>.<empty label>.<namespace>.svc.cluster.local of 2 labels"},
		{strings.Repeat("z", 64), "whose first label is longer than 63 characters"},
		{"Zookeeper", "whose first label has characters or a first or last character no Service name has"},
		{"0zookeeper", "whose first label has characters or a first or last character no Service name has"},
		{"zookeeper_0", "whose first label has characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, annotationFindings := ParseScope("pod,service="+tt.name, scopePath())
			crFindings := Validate(gkHdfsCluster, map[string]any{"spec": credentialsHolder(tt.name)})
			if got, want := results(annotationFindings), []result{deny(ScopeServiceNameInvalid, scopeField)}; !slices.Equal(got, want) {
				t.Fatalf("annotation findings = %v, want %v", got, want)
			}
			if got, want := results(crFindings), []result{deny(ScopeServiceNameInvalid, "spec.scope.services[0]")}; !slices.Equal(got, want) {
				t.Fatalf("CR findings = %v, want %v", got, want)
			}
			for _, msg := range []string{annotationFindings[0].Message, crFindings[0].Message} {
				if !strings.Contains(msg, tt.says) {
					t.Errorf("message %q does not say %q", msg, tt.says)
				}
				if strings.Contains(strings.ToLower(msg), "zookeeper") || strings.Contains(msg, "zzzz") {
					t.Errorf("message %q repeats the name", msg)
				}
			}
		})
	}
}

// TestListenerVolumeName: a listener volume name that no pod volume can have
// is denied in the annotation and in a CR alike; one that a volume can have
// (a DNS-1123 label, also starting with a digit) passes.
func TestListenerVolumeName(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{"listener", true},
		{"0-listener", true},
		{strings.Repeat("l", 63), true},
		{strings.Repeat("l", 64), false},
		{"*", false},
		{"Listener", false},
		{"listener.bootstrap", false},
		{"listener-", false},
		{"listener_0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, annotationFindings := ParseScope("listener-volume="+tt.name, scopePath())
			holder := credentialsHolder()
			holder["scope"].(map[string]any)["listenerVolumes"] = []any{tt.name}
			crFindings := Validate(gkHdfsCluster, map[string]any{"spec": holder})
			var wantAnnotation, wantCR []result
			if !tt.valid {
				wantAnnotation = []result{deny(ScopeListenerVolumeNameInvalid, scopeField)}
				wantCR = []result{deny(ScopeListenerVolumeNameInvalid, "spec.scope.listenerVolumes[0]")}
			}
			if got := results(annotationFindings); !slices.Equal(got, wantAnnotation) {
				t.Errorf("annotation findings = %v, want %v", got, wantAnnotation)
			}
			if got := results(crFindings); !slices.Equal(got, wantCR) {
				t.Errorf("CR findings = %v, want %v", got, wantCR)
			}
			for _, f := range append(annotationFindings, crFindings...) {
				if strings.Contains(strings.ToLower(f.Message), "listener.") || strings.Contains(f.Message, "lll") {
					t.Errorf("message %q repeats the name", f.Message)
				}
			}
		})
	}
}
