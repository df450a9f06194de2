package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// deepScopeHdfsCluster is an HdfsCluster whose one CredentialsScope holder sits
// under spec.clusterConfig.extensions, nested so that its services list is at
// the given level (the object itself is level 1). It returns the field path of
// services[0].
func deepScopeHdfsCluster(ns, name string, servicesLevel int, service string) (*unstructured.Unstructured, string) {
	var v any = map[string]any{
		"secretClass": "tls",
		"scope":       map[string]any{"services": []any{service}},
	}
	path := "scope.services[0]"
	// spec is level 2, clusterConfig 3, extensions 4, the holder at
	// servicesLevel-2.
	for level := servicesLevel - 2; level > 4; level-- {
		v = map[string]any{"x": v}
		path = "x." + path
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hdfs.kubedoop.dev/v1alpha1",
		"kind":       "HdfsCluster",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"clusterConfig": map[string]any{"extensions": v}},
	}}
	return obj, "spec.clusterConfig.extensions." + path
}

// TestScopeAtTheAPIServersDepth: "at any depth" is any depth the API server
// accepts (docs/secret-scope.md, "Edges"). A CredentialsScope far past the
// 64 levels at which the walk once stopped is read through the real API
// server, a spliced name is never admitted at any depth the API server takes
// (near the limit the review itself cannot be encoded or decoded, and the
// webhook's failure policy Fail refuses the request), and past its JSON
// nesting limit of 10000 the API server refuses the object itself.
func TestScopeAtTheAPIServersDepth(t *testing.T) {
	e := requireCluster(t)
	ctx := context.Background()
	ns := testNamespace(t, e, t.Name(), nil, nil)

	const deep = 9000
	valid, _ := deepScopeHdfsCluster(ns, "deep-valid", deep, "web")
	if err := e.client.Create(ctx, valid); err != nil {
		t.Fatalf("a valid CredentialsScope with its services at level %d: %v", deep, err)
	}
	spliced, field := deepScopeHdfsCluster(ns, "deep-spliced", deep, "web,node")
	webhook, causes := liveCauses(t, e.client.Create(ctx, spliced))
	if want := "ScopeNameHasDelimiter@" + field; webhook != "secret-scope" || strings.Join(causes, " ") != want {
		t.Errorf("spliced name at level %d: %s %.200v, want secret-scope %.200s", deep, webhook, causes, want)
	}

	// Up to the limit: a spliced name is never admitted, whichever layer
	// refuses it; record the deepest level at which a valid one is admitted
	// and at which gatehouse itself names the splice.
	deepestValid, deepestNamed := 0, 0
	for level := 9990; level <= 10000; level++ {
		obj, _ := deepScopeHdfsCluster(ns, fmt.Sprintf("valid-%d", level), level, "web")
		if err := e.client.Create(ctx, obj); err == nil {
			deepestValid = level
		} else {
			t.Logf("valid, services list at level %d: refused: %.300v", level, err)
		}
		obj, field := deepScopeHdfsCluster(ns, fmt.Sprintf("spliced-%d", level), level, "web,node")
		err := e.client.Create(ctx, obj)
		if err == nil {
			t.Fatalf("a spliced name with its services at level %d was admitted", level)
		}
		var status *apierrors.StatusError
		if errors.As(err, &status) && status.Status().Details != nil {
			for _, c := range status.Status().Details.Causes {
				if string(c.Type) == "ScopeNameHasDelimiter" && c.Field == field {
					deepestNamed = level
				}
			}
		}
	}
	// Past 10000 levels the client cannot even encode the object, so the
	// body is written by hand: the API server's decoder refuses it before
	// any admission.
	body := `{"apiVersion":"hdfs.kubedoop.dev/v1alpha1","kind":"HdfsCluster","metadata":{"name":"too-deep"},"spec":` +
		strings.Repeat(`{"x":`, 9999) + `{}` + strings.Repeat(`}`, 9999) + `}`
	httpClient, err := rest.HTTPClientFor(e.config)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(e.config.Host, "/") + "/apis/hdfs.kubedoop.dev/v1alpha1/namespaces/" + ns + "/hdfsclusters"
	resp, err := httpClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode < 400 || !strings.Contains(string(reply), "max depth") {
		t.Errorf("an object nested 10001 levels deep: %d %.300s, want the API server to refuse its depth", resp.StatusCode, reply)
	}
	t.Logf("services list at level: deepest admitted when valid %d, deepest denied by secret-scope naming the splice %d",
		deepestValid, deepestNamed)
	if deepestValid > deepestNamed {
		t.Errorf("a valid scope is admitted at level %d, but a spliced one is named only up to level %d", deepestValid, deepestNamed)
	}
}
