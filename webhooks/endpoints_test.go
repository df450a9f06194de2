package webhooks

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestRequestLoggerNamesTheRequest: every line of a review's logger, and of
// the loggers made from it, carries the request ID, and a line below the
// logger's verbosity writes nothing.
func TestRequestLoggerNamesTheRequest(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: 0})
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "uid-1"}}
	log := requestLogger(base.WithName("admission"), req)
	log.Info("decision", "webhook", "secret-scope")
	log.WithValues("entry", "e").WithName("sub").Error(nil, "refused")
	log.V(1).Info("quiet")
	if len(lines) != 2 {
		t.Fatalf("lines = %q, want two", lines)
	}
	for _, l := range lines {
		if !strings.Contains(l, `"requestID"="uid-1"`) {
			t.Errorf("line %q has no request ID", l)
		}
	}
	if !strings.Contains(lines[1], `"entry"="e"`) || !strings.HasPrefix(lines[1], "admission/sub") {
		t.Errorf("line %q lost the logger's name or values", lines[1])
	}
	if got := requestLogger(base, nil); got != base {
		t.Error("a logger without a request is not the base logger")
	}
}
