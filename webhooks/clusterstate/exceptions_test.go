package clusterstate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	exceptionsv1alpha1 "github.com/gatehouse-dev/gatehouse/api/exceptions/v1alpha1"
	"github.com/gatehouse-dev/gatehouse/policies"
	"github.com/gatehouse-dev/gatehouse/policies/exception"
)

// lines is a logger that keeps its messages.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(_, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.got = append(l.got, args)
	}, funcr.Options{})
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// waitFor polls cond until it holds, failing the test after a minute: the
// informers deliver on their own goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s", what)
		}
	}
}

func clusterException(name, code string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": exceptionsv1alpha1.SchemeGroupVersion.String(), "kind": exceptionsv1alpha1.KindClusterException,
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"match":    []any{map[string]any{"namespaces": []any{"team-a"}}},
			"webhooks": []any{"secret-scope"}, "codes": []any{code}, "reason": "r",
			"expires": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}}
}

func fakeExceptions(t *testing.T, served bool, objs ...runtime.Object) (*CachedExceptions, *dynamicfake.FakeDynamicClient, *lines) {
	t.Helper()
	disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	if served {
		list := &metav1.APIResourceList{GroupVersion: exceptionsv1alpha1.SchemeGroupVersion.String()}
		for _, gvr := range exceptionResources {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: gvr.Resource})
		}
		disc.Resources = []*metav1.APIResourceList{list}
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		exceptionResources[0]: "ExceptionList", exceptionResources[1]: "ClusterExceptionList",
	}, objs...)
	log := &lines{}
	return newCachedExceptions(client, disc, exception.Options{}, log.logger()), client, log
}

func start(t *testing.T, c *CachedExceptions) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
}

func excuses(c *CachedExceptions, code policies.Code) bool {
	f := policies.Denial(code, field.NewPath("spec"), "v", "m")
	_, ok := c.Exceptions().Match(exception.Subject{Namespace: "team-a", Kind: schema.GroupKind{Kind: "Pod"}, Name: "web"}, time.Now()).Excuse("secret-scope", f)
	return ok
}

// TestCachedExceptionsWithoutCRDs: without the exception CRDs the view
// starts, says so once, and excuses nothing.
func TestCachedExceptionsWithoutCRDs(t *testing.T) {
	c, _, log := fakeExceptions(t, false)
	start(t, c)
	waitFor(t, "logged", func() bool { return len(log.all()) > 0 })
	if got := log.all(); len(got) != 1 || !strings.Contains(got[0], "not installed") {
		t.Errorf("log %q, want one line saying the CRDs are not installed", got)
	}
	if c.Exceptions() != nil {
		t.Error("an index without the CRDs")
	}
	if !c.Synced() {
		t.Error("not synced without the CRDs: audit would wait for exceptions that cannot exist")
	}
}

// TestCachedExceptionsFollowTheCluster: the index holds the stored
// exceptions once synced, and a change is in the next read.
func TestCachedExceptionsFollowTheCluster(t *testing.T) {
	c, client, _ := fakeExceptions(t, true, clusterException("scope-migration", "ScopeEntryEmpty"))
	if c.Exceptions() != nil || c.Synced() {
		t.Error("an index, or synced, before the informers synced")
	}
	start(t, c)
	waitFor(t, "synced", func() bool { return c.Exceptions() != nil })
	if !excuses(c, "ScopeEntryEmpty") {
		t.Fatal("the stored exception does not excuse")
	}
	if _, err := client.Resource(exceptionResources[1]).Update(context.Background(), clusterException("scope-migration", "ScopeDelimiter"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "rebuilt", func() bool { return excuses(c, "ScopeDelimiter") })
	if excuses(c, "ScopeEntryEmpty") {
		t.Error("the code the update removed still excuses")
	}
	before := c.Exceptions()
	if c.Exceptions() != before {
		t.Error("the index was rebuilt without a change")
	}
}
