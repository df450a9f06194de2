package webhooks

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Transport limits.
//
// controller-runtime's webhook server fixes its http.Server: headers may take
// 32s, a body may trickle in forever, and a header block may be 1 MiB. A
// client that trickles bytes (slowloris) or opens connections and sends
// nothing holds a goroutine and its buffers for that long. NewServer is the
// same server (controller-runtime's mux, metrics and TLS options) with limits
// sized to what the API server sends: it writes the headers and the body of
// a review at once, and waits at most MaxReviewTimeout for the answer.
const (
	// serverReadHeaderTimeout bounds the TLS handshake and the headers (net/http
	// applies it to both): twice the timeout deploy/ gives a call, after which
	// the API server has given up anyway.
	serverReadHeaderTimeout = 2 * route.TimeoutSeconds * time.Second
	// serverReadTimeout bounds reading a whole request: a body still arriving
	// after the longest timeout the API server allows cannot be answered in
	// time.
	serverReadTimeout = MaxReviewTimeout
	// serverWriteTimeout bounds a request from its headers to the end of the
	// answer: the longest review budget plus time to write.
	serverWriteTimeout = MaxReviewTimeout + 5*time.Second
	// serverIdleTimeout keeps idle keep-alive connections as long as the API
	// server's transport does (Go's default, as controller-runtime).
	serverIdleTimeout = 90 * time.Second
	// serverMaxHeaderBytes: the API server's headers are a few hundred bytes.
	serverMaxHeaderBytes = 64 << 10
)

// There is deliberately no cap on concurrent connections: a cap lets idle
// connections crowd out the API server's, while these timeouts reap idle
// and trickling connections in seconds and each costs a few kilobytes.

// Server is controller-runtime's webhook.Server with the transport limits
// above. It serves with the TLS options' GetCertificate, which gatehouse
// always sets (certs.FileSource reloads the certificate).
type Server struct {
	webhook.Server
	opts    webhook.Options
	started atomic.Bool
}

// NewServer returns a webhook server with gatehouse's transport limits.
func NewServer(opts webhook.Options) *Server {
	if opts.WebhookMux == nil {
		opts.WebhookMux = http.NewServeMux()
	}
	if opts.Port <= 0 {
		opts.Port = webhook.DefaultPort
	}
	return &Server{Server: webhook.NewServer(opts), opts: opts}
}

// Start serves until ctx ends, then drains in-flight reviews for up to a
// minute, as controller-runtime's server does.
func (s *Server) Start(ctx context.Context) error {
	cfg := &tls.Config{NextProtos: []string{"h2"}}
	for _, op := range s.opts.TLSOpts {
		op(cfg)
	}
	if cfg.GetCertificate == nil {
		return errors.New("webhook server: the TLS options set no GetCertificate")
	}
	listener, err := tls.Listen("tcp", s.address(), cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.opts.WebhookMux,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: serverReadHeaderTimeout,
		ReadTimeout:       serverReadTimeout,
		WriteTimeout:      serverWriteTimeout,
		IdleTimeout:       serverIdleTimeout,
		MaxHeaderBytes:    serverMaxHeaderBytes,
		// net/http reports failed handshakes and connection errors here; they
		// go to the server's log at debug level, with everything else.
		ErrorLog: stdlog.New(connErrorLog{logf.Log.WithName("webhook-server")}, "", 0),
	}
	drained := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		drained <- srv.Shutdown(shutdownCtx)
	}()
	s.started.Store(true)
	if err := srv.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-drained
}

// connErrorLog writes net/http's connection errors as debug log lines.
type connErrorLog struct{ log logr.Logger }

func (l connErrorLog) Write(p []byte) (int, error) {
	l.log.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (s *Server) address() string {
	return net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// StartedChecker is healthy once the server accepts TLS connections.
func (s *Server) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if !s.started.Load() {
			return errors.New("webhook server has not been started yet")
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", s.address(), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return fmt.Errorf("webhook server is not reachable: %w", err)
		}
		return conn.Close()
	}
}
