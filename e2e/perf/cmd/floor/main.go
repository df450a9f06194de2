// Command floor is the performance floor gatehouse is measured against: a
// minimal controller-runtime webhook server that serves every path (those of
// the webhook registry and any other), decodes each AdmissionReview and
// allows it (all but the load tool's probe, see perf.FloorProbeAnnotation).
// It uses the TLS settings of `gatehouse serve` (TLS 1.2 minimum, HTTP/1.1
// only) and reads tls.crt and tls.key from --cert-dir, so the only
// difference to gatehouse is the work gatehouse does per request.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/e2e/perf"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to bind")
	port := flag.Int("port", 9443, "HTTPS port")
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	flag.Parse()
	if err := run(*host, *port, *certDir); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(host string, port int, certDir string) error {
	logf.SetLogger(logr.Discard())
	if certDir == "" {
		return fmt.Errorf("--cert-dir is required")
	}
	srv := webhook.NewServer(webhook.Options{
		Host:    host,
		Port:    port,
		CertDir: certDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.MinVersion = tls.VersionTLS12
			c.NextProtos = []string{"http/1.1"}
		}},
	})
	allow := admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		// The load tool confirms that the API server calls the floor with a
		// dry run of an object carrying this annotation key.
		if bytes.Contains(req.Object.Raw, []byte(perf.FloorProbeAnnotation)) {
			return admission.Denied(perf.FloorProbeMessage)
		}
		return admission.Allowed("")
	})
	// Every path: the registry's, and whatever else the webhook
	// configurations call.
	srv.Register("/", &admission.Webhook{Handler: allow})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Start(ctx)
}
