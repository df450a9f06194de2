// Package perf measures gatehouse: a corpus of AdmissionReviews built from the
// policies' golden fixtures, a load generator that replays it over HTTPS
// against `gatehouse serve` and a controller-runtime floor server, readings of
// the servers' CPU and memory from /proc, and create/delete runs through a
// local control plane with and without gatehouse's webhooks (and with the
// ValidatingAdmissionPolicies in vap/), and a mixed workload of a cluster's
// everyday writes (mixed.go) with what of it reaches gatehouse (reach.go).
// cmd/gatehouse-load runs it all; `make bench` calls it and writes
// docs/performance.md.
package perf

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/gatehouse-dev/gatehouse/webhooks/route"
)

// Review is one AdmissionReview of the corpus: a fixture object sent as a
// CREATE to one webhook that intercepts it.
type Review struct {
	Webhook string
	Path    string
	Type    route.Type
	// Fixture is the fixture file relative to the repository root, Outcome
	// the verdict ("pass" or "fail") it expects from its own policy.
	Fixture string
	Outcome string
	UID     types.UID
	// Body is the AdmissionReview as the API server sends it.
	Body []byte
}

// Corpus is every review built from the fixtures, with the webhooks of the
// registry that no fixture reaches.
type Corpus struct {
	Reviews   []Review
	Uncovered []string
}

// ByWebhook counts the reviews per webhook.
func (c *Corpus) ByWebhook() map[string]int {
	out := map[string]int{}
	for _, r := range c.Reviews {
		out[r.Webhook]++
	}
	return out
}

// Sizes returns the minimum, median and maximum body size in bytes.
func (c *Corpus) Sizes() (minSize, median, maxSize int) {
	if len(c.Reviews) == 0 {
		return 0, 0, 0
	}
	sizes := make([]int, len(c.Reviews))
	for i, r := range c.Reviews {
		sizes[i] = len(r.Body)
	}
	sort.Ints(sizes)
	return sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1]
}

// Fixture is one golden fixture object read from policies/*/testdata.
type Fixture struct {
	File    string // relative to the repository root
	Outcome string // pass or fail
	Object  map[string]any
}

// ReadFixtures reads every pass and fail fixture under repo/policies: the
// *.yaml files in a directory named pass or fail below a testdata directory
// (mutated/ holds expected outputs, fuzz/ seeds; neither is a request).
func ReadFixtures(repo string) ([]Fixture, error) {
	var out []Fixture
	root := filepath.Join(repo, "policies")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Ext(path) != ".yaml" {
			return nil
		}
		outcome := filepath.Base(filepath.Dir(path))
		rel, err := filepath.Rel(repo, path)
		if err != nil {
			return err
		}
		if (outcome != "pass" && outcome != "fail") || !strings.Contains(filepath.ToSlash(rel), "/testdata/") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if obj == nil {
			return nil
		}
		out = append(out, Fixture{File: filepath.ToSlash(rel), Outcome: outcome, Object: obj})
		return nil
	})
	return out, err
}

// clusterScoped are the kinds of the fixtures that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "StorageClass": true, "PriorityClass": true,
	"DependencyGroup": true, "OperatorHarness": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// Build turns every fixture into one CREATE review per webhook of registry
// that intercepts it, routed as `gatehouse check` and the rendered webhook
// configurations route it (namespace opt-in aside: the server never sees the
// namespace, so opt-in webhooks get every object of their kinds). Objects
// are dressed as the API server sends them (Dress). A webhook no fixture
// reaches is listed in Uncovered, not an error.
func Build(fixtures []Fixture, registry []route.Definition, opts route.Options) (*Corpus, error) {
	return build(fixtures, registry, opts, Dress)
}

func build(fixtures []Fixture, registry []route.Definition, opts route.Options, dress func(map[string]any, int) (map[string]any, error)) (*Corpus, error) {
	c := &Corpus{}
	for i, fx := range fixtures {
		obj, err := dress(fx.Object, i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fx.File, err)
		}
		gvk := schema.FromAPIVersionAndKind(stringAt(obj, "apiVersion"), stringAt(obj, "kind"))
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		namespace := stringAt(meta0(obj), "namespace")
		if namespace == "" && !clusterScoped[gvk.Kind] {
			namespace = "perf"
			meta0(obj)["namespace"] = namespace
		}
		name := stringAt(meta0(obj), "name")
		for _, def := range registry {
			if !def.Intercept.Matches(admissionregistrationv1.Create, gvr, "", opts) || !def.Intercept.ObjectMatches(namespace, name, opts) {
				continue
			}
			uid := types.UID(fmt.Sprintf("perf-%04d-%s", i, def.Name))
			body, err := reviewBody(uid, gvk, gvr, namespace, name, obj)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fx.File, err)
			}
			c.Reviews = append(c.Reviews, Review{
				Webhook: def.Name, Path: def.Path, Type: def.Type,
				Fixture: fx.File, Outcome: fx.Outcome, UID: uid, Body: body,
			})
		}
	}
	counts := c.ByWebhook()
	for _, def := range registry {
		if counts[def.Name] == 0 {
			c.Uncovered = append(c.Uncovered, def.Name)
		}
	}
	return c, nil
}

func reviewBody(uid types.UID, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, namespace, name string, obj map[string]any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	kind := metav1.GroupVersionKind(gvk)
	resource := metav1.GroupVersionResource(gvr)
	options, err := json.Marshal(metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		return nil, err
	}
	dryRun := false
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: uid, Kind: kind, Resource: resource, RequestKind: &kind, RequestResource: &resource,
			Name: name, Namespace: namespace, Operation: admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{
				Username: "system:serviceaccount:kube-system:perf",
				UID:      "5a3c2d1e-0000-4000-8000-000000000001",
				Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"},
			},
			Object:  runtime.RawExtension{Raw: raw},
			DryRun:  &dryRun,
			Options: runtime.RawExtension{Raw: options},
		},
	}
	return json.Marshal(review)
}

func meta0(obj map[string]any) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
