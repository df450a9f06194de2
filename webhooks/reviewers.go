package webhooks

// A review runs on a goroutine of its own, which the handler abandons when
// the deadline passes first (chain.review). A new goroutine per review
// starts with a small stack and grows it, by copying, to what decoding and
// evaluating take (yaml.v3's parser for the overrides ConfigMap goes deep):
// about a fourteenth of the server's CPU in BenchmarkServeHTTPS. So a
// goroutine that has finished a review waits for the next one, up to
// maxIdleReviewers of them; one that finds the pool full ends. A review that
// hangs holds its goroutine until it returns, exactly as before, and the
// next review starts another.

// maxIdleReviewers bounds the goroutines that wait for a review: about the
// reviews a busy server has in flight at once (the API server's calls to one
// replica, the load tool's 8 to 16). A waiting goroutine keeps the stack its
// deepest review grew until garbage collections shrink it, so the bound is
// also what idle reviewers can hold.
const maxIdleReviewers = 32

// idleReviewers holds the job channel of each waiting reviewer.
var idleReviewers = make(chan chan *pass, maxIdleReviewers)

// startReview runs p's chain on a waiting reviewer, or on a new one.
func startReview(p *pass) {
	select {
	case jobs := <-idleReviewers:
		jobs <- p
	default:
		jobs := make(chan *pass, 1)
		jobs <- p
		go reviewer(jobs)
	}
}

// reviewer runs the reviews sent on jobs until the pool has no room for it.
func reviewer(jobs chan *pass) {
	for p := range jobs {
		p.chain.runInto(p.ctx, p.req, p, p.done)
		select {
		case idleReviewers <- jobs:
		default:
			return
		}
	}
}
