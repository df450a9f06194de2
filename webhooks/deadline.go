package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
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
	DefaultReviewTimeout = route.TimeoutSeconds * time.Second
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

// timedOut is the answer when the budget ran out, as the failure policy
// says (see the comment at the top of this file).
func timedOut(webhook string, policy admissionregistrationv1.FailurePolicyType, timeout time.Duration) admission.Response {
	budget := reviewBudget(timeout).String()
	if policy == admissionregistrationv1.Ignore {
		resp := admission.Allowed("")
		resp.Warnings = []string{fmt.Sprintf("gatehouse %s: %s: the review did not finish within %s of the API server's %s timeout; "+
			"admitted unchanged, as the webhook's failure policy Ignore says", webhook, ReasonReviewTimeout, budget, timeout)}
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
			ReasonReviewTimeout, webhook, budget, timeout, webhook),
	}
	return resp
}

// ReasonReviewTimeout names a review that ran out of time in warnings and
// logs.
const ReasonReviewTimeout = "ReviewTimeout"
