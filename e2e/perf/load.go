package perf

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// NewClient returns an HTTPS client for a loopback webhook server whose
// certificate chains to the CA in caFile: TLS 1.2 minimum, HTTP/1.1 only (as
// the servers serve), keep-alive with up to conns idle connections, as the
// API server's webhook client keeps them.
func NewClient(caFile string, conns int) (*http.Client, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	return &http.Client{Transport: transport, Timeout: 10 * time.Second}, nil
}

// CheckLoopback refuses any base URL that is not on the loopback interface:
// load is never sent anywhere else.
func CheckLoopback(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address; load is only sent to loopback", u.Host)
	}
	return nil
}

// LoadOptions bound one load run. Exactly one of Concurrency (closed loop:
// that many requests in flight, each sent when the previous answered) and
// Rate (open loop: requests started at a fixed rate, with at most
// Concurrency in flight) drives it; Requests and Duration both stop it,
// whichever comes first.
type LoadOptions struct {
	Concurrency int
	Rate        float64
	Requests    int
	Duration    time.Duration
}

// LoadResult is what one load run saw.
type LoadResult struct {
	Requests int
	Elapsed  time.Duration
	// Errors counts failed requests by kind: transport, timeout,
	// status-<code>, decode, uid (the response answers another request).
	Errors map[string]int
	// Latency per webhook type, and All.
	Latency map[route.Type]*Latencies
	All     *Latencies
	// Verdicts counts allowed, denied and patched answers.
	Verdicts map[string]int
}

// Throughput is answered requests per second.
func (r *LoadResult) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.All.Count()) / r.Elapsed.Seconds()
}

// Merge adds the requests, errors, latencies and verdicts of other (whose
// elapsed time is added too, as if the runs had been one).
func (r *LoadResult) Merge(other *LoadResult) {
	r.Requests += other.Requests
	r.Elapsed += other.Elapsed
	r.All.Merge(other.All)
	for t, l := range other.Latency {
		if r.Latency[t] == nil {
			r.Latency[t] = &Latencies{}
		}
		r.Latency[t].Merge(l)
	}
	for k, n := range other.Errors {
		r.Errors[k] += n
	}
	for k, n := range other.Verdicts {
		r.Verdicts[k] += n
	}
}

// ErrorCount is the number of failed requests.
func (r *LoadResult) ErrorCount() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

type workerResult struct {
	latency  map[route.Type]*Latencies
	all      Latencies
	errors   map[string]int
	verdicts map[string]int
}

func newWorkerResult() *workerResult {
	return &workerResult{
		latency:  map[route.Type]*Latencies{route.Validating: {}, route.Mutating: {}},
		errors:   map[string]int{},
		verdicts: map[string]int{},
	}
}

// RunLoad replays reviews against base (a loopback https URL) until the
// options' bounds are reached or ctx ends. Latency is measured from when a
// request was due (open loop) or sent (closed loop) to when its answer was
// read, so a server that falls behind a fixed rate shows it.
func RunLoad(ctx context.Context, client *http.Client, base string, reviews []Review, o LoadOptions) (*LoadResult, error) {
	out, err := RunInterleaved(ctx, client, []string{base}, reviews, o)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// RunInterleaved is RunLoad against several servers at once: request i goes
// to bases[i mod n] and every server gets the same sequence of reviews, so
// whatever else the machine does hits all of them alike. The bounds and the
// rate are for all servers together; one result per server is returned.
func RunInterleaved(ctx context.Context, client *http.Client, bases []string, reviews []Review, o LoadOptions) ([]*LoadResult, error) {
	for _, base := range bases {
		if err := CheckLoopback(base); err != nil {
			return nil, err
		}
	}
	if len(bases) == 0 || len(reviews) == 0 || o.Concurrency < 1 || o.Requests < 1 || o.Duration <= 0 {
		return nil, errors.New("load needs servers, reviews, a concurrency, a request bound and a duration bound")
	}
	n := len(bases)
	// results[w][s] is worker w's result for server s.
	results := make([][]*workerResult, o.Concurrency)
	for w := range o.Concurrency {
		results[w] = make([]*workerResult, n)
		for s := range n {
			results[w][s] = newWorkerResult()
		}
	}
	elapsed := drive(ctx, o, func(ctx context.Context, w, i int, due time.Time) {
		server := i % n
		res := results[w][server]
		r := reviews[(i/n)%len(reviews)]
		verdict, kind := send(ctx, client, bases[server], r)
		if kind != "" {
			if ctx.Err() == nil { // else the run ended while this request was in flight
				res.errors[kind]++
			}
			return
		}
		d := time.Since(due)
		res.all.Add(d)
		res.latency[r.Type].Add(d)
		res.verdicts[verdict]++
	})
	outs := make([]*LoadResult, n)
	for s := range n {
		out := &LoadResult{
			Elapsed:  elapsed,
			Errors:   map[string]int{},
			Latency:  map[route.Type]*Latencies{route.Validating: {}, route.Mutating: {}},
			All:      &Latencies{},
			Verdicts: map[string]int{},
		}
		for w := range results {
			res := results[w][s]
			out.All.Merge(&res.all)
			for t, l := range res.latency {
				out.Latency[t].Merge(l)
			}
			for k, c := range res.errors {
				out.Errors[k] += c
			}
			for k, c := range res.verdicts {
				out.Verdicts[k] += c
			}
		}
		out.Requests = out.All.Count() + out.ErrorCount()
		outs[s] = out
	}
	return outs, nil
}

type job struct {
	i   int
	due time.Time
}

// drive calls do for requests 0, 1, ... on o.Concurrency workers until
// o.Requests were started, o.Duration passed or ctx ended, and returns how
// long that took. With o.Rate set, request i is due at start + i/Rate and
// waits for a free worker (open loop); without, each worker starts the next
// request when its last one answered, due when started (closed loop). do
// gets the run's context, the worker's index (0 to o.Concurrency-1, so a
// worker can own state), the request's index and when it was due.
func drive(ctx context.Context, o LoadOptions, do func(ctx context.Context, worker, i int, due time.Time)) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var next atomic.Int64
	start := time.Now()
	var jobs chan job
	if o.Rate > 0 {
		jobs = make(chan job)
		go func() {
			defer close(jobs)
			interval := time.Duration(float64(time.Second) / o.Rate)
			for i := 0; i < o.Requests; i++ {
				due := start.Add(time.Duration(i) * interval)
				if wait := time.Until(due); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				select {
				case <-ctx.Done():
					return
				case jobs <- job{i: i, due: due}:
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for w := range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var j job
				if jobs != nil {
					var ok bool
					select {
					case <-ctx.Done():
						return
					case j, ok = <-jobs:
						if !ok {
							return
						}
					}
				} else {
					i := int(next.Add(1) - 1)
					if i >= o.Requests || ctx.Err() != nil {
						return
					}
					j = job{i: i, due: time.Now()}
				}
				do(ctx, w, j.i, j.due)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// reviewAnswer is the part of an AdmissionReview response the load checks.
type reviewAnswer struct {
	Response *struct {
		UID     string `json:"uid"`
		Allowed bool   `json:"allowed"`
		Patch   []byte `json:"patch"`
	} `json:"response"`
}

// send posts one review; it returns the verdict, or the kind of error.
func send(ctx context.Context, client *http.Client, base string, r Review) (verdict, errKind string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return "", "request"
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "", "timeout"
		}
		return "", "transport"
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return "", "transport"
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Sprintf("status-%d", resp.StatusCode)
	}
	var answer reviewAnswer
	if err := json.Unmarshal(body, &answer); err != nil || answer.Response == nil {
		return "", "decode"
	}
	if answer.Response.UID != string(r.UID) {
		return "", "uid"
	}
	switch {
	case !answer.Response.Allowed:
		return "denied", ""
	case len(answer.Response.Patch) > 0:
		return "patched", ""
	default:
		return "allowed", ""
	}
}
