package e2e

// The optional component deploy/helmetica-crds (generated from
// api/helmetica by `make crds`) must define helmetica's CRDs as helmetica's
// public implementation does: same group, kind, scope, versions and field
// types. The facts are kept in e2e/testdata/helmetica-crds/upstream-facts.txt.

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// renderHelmeticaCRDs renders an overlay that includes the component, as a
// cluster admin would (testdata/helmetica-crds/install).
func renderHelmeticaCRDs(t *testing.T) *deployRender {
	t.Helper()
	return renderDeploy(t, "testdata/helmetica-crds/install")
}

// crdFacts flattens CRDs into the lines of upstream-facts.txt.
func crdFacts(crds []apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	var walk func(crd, version, path string, s apiextensionsv1.JSONSchemaProps, required bool)
	walk = func(crd, version, path string, s apiextensionsv1.JSONSchemaProps, required bool) {
		typ := s.Type
		if typ == "" {
			typ = "-"
		}
		line := fmt.Sprintf("%s %s %s %s", crd, version, path, typ)
		if required {
			line += " required"
		}
		out = append(out, line)
		var keys []string
		for k := range s.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			child := k
			if path != "." {
				child = path + "." + k
			}
			walk(crd, version, child, s.Properties[k], slices.Contains(s.Required, k))
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(crd, version, path+"[]", *s.Items.Schema, false)
		}
	}
	slices.SortFunc(crds, func(a, b apiextensionsv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	for _, crd := range crds {
		out = append(out, fmt.Sprintf("%s crd group=%s kind=%s scope=%s", crd.Name, crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope))
		for _, v := range crd.Spec.Versions {
			status := v.Subresources != nil && v.Subresources.Status != nil
			out = append(out, fmt.Sprintf("%s %s served=%t storage=%t status=%t", crd.Name, v.Name, v.Served, v.Storage, status))
			walk(crd.Name, v.Name, ".", *v.Schema.OpenAPIV3Schema, false)
		}
	}
	return out
}

func TestHelmeticaCRDsMatchUpstream(t *testing.T) {
	raw, err := os.ReadFile("testdata/helmetica-crds/upstream-facts.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	got := crdFacts(renderHelmeticaCRDs(t).crds)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for _, line := range want {
			if !slices.Contains(got, line) {
				t.Errorf("missing: %s", line)
			}
		}
		for _, line := range got {
			if !slices.Contains(want, line) {
				t.Errorf("not upstream: %s", line)
			}
		}
		if !t.Failed() {
			t.Error("same facts in another order")
		}
	}
}
