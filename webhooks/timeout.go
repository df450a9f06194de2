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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/policies"
)

// Review deadlines.
//
// The API server gives every webhook call the webhook configuration's
// timeoutSeconds (1 to 30, TimeoutSeconds in deploy/) and appends what is
// left of it to the URL as ?timeout=<duration> ("4.99987s"). An answer that arrives later is a failed call:
// the API server then applies the failure policy with a generic "context
// deadline exceeded", and gatehouse keeps working on a review nobody waits for.
//
// So every review gets a budget: the timeout the API server sent (at most
// MaxReviewTimeout; DefaultReviewTimeout when it sent none, as `gatehouse
// check` and hand-made requests do) minus an answer margin, counted from the
// moment the request arrived. The evaluation races the budget: evaluators
// read informer caches through interfaces without a context (StateReader),
// and a lookup that hangs must not hold the answer. When the budget runs
// out first, the webhook answers in its own words, as its failure policy says:
// a Fail webhook denies with a 504 Timeout status naming the webhook; an
// Ignore webhook admits unchanged with a warning, which is what the API
// server would have done for it after the timeout anyway. It never allows on
// behalf of a Fail webhook.
//
// The margin is a tenth of the timeout, at most one second (900ms of a 1s
// timeout, 4.5s of the default 5s, 29s of 30s): enough to encode and send the
// answer over a cluster network, small enough that short timeouts keep most
// of their time.
const (
	// DefaultReviewTimeout applies when the request carries no usable
	// ?timeout: the timeout deploy/ configures.
	DefaultReviewTimeout = TimeoutSeconds * time.Second
	// MaxReviewTimeout is the longest timeout the API server allows a webhook
	// (timeoutSeconds is at most 30); longer requested timeouts are capped.
	MaxReviewTimeout = 30 * time.Second
	// maxAnswerMargin caps the part of the timeout kept for sending the answer.
	maxAnswerMargin = time.Second
)

// reviewTimeout reads the API server's ?timeout= value: a Go duration such as
// "10s". A missing, malformed or non-positive value means the default; a
// longer one is capped.
func reviewTimeout(query string) time.Duration {
	d, err := time.ParseDuration(query)
	if err != nil || d <= 0 {
		return DefaultReviewTimeout
	}
	return min(d, MaxReviewTimeout)
}

// reviewBudget is how long a review may take to decide when the API server
// waits timeout for the answer.
func reviewBudget(timeout time.Duration) time.Duration {
	return timeout - min(timeout/10, maxAnswerMargin)
}

// reviewDeadline is what withReviewDeadline puts into a request's context.
type reviewDeadline struct {
	timeout  time.Duration // what the API server waits
	deadline time.Time     // when the answer must be ready
}

type reviewDeadlineKey struct{}

// withReviewDeadline is the admission.Webhook's WithContextFunc: it runs as
// the request arrives, before the body is read, so reading the body counts
// against the budget too.
func withReviewDeadline(ctx context.Context, r *http.Request) context.Context {
	timeout := reviewTimeout(r.URL.Query().Get("timeout"))
	return context.WithValue(ctx, reviewDeadlineKey{}, reviewDeadline{timeout: timeout, deadline: time.Now().Add(reviewBudget(timeout))})
}

// deadlineOf returns the review deadline of ctx, or the default one from now
// for a review that did not come over HTTP (`gatehouse check`).
func deadlineOf(ctx context.Context) reviewDeadline {
	if d, ok := ctx.Value(reviewDeadlineKey{}).(reviewDeadline); ok {
		return d
	}
	return reviewDeadline{timeout: DefaultReviewTimeout, deadline: time.Now().Add(reviewBudget(DefaultReviewTimeout))}
}

// decision is what decide returned, or the panic it raised.
type decision struct {
	findings []policies.Finding
	resp     admission.Response
	panicked any
}

// decideInTime runs decide against the review deadline. decide runs on its
// own goroutine, which the caller abandons when the deadline passes first: it
// ends when the hung lookup returns, and its late result is dropped. A panic
// in decide is raised again here, so controller-runtime recovers it into a
// 500 as it does for any handler panic.
func (h *handler) decideInTime(ctx context.Context, req *admission.Request) (findings []policies.Finding, resp admission.Response, timedOut bool) {
	d := deadlineOf(ctx)
	// Only the deadline ends a review: the request's context is also
	// cancelled when the server begins its graceful shutdown, and the reviews
	// in flight then must still get their real answers.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.deadline)
	defer cancel()
	done := make(chan decision, 1) // buffered: a late result never blocks the goroutine
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- decision{panicked: p}
			}
		}()
		f, r := h.decide(ctx, req)
		done <- decision{findings: f, resp: r}
	}()
	select {
	case got := <-done:
		if got.panicked != nil {
			panic(got.panicked)
		}
		return got.findings, got.resp, false
	case <-ctx.Done():
		return nil, h.timedOut(d.timeout), true
	}
}

// timedOut is the answer when the budget ran out, as the failure policy
// says (see the comment at the top of this file).
func (h *handler) timedOut(timeout time.Duration) admission.Response {
	budget := reviewBudget(timeout).String()
	if h.def.FailurePolicy == admissionregistrationv1.Ignore {
		resp := admission.Allowed("")
		resp.Warnings = []string{fmt.Sprintf("gatehouse %s: %s: the review did not finish within %s of the API server's %s timeout; "+
			"admitted unchanged, as the webhook's failure policy Ignore says", h.def.Name, ReasonReviewTimeout, budget, timeout)}
		return resp
	}
	resp := admission.Response{}
	resp.Allowed = false
	resp.Result = &metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusGatewayTimeout,
		Reason: metav1.StatusReasonTimeout,
		Message: fmt.Sprintf("%s: webhook %s did not decide within %s of the API server's %s timeout (a lookup or the evaluation hung); "+
			"denied, as the webhook's failure policy Fail says; retry, and if it persists check gatehouse's readiness and logs (gatehouse %s)",
			ReasonReviewTimeout, h.def.Name, budget, timeout, h.def.Name),
	}
	return resp
}

// ReasonReviewTimeout names a review that ran out of time in warnings and
// logs.
const ReasonReviewTimeout = "ReviewTimeout"

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
	serverReadHeaderTimeout = 2 * TimeoutSeconds * time.Second
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
