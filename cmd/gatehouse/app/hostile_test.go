package app

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/gatehouse-dev/gatehouse/certs"
)

// The hostile-input tests run `gatehouse serve --dev` in-process on loopback
// (each in a process of its own, see inFreshProcess) and attack it over HTTPS. Every attack must get a well-formed answer (an
// AdmissionReview that does not allow, or an HTTP error status) or a closed
// connection; valid reviews keep being answered correctly in between; nothing
// panics; and afterwards the goroutines and the resident memory of the
// process return to where they were. Nothing here asserts how fast anything
// is: the bounds below only keep a broken server from hanging the test.

// hostileServer is a started `serve --dev` and a client trusting its CA.
type hostileServer struct {
	*serving
	base   string
	client *http.Client
	caFile string
}

func startHostile(t *testing.T, extra ...string) *hostileServer {
	t.Helper()
	dir := t.TempDir()
	s := startServe(t, append([]string{"--dev", "--dev-dir", dir}, extra...)...)
	eventually(t, "ready", s.readyz)
	caFile := filepath.Join(dir, certs.CAFile)
	h := &hostileServer{serving: s, base: "https://127.0.0.1:" + s.port, client: clientFor(t, caFile), caFile: caFile}
	t.Cleanup(h.client.CloseIdleConnections)
	return h
}

const allowedPVCReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"ok-1",
"kind":{"group":"","version":"v1","kind":"PersistentVolumeClaim"},"resource":{"group":"","version":"v1","resource":"persistentvolumeclaims"},
"operation":"CREATE","namespace":"team-a","name":"c","userInfo":{"username":"alice"},
"object":{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c","annotations":{"secrets.kubedoop.dev/class":"tls","secrets.kubedoop.dev/scope":"pod,node"}}}}}`

// post sends body and decodes an AdmissionReview answer.
func (h *hostileServer) post(path, contentType string, body []byte) (*admissionv1.AdmissionResponse, error) {
	resp, err := h.client.Post(h.base+path, contentType, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || review.Response == nil {
		return nil, fmt.Errorf("answer is not an AdmissionReview: %v", err)
	}
	return review.Response, nil
}

// validReviewsStillWork sends a review that must be denied and one that must
// be allowed, and checks both answers exactly.
func (h *hostileServer) validReviewsStillWork(t *testing.T, after string) {
	t.Helper()
	r, err := h.post("/validate/secret-scope", "application/json", []byte(deniedPodReview))
	if err != nil {
		t.Fatalf("after %s: a valid review failed: %v", after, err)
	}
	if r.UID != "dev-1" || r.Allowed || r.Result == nil || r.Result.Code != http.StatusUnprocessableEntity ||
		r.Result.Details == nil || len(r.Result.Details.Causes) != 1 || r.Result.Details.Causes[0].Type != "ScopeUnexpectedValue" {
		t.Fatalf("after %s: wrong answer to a valid denied review: %+v", after, r)
	}
	r, err = h.post("/validate/secret-scope", "application/json", []byte(allowedPVCReview))
	if err != nil {
		t.Fatalf("after %s: a valid review failed: %v", after, err)
	}
	if r.UID != "ok-1" || !r.Allowed {
		t.Fatalf("after %s: wrong answer to a valid allowed review: %+v", after, r)
	}
}

// baseline is what the process looks like before an attack.
type baseline struct {
	goroutines int
	rssKiB     int64
}

func measure(t *testing.T) baseline {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	return baseline{goroutines: runtime.NumGoroutine(), rssKiB: rssKiB(t)}
}

// rssKiB reads VmRSS from /proc/self/status.
func rssKiB(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("cannot read /proc/self/status (not Linux?): %v", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kib
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// Tolerances for "back to baseline": a few goroutines come and go with the
// certificate poll, the probes and the client's own connections; memory the
// Go runtime keeps is not all returned at once.
const (
	goroutineTolerance = 15
	rssToleranceKiB    = 128 << 10
)

// backToBaseline polls until the goroutines and the resident memory are
// within tolerance of before, and fails if they never get there.
func (h *hostileServer) backToBaseline(t *testing.T, before baseline) {
	t.Helper()
	h.client.CloseIdleConnections()
	var now baseline
	eventually(t, "goroutines and memory back to baseline", func() error {
		now = measure(t)
		if now.goroutines > before.goroutines+goroutineTolerance {
			return fmt.Errorf("%d goroutines, %d before", now.goroutines, before.goroutines)
		}
		if now.rssKiB > before.rssKiB+rssToleranceKiB {
			return fmt.Errorf("RSS %d KiB, %d KiB before", now.rssKiB, before.rssKiB)
		}
		return nil
	})
	t.Logf("goroutines %d -> %d, RSS %d -> %d KiB", before.goroutines, now.goroutines, before.rssKiB, now.rssKiB)
}

// noPanics checks the server's log for a recovered or unrecovered panic.
func (h *hostileServer) noPanics(t *testing.T) {
	t.Helper()
	if log := h.stderr.String(); strings.Contains(strings.ToLower(log), "panic") {
		t.Errorf("the server log mentions a panic:\n%s", log)
	}
}

// nested returns depth levels of nested JSON arrays.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// review builds an AdmissionReview body from a request fragment.
func review(request string) []byte {
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":` + request + `}`)
}

const (
	pvcKind     = `"kind":{"group":"","version":"v1","kind":"PersistentVolumeClaim"}`
	pvcResource = `"resource":{"group":"","version":"v1","resource":"persistentvolumeclaims"}`
	pvcObject   = `"object":{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c","annotations":{"secrets.kubedoop.dev/class":"tls","secrets.kubedoop.dev/scope":"node=x"}}}`
)

// TestServeHostileInput sends malformed, truncated, deeply nested, oversized,
// mistyped and mismatched requests, trickles headers slowly, and tries old
// TLS versions, with valid reviews in between.
func TestServeHostileInput(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	h := startHostile(t)
	h.validReviewsStillWork(t, "start")
	before := measure(t)

	// A slowloris trickle runs alongside all the cases below; the server
	// must close it on its own.
	trickleClosed := slowloris(t, h)

	valid := []byte(deniedPodReview)
	cases := []struct {
		name        string
		method      string
		path        string
		contentType string
		header      http.Header
		body        []byte
		// wantCode is the status code of the denying AdmissionReview answer;
		// 0 for any decision that echoes the UID "deep" (shapes the API
		// server never sends, which a policy may well find nothing in).
		wantCode int32
		wantHTTP int
		// mayClose: the server may close the connection instead of answering
		// (it stops reading an oversized request).
		mayClose bool
	}{
		{name: "malformed JSON", body: []byte(`{"apiVersion":"admission.k8s.io/v1","request":{"uid":`), wantCode: 400},
		{name: "truncated review", body: valid[:len(valid)/2], wantCode: 400},
		{name: "not JSON at all", body: []byte("\x00\xff<xml/>"), wantCode: 400},
		{name: "JSON null", body: []byte("null"), wantCode: 400},
		{name: "JSON array", body: []byte("[]"), wantCode: 400},
		{name: "empty body", body: []byte{}, wantCode: 400},
		{name: "deeply nested review", body: []byte(`{"request":` + nested(200_000) + `}`), wantCode: 400},
		{name: "deeply nested object", body: review(`{"uid":"deep",` + pvcKind + `,` + pvcResource + `,"operation":"CREATE","object":{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":` + nested(9_000) + `}}`)},
		{name: "deeply nested annotations", body: review(`{"uid":"deep",` + pvcKind + `,` + pvcResource + `,"operation":"CREATE","object":{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"annotations":` + strings.Repeat(`{"a":`, 9_000) + `1` + strings.Repeat(`}`, 9_000) + `}}}`)},
		{name: "deeply nested product resource", body: review(`{"uid":"deep","kind":{"group":"hdfs.kubedoop.dev","version":"v1alpha1","kind":"HdfsCluster"},"resource":{"group":"hdfs.kubedoop.dev","version":"v1alpha1","resource":"hdfsclusters"},"operation":"CREATE","namespace":"team-a","name":"h","object":{"apiVersion":"hdfs.kubedoop.dev/v1alpha1","kind":"HdfsCluster","spec":` + strings.Repeat(`{"secretClass":"x","scope":{"services":["a"]},"a":[`, 3_000) + strings.Repeat(`]}`, 3_000) + `}}`)},
		{name: "deeply nested product resource, service-account", path: "/validate/service-account", body: review(`{"uid":"deep","kind":{"group":"hdfs.kubedoop.dev","version":"v1alpha1","kind":"HdfsCluster"},"resource":{"group":"hdfs.kubedoop.dev","version":"v1alpha1","resource":"hdfsclusters"},"operation":"CREATE","namespace":"team-a","name":"h","object":{"apiVersion":"hdfs.kubedoop.dev/v1alpha1","kind":"HdfsCluster","spec":` + strings.Repeat(`{"podOverrides":{"spec":{}},"roleGroups":{"a":`, 3_000) + `1` + strings.Repeat(`}}`, 3_000) + `}}`)},
		{name: "10 MB body", body: append(append([]byte(`{"request":{"uid":"big","object":{"pad":"`), bytes.Repeat([]byte("x"), 10<<20)...), `"}}}`...), wantCode: 413, mayClose: true},
		{name: "10 MB of whitespace", body: bytes.Repeat([]byte(" "), 10<<20), wantCode: 413, mayClose: true},
		{name: "wrong content type", contentType: "text/yaml", body: valid, wantCode: 400},
		{name: "no content type", contentType: "-", body: valid, wantCode: 400},
		{name: "missing UID", body: review(`{` + pvcKind + `,` + pvcResource + `,"operation":"CREATE","namespace":"team-a","name":"c",` + pvcObject + `}`), wantCode: 422},
		{name: "duplicated UID", body: review(`{"uid":"dup-1","uid":"dup-2",` + pvcKind + `,` + pvcResource + `,"operation":"CREATE","namespace":"team-a","name":"c",` + pvcObject + `}`), wantCode: 422},
		{name: "UID of the wrong type", body: review(`{"uid":{"a":1},` + pvcKind + `,` + pvcResource + `,"operation":"CREATE",` + pvcObject + `}`), wantCode: 400},
		{name: "kind and resource disagree", body: review(`{"uid":"m1","kind":{"group":"apps","version":"v1","kind":"Deployment"},` + pvcResource + `,"operation":"CREATE",` + pvcObject + `}`), wantCode: 400},
		{name: "object disagrees with kind", body: review(`{"uid":"m2","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE",` + pvcObject + `}`), wantCode: 400},
		{name: "unknown operation", body: review(`{"uid":"op",` + pvcKind + `,` + pvcResource + `,"operation":"EXPLODE",` + pvcObject + `}`), wantCode: 400},
		{name: "no operation", body: review(`{"uid":"op2",` + pvcKind + `,` + pvcResource + `,` + pvcObject + `}`), wantCode: 400},
		{name: "no request", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), wantCode: 400},
		{name: "object is a string", body: review(`{"uid":"s",` + pvcKind + `,` + pvcResource + `,"operation":"CREATE","object":"x"}`), wantCode: 400},
		{name: "UPDATE without oldObject", body: review(`{"uid":"u",` + pvcKind + `,` + pvcResource + `,"operation":"UPDATE",` + pvcObject + `}`), wantCode: 400},
		{name: "mutating path, wrong resource", path: "/mutate/pod-security-defaults", body: valid, wantCode: 400},
		{name: "GET", method: http.MethodGet, wantCode: 400},
		{name: "unknown path", path: "/validate/no-such-webhook", body: valid, wantHTTP: http.StatusNotFound},
		{name: "oversized headers", body: valid, header: http.Header{"X-Filler": {strings.Repeat("a", 200<<10)}}, wantHTTP: http.StatusRequestHeaderFieldsTooLarge, mayClose: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method, path, contentType := tc.method, tc.path, tc.contentType
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/validate/secret-scope"
			}
			req, err := http.NewRequest(method, h.base+path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body == nil {
				req.Body = http.NoBody
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			switch contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", contentType)
			}
			resp, err := h.client.Do(req)
			if err != nil {
				if !tc.mayClose {
					t.Fatalf("no answer: %v", err)
				}
				t.Logf("connection closed: %v", err)
				h.validReviewsStillWork(t, tc.name)
				return
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			if tc.wantHTTP != 0 {
				if resp.StatusCode != tc.wantHTTP {
					t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.wantHTTP)
				}
			} else {
				var answer admissionv1.AdmissionReview
				if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &answer) != nil || answer.Response == nil {
					t.Fatalf("HTTP %d, not an AdmissionReview answer (%d bytes)", resp.StatusCode, len(raw))
				}
				r := answer.Response
				if r.Result != nil && r.Result.Code == http.StatusInternalServerError {
					t.Fatalf("internal error or recovered panic: %s", r.Result.Message)
				}
				if tc.wantCode == 0 {
					// Any decision, as long as it is one and echoes the UID.
					if r.UID != "deep" {
						t.Fatalf("UID not echoed: %q", r.UID)
					}
				} else {
					if r.Allowed || r.Result == nil || r.Result.Code != tc.wantCode {
						t.Fatalf("want a denial with code %d, got allowed=%v %+v", tc.wantCode, r.Allowed, r.Result)
					}
					if tc.name == "duplicated UID" && r.UID != "dup-1" && r.UID != "dup-2" {
						t.Fatalf("UID %q is neither of the request's", r.UID)
					}
				}
			}
			h.validReviewsStillWork(t, tc.name)
		})
	}

	t.Run("same UID in concurrent reviews", func(t *testing.T) {
		// No state is keyed by UID: each review gets its own decision.
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 40 {
			wg.Go(func() {
				body, wantAllowed := deniedPodReview, false
				if i%2 == 0 {
					body, wantAllowed = strings.Replace(allowedPVCReview, `"ok-1"`, `"dev-1"`, 1), true
				}
				r, err := h.post("/validate/secret-scope", "application/json", []byte(body))
				switch {
				case err != nil:
					errs <- err
				case r.UID != "dev-1" || r.Allowed != wantAllowed:
					errs <- fmt.Errorf("review %d: allowed=%v, want %v", i, r.Allowed, wantAllowed)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("TLS 1.0 and 1.1 refused", func(t *testing.T) {
		for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
			conn, err := tls.Dial("tcp", "127.0.0.1:"+h.port, &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
			if err == nil {
				conn.Close()
				t.Errorf("TLS version %x accepted", v)
			}
		}
		h.validReviewsStillWork(t, "old TLS versions")
	})

	t.Run("slowloris closed by the server", func(t *testing.T) {
		if err := <-trickleClosed; err != nil {
			t.Fatal(err)
		}
		h.validReviewsStillWork(t, "slowloris")
	})

	h.noPanics(t)
	h.backToBaseline(t, before)
}

// slowloris opens a TLS connection and sends a request's headers one small
// piece every 200ms, never finishing them. The returned channel yields nil
// when the server closes the connection (its header timeout), or an error if
// the server answered something or kept it open past a generous bound.
func slowloris(t *testing.T, h *hostileServer) <-chan error {
	t.Helper()
	conn, err := tls.Dial("tcp", "127.0.0.1:"+h.port, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, "POST /validate/secret-scope HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	stopWriting := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stopWriting:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := fmt.Fprintf(conn, "X-Slow-%d: a\r\n", i); err != nil {
				return
			}
		}
	}()
	closed := make(chan error, 1)
	go func() {
		defer close(stopWriting)
		// The server's header timeout is 10s; 25s only keeps a server that
		// never closes from hanging the test.
		_ = conn.SetReadDeadline(time.Now().Add(25 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		var netErr net.Error
		switch {
		case err == nil:
			closed <- fmt.Errorf("the server answered a request whose headers never ended: %q", line)
		case errors.As(err, &netErr) && netErr.Timeout():
			closed <- errors.New("the server kept a trickling connection open for 25s")
		default:
			closed <- nil // EOF or reset: closed by the server
		}
	}()
	return closed
}

// TestServeIdleConnections opens 2,000 connections at once, half of them
// plain TCP that never start TLS and half that finish the handshake and then
// send nothing. Valid reviews keep being answered while they are open; the
// server closes every one of them on its own; afterwards goroutines and
// memory return to baseline.
func TestServeIdleConnections(t *testing.T) {
	if !inFreshProcess(t) {
		return
	}
	const idle = 2000
	// Client and server are both in this process: two descriptors per
	// connection, plus the server's own.
	raiseFileLimit(t, 2*idle+512)
	h := startHostile(t)
	h.validReviewsStillWork(t, "start")
	before := measure(t)

	conns := make([]net.Conn, idle)
	var wg sync.WaitGroup
	errs := make(chan error, idle)
	for worker := range 20 {
		wg.Go(func() {
			for i := worker; i < idle; i += 20 {
				raw, err := net.DialTimeout("tcp", "127.0.0.1:"+h.port, 10*time.Second)
				if err != nil {
					errs <- err
					return
				}
				conns[i] = raw
				if i%2 == 1 {
					tc := tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
					if err := tc.Handshake(); err != nil {
						errs <- fmt.Errorf("handshake %d: %w", i, err)
						return
					}
					conns[i] = tc
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for _, c := range conns {
		if c != nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	for err := range errs {
		t.Fatalf("opening idle connections: %v", err)
	}
	during := measure(t)
	t.Logf("with %d idle connections: %d goroutines, RSS %d KiB", idle, during.goroutines, during.rssKiB)
	for i := range 10 {
		h.validReviewsStillWork(t, fmt.Sprintf("%d idle connections, round %d", idle, i))
	}

	// The server closes them: plain TCP at the handshake timeout, TLS ones at
	// the header timeout (10s each). 30s only bounds a server that never does.
	open := make(chan int, idle)
	for i, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err := c.Read(make([]byte, 1))
			var netErr net.Error
			if err == nil || (errors.As(err, &netErr) && netErr.Timeout()) {
				open <- i
			}
		})
	}
	wg.Wait()
	close(open)
	if n := len(open); n > 0 {
		t.Fatalf("%d of %d idle connections were still open after 30s", n, idle)
	}
	h.validReviewsStillWork(t, "idle connections closed")
	h.noPanics(t)
	h.backToBaseline(t, before)
}

// raiseFileLimit makes sure the process may open need descriptors, raising
// the soft limit up to the hard one, or skips the test saying why.
func raiseFileLimit(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot read the file descriptor limit: %v", err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Skipf("needs %d file descriptors, the hard limit is %d (raise it with ulimit -Hn)", need, lim.Max)
	}
	old := lim
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot raise the file descriptor limit from %d to %d: %v", old.Cur, need, err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}
