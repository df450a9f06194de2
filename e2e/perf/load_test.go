package perf

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// reviewServer answers every AdmissionReview with allowed and records the
// UIDs it saw.
type reviewServer struct {
	mu   sync.Mutex
	uids []string
}

func (s *reviewServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.uids = append(s.uids, string(review.Request.UID))
	s.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	_ = json.NewEncoder(w).Encode(review)
}

func (s *reviewServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.uids...)
	sort.Strings(out)
	return out
}

func testReviews() []Review {
	var out []Review
	for _, uid := range []string{"a", "b", "c"} {
		body, _ := json.Marshal(admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-" + uid)}})
		out = append(out, Review{Webhook: "w", Path: "/validate/w", Type: route.Validating, UID: types.UID("uid-" + uid), Body: body})
	}
	return out
}

// The interleaved load sends each server the same reviews, half the requests
// each, and stops at the request bound, in both modes.
func TestRunInterleavedSplitsRequestsEvenly(t *testing.T) {
	a, b := &reviewServer{}, &reviewServer{}
	sa, sb := httptest.NewTLSServer(a), httptest.NewTLSServer(b)
	defer sa.Close()
	defer sb.Close()
	client := sa.Client() // httptest serves one certificate for every server
	for _, o := range []LoadOptions{
		{Concurrency: 4, Requests: 60, Duration: time.Minute},
		{Concurrency: 4, Rate: 2000, Requests: 60, Duration: time.Minute},
	} {
		a.uids, b.uids = nil, nil
		results, err := RunInterleaved(context.Background(), client, []string{sa.URL, sb.URL}, testReviews(), o)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range results {
			if r.Requests != 30 || r.ErrorCount() != 0 || r.Verdicts["allowed"] != 30 || r.Latency[route.Validating].Count() != 30 {
				t.Errorf("rate %v, server %d: %d requests, errors %v, verdicts %v", o.Rate, i, r.Requests, r.Errors, r.Verdicts)
			}
		}
		gotA, gotB := a.seen(), b.seen()
		if len(gotA) != 30 || len(gotB) != 30 {
			t.Fatalf("rate %v: servers saw %d and %d reviews", o.Rate, len(gotA), len(gotB))
		}
		for i := range gotA {
			if gotA[i] != gotB[i] {
				t.Fatalf("rate %v: the servers saw different reviews", o.Rate)
			}
		}
	}
}

// A UID that does not match the review is counted as an error, not a
// verdict.
func TestRunLoadCountsWrongAnswers(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"response":{"uid":"someone-else","allowed":true}}`))
	}))
	defer srv.Close()
	r, err := RunLoad(context.Background(), srv.Client(), srv.URL, testReviews(), LoadOptions{Concurrency: 2, Requests: 10, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors["uid"] != 10 || r.All.Count() != 0 {
		t.Errorf("errors %v, answered %d", r.Errors, r.All.Count())
	}
	if _, err := RunLoad(context.Background(), srv.Client(), "https://192.0.2.1:443", testReviews(), LoadOptions{Concurrency: 1, Requests: 1, Duration: time.Second}); err == nil {
		t.Error("a non-loopback target must be refused")
	}
}

func TestLoadResultMerge(t *testing.T) {
	a := &LoadResult{Requests: 2, Errors: map[string]int{"uid": 1}, Verdicts: map[string]int{"allowed": 1},
		Latency: map[route.Type]*Latencies{route.Validating: {}}, All: &Latencies{}, Elapsed: time.Second}
	a.All.Add(time.Millisecond)
	a.Latency[route.Validating].Add(time.Millisecond)
	b := &LoadResult{Requests: 1, Errors: map[string]int{}, Verdicts: map[string]int{"patched": 1},
		Latency: map[route.Type]*Latencies{route.Mutating: {}}, All: &Latencies{}, Elapsed: time.Second}
	b.All.Add(3 * time.Millisecond)
	b.Latency[route.Mutating].Add(3 * time.Millisecond)
	a.Merge(b)
	if a.Requests != 3 || a.All.Count() != 2 || a.Latency[route.Mutating].Count() != 1 || a.Latency[route.Validating].Count() != 1 ||
		a.Errors["uid"] != 1 || a.Verdicts["patched"] != 1 || a.Verdicts["allowed"] != 1 || a.Elapsed != 2*time.Second {
		t.Errorf("merged: %+v", a)
	}
}
