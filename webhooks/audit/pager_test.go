package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// largePod is a stored Pod of about size bytes, as a built-in list holds it
// (no kind or apiVersion of its own).
func largePod(name string, size int) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","uid":"u-%s"},"spec":{"containers":[{"name":"app","image":"i",`+
		`"env":[{"name":"BLOB","value":%q}]}]}}`, name, name, strings.Repeat("x", size))
}

func testPager(t *testing.T, server *httptest.Server) *Pager {
	t.Helper()
	p, err := NewPager(&rest.Config{Host: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPagerDecodesAsTheResponseStreams: the pager hands each listed object
// to visit as soon as it is decoded, before the API server has sent the
// next one, so the audit holds one object at a time, not a page. The fake
// API server sends the second object only once the first was visited: a
// pager that read the whole page first never sees it (the test's deadline
// then fails it).
func TestPagerDecodesAsTheResponseStreams(t *testing.T) {
	visited := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[%s`, largePod("a", 1<<20))
		w.(http.Flusher).Flush()
		select {
		case <-visited:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, `,%s]}`, largePod("b", 10))
	}))
	defer server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var names []string
	err := testPager(t, server).Each(ctx, List{GVR: podsGVR, Kind: "Pod"}, func(obj *unstructured.Unstructured) error {
		names = append(names, obj.GetName())
		if obj.GetKind() != "Pod" || obj.GetAPIVersion() != "v1" {
			t.Errorf("object %s is a %s %s, want the list's Pod v1", obj.GetName(), obj.GetAPIVersion(), obj.GetKind())
		}
		if len(names) == 1 {
			close(visited)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Each: %v (a pager that waits for the whole page never gets it)", err)
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("visited %v, want a and b", names)
	}
}

// TestPagerSizesPagesByBytes: the first page asks for a few objects, each
// further page for about PageBytes of objects of the size the previous page
// had (at most PageSize), and continue tokens are followed wherever the
// list puts its metadata (a custom resource list puts it after the items).
func TestPagerSizesPagesByBytes(t *testing.T) {
	const objectBytes = 1 << 20
	var mu sync.Mutex
	var limits []int64
	var itemBytes []int
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, _ := strconv.ParseInt(r.URL.Query().Get("limit"), 10, 64)
		page, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		mu.Lock()
		limits = append(limits, limit)
		mu.Unlock()
		var items []string
		for i := 0; i < int(min(limit, 2)); i++ {
			item := largePod(fmt.Sprintf("p%d-%d", page, i), objectBytes)
			items = append(items, item)
			mu.Lock()
			itemBytes = append(itemBytes, len(item))
			mu.Unlock()
		}
		cont := ""
		if page < 2 {
			cont = strconv.Itoa(page + 1)
		}
		fmt.Fprintf(w, `{"apiVersion":"v1","items":[%s],"kind":"PodList","metadata":{"continue":%q}}`, strings.Join(items, ","), cont)
	}))
	defer server.Close()
	p := testPager(t, server)
	p.PageSize = 500
	n := 0
	if err := p.Each(context.Background(), List{GVR: podsGVR, Kind: "Pod"}, func(*unstructured.Unstructured) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	mean := int64(itemBytes[0]+itemBytes[1]) / 2
	want := []int64{firstPageSize, PageBytes / mean, PageBytes / mean}
	if !slices.Equal(limits, want) || n != 6 {
		t.Errorf("limits %v over %d objects, want %v over 6", limits, n, want)
	}
}

// TestScanTellsAListRefusalFromAVisitError: a resource the client may not
// list is skipped and named; an error of visit, even a 403 (a report write
// refused in a Terminating namespace), is no list refusal: it ends the scan
// as an error, never marking the resource "not allowed to list" and leaving
// its other objects unaudited.
func TestScanTellsAListRefusalFromAVisitError(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/deployments") {
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no")).ErrStatus)
			return
		}
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[%s,%s]}`, largePod("a", 1), largePod("b", 1))
	}))
	defer server.Close()
	s := newTestScanner(t, nil)
	s.pager = testPager(t, server)
	pods := Target{GVR: podsGVR, Kind: "Pod", Namespaced: true}
	deployments := Target{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}

	stats, err := s.Scan(context.Background(), []Target{deployments, pods}, func(Result) error { return nil })
	if err != nil || len(stats.Forbidden) != 1 || stats.Forbidden[0] != deployments || stats.Objects != 2 {
		t.Errorf("Scan() = %+v, %v; want deployments not allowed, both pods reviewed", stats, err)
	}

	refused := apierrors.NewForbidden(schema.GroupResource{Group: "wgpolicyk8s.io", Resource: "policyreports"}, "r", errors.New("namespace is being terminated"))
	stats, err = s.Scan(context.Background(), []Target{pods}, func(Result) error { return refused })
	if !errors.Is(err, refused) || len(stats.Forbidden) != 0 {
		t.Errorf("Scan() with a visit refused = %+v, %v; want the visit's error, and no resource named not allowed", stats, err)
	}
	var listErr *ListError
	if errors.As(err, &listErr) {
		t.Errorf("the visit's error came back as a list error: %v", err)
	}
}
